"""The commands agents run on every tool use, answered without the command-line parser.

``detente claim status ID --json`` and ``detente claim list --json`` written exactly so
(``--json`` anywhere, no other option), and ``detente claim open ... --json`` with only
its own options, each written plainly (:func:`_open_args`), skip typer and click:
importing them and building the ``claim`` group costs more CPU than the read itself.
:func:`answer` runs the very body the parsed command runs (:mod:`detente.cli.claim_reads`,
:func:`detente.cli.claim_open_body.open_body`) with the same default settings; any other
command line gets None and goes through the parser, which then validates it as usual.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from detente.cli.claim_open_body import OpenArgs

__all__ = ["answer", "finish"]

#: ``claim open``'s options: ``flag -> (OpenArgs field, kind)``; ``many`` repeats,
#: ``one`` may be given once, ``int`` once as digits, ``flag`` takes no value.
_OPEN_OPTIONS = {
    "--objective": ("objective", "one"),
    "-o": ("objective", "one"),
    "--path": ("paths", "many"),
    "-p": ("paths", "many"),
    "--module": ("modules", "many"),
    "--symbol": ("symbols", "many"),
    "--contract": ("contracts", "many"),
    "--test": ("tests", "many"),
    "--deploy": ("deploy", "one"),
    "--memory": ("memory", "many"),
    "--ttl": ("ttl", "int"),
    "--base": ("base", "one"),
    "--agent": ("agent", "one"),
    "--session": ("session_id", "one"),
    "--worktree-dir": ("worktree_dir", "one"),
    "--no-worktree": ("no_worktree", "flag"),
    "--draft": ("draft", "flag"),
}


def answer(args: Sequence[str]) -> int | None:
    """The exit status of ``args`` when it is one of the fast forms, else None.

    Args:
        args: the command line after the program name.

    Returns:
        The command's exit status (its JSON document is printed), or None when ``args``
        is not exactly ``claim status ID --json`` or ``claim list --json``.
    """
    if "--json" not in args:
        return None
    # A one-shot read builds a few hundred modules' objects and one projection, all alive
    # until exit: the cycle collector would only walk them over and over (5% of the call).
    gc.disable()
    rest = [a for a in args if a != "--json"]
    if rest[:2] == ["claim", "status"] and len(rest) == 3 and not rest[2].startswith("-"):
        from detente.cli.claim_reads import status_body

        body = status_body(rest[2])
    elif rest == ["claim", "list"]:
        from detente.cli.claim_reads import list_body

        body = list_body()
    elif rest[:2] == ["claim", "open"] and (opened := _open_args(rest[2:])) is not None:
        from detente.cli.claim_open_body import open_body

        body = open_body(opened)
    else:
        gc.enable()
        return None
    from detente.cli.session import Settings, execute

    return execute(Settings(json=True), body)


def _open_args(args: Sequence[str]) -> OpenArgs | None:
    """``claim open``'s options (``--json`` already taken out), or None for anything the
    parser should judge: an option it does not know (a global one, ``--help``), a value
    that looks like an option or is missing, a single option given twice, a ``--ttl``
    that is not digits, no ``--objective``. ``--opt value`` and ``--opt=value`` are
    read; ``--session`` defaults to ``$DETENTE_SESSION`` as the parser's does."""
    from pathlib import Path

    from detente.cli.claim_open_body import OpenArgs

    found: dict[str, object] = {}
    many: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        flag, eq, value = args[i].partition("=")
        spec = _OPEN_OPTIONS.get(flag)
        if spec is None or (eq and (spec[1] == "flag" or not flag.startswith("--"))):
            return None
        name, kind = spec
        if kind == "flag":
            found[name] = True
            i += 1
            continue
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        i += 1
        if value.startswith("-"):
            return None
        if kind == "many":
            many.setdefault(name, []).append(value)
        elif name in found or not _fits(kind, value):
            return None
        else:
            found[name] = int(value) if kind == "int" else value
    if "objective" not in found:
        return None
    if "worktree_dir" in found:
        found["worktree_dir"] = Path(str(found["worktree_dir"]))
    found.setdefault("session_id", os.environ.get("DETENTE_SESSION") or None)
    return OpenArgs(**found, **{k: tuple(v) for k, v in many.items()})  # type: ignore[arg-type]


def _fits(kind: str, value: str) -> bool:
    return kind != "int" or (value.isascii() and value.isdigit() and len(value) < 12)


def finish(status: int) -> NoReturn:
    """Exit with ``status`` once the answer is out, skipping the interpreter's teardown.

    The store is closed and the document printed by then; what is left is freeing every
    module and object one by one (8% of the call). The ordinary exit is kept when output
    cannot be flushed (the interpreter then reports it as usual) or when another thread
    still runs (its ``atexit`` clean-up must run).
    """
    import threading

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(status)
    if threading.active_count() == 1:
        os._exit(status)
    sys.exit(status)
