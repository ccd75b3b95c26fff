"""``detente claim open``: post the claim; the service resolves the base and creates the
claim's branch and worktree inside the same command (see ``workspace.py``).

The options are parsed here (typer); what the command does is
:func:`detente.cli.claim_open_body.open_body`, which ``claim open ... --json`` also runs
without the parser (:mod:`detente.cli.fast_reads`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from detente.cli.claim_open_body import OpenArgs, open_body
from detente.cli.context import JsonFlag, run

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

    args = OpenArgs(
        objective=objective,
        paths=tuple(path or ()),
        modules=tuple(module or ()),
        symbols=tuple(symbol or ()),
        contracts=tuple(contract or ()),
        tests=tuple(test or ()),
        deploy=deploy,
        memory=tuple(memory or ()),
        ttl=ttl,
        base=base,
        agent=agent,
        session_id=session_id,
        no_worktree=no_worktree,
        worktree_dir=worktree_dir,
        draft=draft,
    )
    run(ctx, json_flag, open_body(args))
