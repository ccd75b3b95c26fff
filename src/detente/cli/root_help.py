"""The text of ``detente --help``, made from plain data (no typer, no rich).

``detente --help`` is served from here without importing the command modules, typer or
rich (:func:`detente.cli.main.main` answers it before anything else is imported), and the
root group prints the same text when help is asked with other options around it, so both
paths agree. Each subcommand's own help (``detente claim --help``) is typer's.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["GLOBAL_OPTIONS", "GlobalOption", "root_help"]


@dataclass(frozen=True)
class GlobalOption:
    """One option of ``detente [OPTIONS] COMMAND`` (also accepted after the command).

    Attributes:
        flags: the option's spellings, long first (``("--verbose", "-v")``).
        help: one sentence.
        metavar: the value's name, or None for a flag.
        envvar: the environment variable that sets it, if any.
    """

    flags: tuple[str, ...]
    help: str
    metavar: str | None = None
    envvar: str | None = None


#: The global options, in help order (the root callback declares the same ones).
GLOBAL_OPTIONS = (
    GlobalOption(
        ("--server",),
        "detente server URL (default: http://127.0.0.1:7420 if it serves this repository, "
        "else local mode).",
        metavar="URL",
        envvar="DETENTE_URL",
    ),
    GlobalOption(("--repo",), "A directory inside the repository (default: cwd).", "PATH"),
    GlobalOption(
        ("--local",),
        "Work in-process on the repository's own store; never use a server (overrides "
        "DETENTE_URL; an explicit --server with --local is an error).",
        envvar="DETENTE_LOCAL",
    ),
    GlobalOption(("--json",), "Print one machine-readable JSON document on stdout."),
    GlobalOption(("--verbose", "-v"), "Say which server or store is used."),
    GlobalOption(("--version", "-V"), "Print detente's version and exit."),
    GlobalOption(("--help", "-h"), "Show this message and exit."),
)

_SUMMARY = "Coordinate AI coding agents in one git repository: claims, leases, revisions, evidence."
_ANYWHERE = (
    "--server, --repo, --local, --json and --verbose may also follow the command "
    "(a command's own option of the same name wins: `claim list --repo NAME`)."
)


def _width() -> int:
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return max(40, min(int(columns), 100))
    return max(40, min(shutil.get_terminal_size((80, 24)).columns, 100))


def _rows(rows: Sequence[tuple[str, str]], width: int) -> list[str]:
    """Two columns: the name, then its help wrapped under itself."""
    left = max(len(name) for name, _ in rows) + 4
    lines: list[str] = []
    for name, text in rows:
        wrapped = textwrap.wrap(text, max(20, width - left)) or [""]
        lines.append(f"  {name.ljust(left - 2)}{wrapped[0]}")
        lines.extend(" " * left + more for more in wrapped[1:])
    return lines


def root_help(commands: Sequence[tuple[str, str]], exit_codes: str) -> str:
    """The text of ``detente --help``.

    Args:
        commands: ``(name, one-line help)`` of each top-level command, in help order.
        exit_codes: the exit code table (Markdown ``**`` emphasis is dropped).

    Returns:
        The help text, ending with a newline; lines fit ``$COLUMNS`` (at most 100).
    """
    width = _width()
    options = []
    for option in GLOBAL_OPTIONS:
        name = ", ".join(option.flags) + (f" {option.metavar}" if option.metavar else "")
        text = option.help + (f" [env var: {option.envvar}]" if option.envvar else "")
        options.append((name, text))
    out = ["Usage: detente [OPTIONS] COMMAND [ARGS]...", "", *textwrap.wrap(_SUMMARY, width)]
    out += ["", "Options:", *_rows(options, width)]
    out += ["", "Commands:", *_rows(commands, width), ""]
    out += textwrap.wrap(_ANYWHERE, width)
    for paragraph in exit_codes.replace("**", "").split("\n\n"):
        out += ["", *textwrap.wrap(" ".join(paragraph.split()), width)]
    out += ["", "Run `detente COMMAND --help` for a command's options."]
    return "\n".join(out) + "\n"
