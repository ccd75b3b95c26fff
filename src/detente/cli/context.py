"""Global options and the one way a typer command runs: connect, act, render, exit.

Every command body receives a :class:`Session` and returns an exit status (None for 0);
:func:`run` runs it with :func:`~detente.cli.session.execute` (which renders errors, see
:mod:`detente.cli.session`) and exits with its status.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, NoReturn

import typer

from detente.cli.session import Session, Settings, execute

__all__ = ["JsonFlag", "Session", "Settings", "run", "settings"]

JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print one machine-readable JSON document on stdout.")
]


def settings(ctx: typer.Context, json_flag: bool = False) -> Settings:
    """The global settings, with a command's own ``--json`` folded in."""
    root = ctx.find_root()
    found = root.obj if isinstance(root.obj, Settings) else Settings()
    if json_flag:
        found.json = True
    return found


def run(ctx: typer.Context, json_flag: bool, body: Callable[[Session], int | None]) -> NoReturn:
    """Run a command body and exit with its status (see the module docstring)."""
    raise typer.Exit(execute(settings(ctx, json_flag), body))
