"""``detente claim open``: post the claim; the service resolves the base and creates the
claim's branch and worktree inside the same command (see ``workspace.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.cli.render import EXIT_OVERLAP

if TYPE_CHECKING:
    from rich.console import Console

    from detente.cli.workspace import OpenResult

__all__ = ["NoWorktreeOpt", "WorktreeDirOpt", "claim_app"]

#: ``--no-worktree`` of the commands that open a claim (open, takeover).
NoWorktreeOpt = Annotated[
    bool, typer.Option("--no-worktree", help="Do not create a worktree and branch.")
]
#: ``--worktree-dir`` of the commands that open a claim (open, takeover).
WorktreeDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--worktree-dir",
        help="Worktree directory (default: REPO/../REPO.worktrees/SLUG-RAND).",
    ),
]

#: The ``detente claim`` group; ``claims.py`` adds the other commands to it.
claim_app = typer.Typer(
    help="Claim paths before editing; keep the lease alive; release with evidence.",
    no_args_is_help=True,
)


@claim_app.command("open")
def open_(
    ctx: typer.Context,
    objective: Annotated[str, typer.Option("--objective", "-o", help="What the claim is for.")],
    path: Annotated[
        list[str] | None,
        typer.Option("--path", "-p", help="Path pattern to claim (repeatable): src/x/**, a.py"),
    ] = None,
    module: Annotated[
        list[str] | None,
        typer.Option(
            "--module",
            help="Module to claim (repeatable): a Python dotted name (detente.storage), a Go "
            "package or JS/TS directory (internal/storage); it covers its files and submodules.",
        ),
    ] = None,
    symbol: Annotated[
        list[str] | None,
        typer.Option(
            "--symbol",
            help="Symbol to claim (repeatable): path::Qualified.name (src/x.py::Retry.backoff), "
            "or a bare qualified name resolved at the base commit (ambiguous: exit 2 with "
            "the candidates).",
        ),
    ] = None,
    contract: Annotated[
        list[str] | None,
        typer.Option(
            "--contract", help="Expected contract change: TYPE:AREA:CHANGE (or just AREA)."
        ),
    ] = None,
    test: Annotated[
        list[str] | None, typer.Option("--test", help="Test this claim is responsible for.")
    ] = None,
    deploy: Annotated[
        str | None, typer.Option("--deploy", help="Deployment responsibility.")
    ] = None,
    memory: Annotated[
        list[str] | None, typer.Option("--memory", help="Memory file it changes: PATH[#section].")
    ] = None,
    ttl: Annotated[int, typer.Option("--ttl", help="Lease TTL in seconds.")] = 300,
    base: Annotated[
        str, typer.Option("--base", help="Base revision, resolved now to a commit OID.")
    ] = "HEAD",
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Agent name (default: $DETENTE_AGENT, the --session's registered name, or $USER).",
        ),
    ] = None,
    session_id: Annotated[
        str | None,
        typer.Option(
            "--session",
            envvar="DETENTE_SESSION",
            help="Agent session id (see `detente agents register`).",
        ),
    ] = None,
    no_worktree: NoWorktreeOpt = False,
    worktree_dir: WorktreeDirOpt = None,
    draft: Annotated[
        bool,
        typer.Option(
            "--draft",
            help="Record a draft only: no lease, no worktree, not checked for overlap "
            "until `detente claim announce`.",
        ),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Open a claim: resolve the base, post the claim, create its worktree and branch.

    Exits 6 when the claim overlaps another live claim and is negotiating (not active);
    the overlaps (with a witness path) and the resolution options are printed. The
    worktree is created either way (the claim holds its lease); edit contested paths only
    once the negotiation is resolved.
    """

    def body(session: Session) -> int:
        from detente.cli import workspace
        from detente.domain.claims.declared import Declared

        repo_name = session.repo_name  # connects: local mode or a server
        base_commit = base
        if session.client.mode != "local":
            # A server's checkout has its own HEAD: name the commit this checkout means.
            from detente.vcs import resolve_commit

            base_commit = resolve_commit(session.settings.repo, base)
        seed = workspace.claim_seed(
            repo=repo_name,
            objective=objective,
            base_commit=base_commit,
            agent=workspace.agent_name(session.client, agent, session_id),
            session=session_id,
            paths=path or (),
            modules=module or (),
            symbols=symbol or (),
            contracts=[workspace.contract_seed(c) for c in contract or ()],
            tests=test or (),
            declared=Declared(deployment_responsibility=deploy),
            memory=memory or (),
            ttl=ttl,
            draft=draft,
        )
        result = workspace.open_claim(
            session.client, seed, worktree=not (no_worktree or draft), worktree_dir=worktree_dir
        )
        return _report_open(session, result)

    run(ctx, json_flag, body)


def _report_open(session: Session, result: OpenResult) -> int:
    from detente.cli.views import opened_options

    response = result.response
    claim = response["claim"]
    options = opened_options(response)
    worktree = result.worktree

    def text(console: Console) -> None:
        from detente.cli import views

        views.claim_view(console, claim, session.now())
        if worktree:
            console.print(
                f"  [green]worktree created[/] at base {worktree['headOid'][:12]} "
                f"on branch {worktree['branch']}"
            )
        views.contest_view(console, response, options)

    session.emit({**response, "worktree": worktree, "options": options}, text)
    return EXIT_OVERLAP if claim["status"] == "negotiating" else 0
