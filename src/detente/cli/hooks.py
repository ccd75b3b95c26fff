"""``detente hooks install [--server BARE] [--warn]``: the git hooks of :mod:`detente.hooks`.

Without ``--server`` the ``pre-commit`` guard goes into this repository's hooks directory
(shared by all its worktrees). With ``--server BARE`` the ``pre-receive`` check goes into
the shared repository ``BARE``; it asks the detente server named by the global
``--server URL`` / ``$DETENTE_URL`` (required: a bare repository has no local store).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from detente.cli.context import JsonFlag, Session, run
from detente.errors import ValidationError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["hooks_app"]

hooks_app = typer.Typer(help="Git hooks that enforce claims.", no_args_is_help=True)


@hooks_app.command("install")
def install(
    ctx: typer.Context,
    server: Annotated[
        Path | None,
        typer.Option("--server", help="Install pre-receive in this shared (bare) repository."),
    ] = None,
    warn: Annotated[
        bool, typer.Option("--warn", help="pre-commit only prints; it never refuses.")
    ] = False,
    protect: Annotated[
        list[str] | None,
        typer.Option("--protect", help="Protected ref (repeatable) [default: HEAD's branch]."),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="Repository name on the server [default: asked]."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a hook detente did not write.")
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Install the pre-commit guard here, or the pre-receive check in --server BARE."""

    def body(session: Session) -> None:
        from detente.vcs.hook_scripts import install_local, install_server

        if server is None:
            done = install_local(session.settings.repo, warn=warn, force=force)
        else:
            url = session.settings.server or os.environ.get("DETENTE_URL")
            if not url:
                raise ValidationError(
                    "the server-side hook needs a detente server: pass the global --server URL "
                    "(or set DETENTE_URL)",
                    field="server",
                )
            repo_name = name or _served_name(session, server)
            if not repo_name:
                raise ValidationError(
                    "the server coordinates several repositories: name one with --name",
                    field="name",
                )
            done = install_server(
                server, url=url, repo_name=repo_name, protect=protect or (), force=force
            )
        data = {
            "installed": [str(p) for p in done.scripts],
            "config": dict(done.config) if done.config else {},
            "protectedRefs": [v for k, v in done.config if k == "detente.protectedRef"],
        }

        def text(console: Console) -> None:
            for path in done.scripts:
                console.print(f"installed {path}", markup=False)
            for key, value in done.config:
                console.print(f"  git config {key} {value}", markup=False)

        session.emit(data, text)

    run(ctx, json_flag, body)


def _served_name(session: Session, bare: Path) -> str | None:
    """The server's name for ``bare`` (same path), else its only repository's name."""
    served = session.client.repos()["repos"]
    for repo in served:
        if repo.get("path") and Path(str(repo["path"])).resolve() == bare.resolve():
            return str(repo["name"])
    return str(served[0]["name"]) if len(served) == 1 else None
