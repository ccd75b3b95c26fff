"""The two reads agents run on every tool use, answered without the command-line parser.

``detente claim status ID --json`` and ``detente claim list --json`` written exactly so
(``--json`` anywhere, no other option) skip typer and click: importing them and building
the ``claim`` group costs more CPU than the read itself. :func:`answer` runs the very
body the parsed command runs (:mod:`detente.cli.claim_reads`) with the same default
settings; any other command line gets None and goes through the parser, which then
validates it as usual.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["answer", "finish"]


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
    else:
        gc.enable()
        return None
    from detente.cli.session import Settings, execute

    return execute(Settings(json=True), body)


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
