"""What ``detente claim open`` does once its options are read: :func:`open_body`.

Shared by the typer command (:mod:`detente.cli.claim_open`) and the parser-free form
``claim open ... --json`` (:mod:`detente.cli.fast_reads`), so both run the same body:
the seed built by :func:`detente.client.seeds.claim_seed` (through
:mod:`detente.cli.workspace`), the claim opened through the client (the application
layer decides; the service makes the worktree), the answer reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from detente.cli.render import EXIT_OVERLAP

if TYPE_CHECKING:
    from rich.console import Console

    from detente.cli.session import Session
    from detente.cli.workspace import OpenResult

__all__ = ["OpenArgs", "open_body"]


@dataclass(frozen=True)
class OpenArgs:
    """The options of ``detente claim open`` (see its ``--help``), as typed."""

    objective: str
    paths: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    contracts: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    deploy: str | None = None
    memory: tuple[str, ...] = ()
    ttl: int = 300
    base: str = "HEAD"
    agent: str | None = None
    session_id: str | None = None
    no_worktree: bool = False
    worktree_dir: Path | None = None
    draft: bool = False


def open_body(args: OpenArgs) -> Callable[[Session], int]:
    """The command body for :func:`detente.cli.session.execute`: open the claim, print it
    (or its JSON document), return the exit status (6 when it negotiates)."""

    def body(session: Session) -> int:
        from detente.cli import workspace
        from detente.domain.claims.declared import Declared

        repo_name = session.repo_name  # connects: local mode or a server
        base_commit = args.base
        if session.client.mode != "local":
            # A server's checkout has its own HEAD: name the commit this checkout means.
            from detente.vcs import resolve_commit

            base_commit = resolve_commit(session.settings.repo, args.base)
        seed = workspace.claim_seed(
            repo=repo_name,
            objective=args.objective,
            base_commit=base_commit,
            agent=workspace.agent_name(session.client, args.agent, args.session_id),
            session=args.session_id,
            paths=args.paths,
            modules=args.modules,
            symbols=args.symbols,
            contracts=[workspace.contract_seed(c) for c in args.contracts],
            tests=args.tests,
            declared=Declared(deployment_responsibility=args.deploy),
            memory=args.memory,
            ttl=args.ttl,
            draft=args.draft,
        )
        result = workspace.open_claim(
            session.client,
            seed,
            worktree=not (args.no_worktree or args.draft),
            worktree_dir=args.worktree_dir,
        )
        return _report_open(session, result)

    return body


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
