"""``detente mcp``: the MCP server over stdio, for Claude Code, Codex, Cursor.

Local mode (default) works in-process on the repository's own store (the SQLite file
under the git common directory, shared with every worktree, every other ``detente mcp``
and ``detente serve``); ``--server URL`` (or ``$DETENTE_URL``) sends every call to a
detente server instead. stdout is the protocol channel: errors before the server starts
go to stderr, with the exit code of ``render.EXIT_CODES``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from detente.cli.context import settings

__all__ = ["mcp_command"]


def mcp_command(
    ctx: typer.Context,
    repo: Annotated[
        Path | None,
        typer.Option("--repo", help="A directory inside the repository (default: the global one)."),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="detente server URL (default: the global --server / $DETENTE_URL, else local "
            "mode on the repository's store).",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Store URL in local mode (default: $DETENTE_STORE or the "
            "repository's SQLite file).",
        ),
    ] = None,
) -> None:
    """Serve detente's tools and resources to an MCP client over stdio.

    Configure it in your agent as the command `detente mcp` (see docs/mcp.md).
    """
    from detente.cli.render import exit_code_for
    from detente.errors import DetenteError, ValidationError

    found = settings(ctx)
    where = (repo or found.repo).absolute()
    url = server or found.server
    try:
        from detente.cli.serving import run_mcp_stdio
        from detente.client import connect, open_local

        if url and store:
            raise ValidationError(
                "--store applies to local mode only, not with --server", field="store"
            )
        client = connect(url, where, local=False) if url else open_local(where, store_url=store)
    except DetenteError as exc:
        print(f"error[{exc.code}]: {exc.detail}", file=sys.stderr)
        raise typer.Exit(exit_code_for(exc.code)) from None
    try:
        run_mcp_stdio(client)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except DetenteError as exc:  # startup_failed: the cause is the last line
        print(f"error[{exc.code}]: {exc.detail}", file=sys.stderr)
        raise typer.Exit(exit_code_for(exc.code)) from None
