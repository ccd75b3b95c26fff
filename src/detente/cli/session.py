"""What a command body works with, and the one way it runs: connect, act, render.

Typer-free, so that a read answered without the command-line parser
(:mod:`detente.cli.fast_reads`) runs exactly the body the parsed command runs.
:func:`execute` turns a :class:`~detente.errors.DetenteError` anywhere into its problem
output and the exit status of ``render.EXIT_CODES``; anything else is reported as an
unexpected error (exit 1, traceback with ``--verbose``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from detente.cli.render import Output
from detente.errors import DetenteError

if TYPE_CHECKING:
    from rich.console import Console

    from detente.client import Client

__all__ = ["Body", "Session", "Settings", "execute"]


@dataclass
class Settings:
    """The global options (``detente [OPTIONS] COMMAND``)."""

    server: str | None = None
    repo: Path = field(default_factory=Path.cwd)
    json: bool = False
    local: bool = False
    verbose: bool = False


@dataclass
class Session:
    """What a command body works with."""

    settings: Settings
    out: Output
    client_factory: Callable[[], Client]
    _client: Client | None = None

    @property
    def client(self) -> Client:
        """The API client, connected on first use."""
        if self._client is None:
            self._client = self.client_factory()
            if self.settings.verbose and not self.out.json_mode:
                client = self._client
                where = (
                    f"local mode, in-process on the store of {client.repo_path}"
                    if client.mode == "local"
                    else f"server {client.url}"
                )
                self.out.err.print(f"detente: {where}", style="dim", markup=False)
        return self._client

    @property
    def repo_name(self) -> str:
        """The current repository's name as the server knows it."""
        from detente.errors import ValidationError

        name = self.client.repo_name
        if name is None:
            raise ValidationError(
                "cannot tell which repository this is about: run inside a git working "
                "tree or pass --repo PATH",
                field="repo",
            )
        return name

    def now(self) -> datetime:
        """The local wall clock (for lease timers only; the server decides expiry)."""
        from detente.clock import SystemClock

        return SystemClock().now()

    def emit(self, data: Mapping[str, Any], text: Callable[[Console], None]) -> None:
        """Print ``data`` (plus the connection ``mode``) as JSON, or the text view."""
        if self.out.json_mode and self._client is not None:
            data = {**data, "mode": self._client.mode}
        self.out.emit(data, text)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


#: A command body: it gets the session and returns an exit status (None for 0).
Body = Callable[[Session], "int | None"]


def execute(found: Settings, body: Body) -> int:
    """Run a command body with the global settings ``found``; return its exit status."""
    from detente.client import connect

    out = Output(json_mode=found.json, verbose=found.verbose)
    session = Session(
        found,
        out,
        lambda: connect(found.server, found.repo, local=True if found.local else None),
    )
    try:
        code = body(session) or 0
    except DetenteError as exc:
        code = out.error(exc)
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:  # a bug: say so plainly, keep the exit code contract
        if found.verbose and not found.json:
            out.err.print_exception()
        unexpected = DetenteError(f"unexpected error: {type(exc).__name__}: {exc}")
        unexpected.code = "internal_error"  # the HTTP and MCP edges' code for a bug
        code = out.error(unexpected)
    finally:
        session.close()
    return code
