"""Logging for the server: stdlib ``logging``, one line per record, structured fields.

Modules log through ``logging.getLogger("detente.<area>")`` and pass structured fields
with ``extra={...}``; :class:`FieldsFormatter` writes them after the message as
``key=value`` pairs (logfmt: values with spaces or quotes are JSON-quoted), so a line
reads well and parses with any logfmt tool::

    2026-11-30T12:00:00.123Z WARNING detente.tasks task sweeper failed; restarting in 0.5 s
      task=sweeper restarts=1 backoff_s=0.5

(one line in the log; wrapped here).

Loggers in use: ``detente.access`` (one INFO line per HTTP request), ``detente.api``
(unexpected errors, with an incident id), ``detente.tasks`` (background task failures and
restarts), ``detente.mcp`` (tool errors), ``detente.storage`` (watch reconnects).
``detente serve --log-level`` sets the level (default ``info``).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, Final, TextIO

__all__ = ["LEVELS", "FieldsFormatter", "configure"]

#: The levels ``--log-level`` accepts.
LEVELS: Final = ("debug", "info", "warning", "error", "critical")

# Attributes every LogRecord has: anything else on a record came from ``extra``.
# ``color_message`` is uvicorn's copy of the message with terminal colour codes: the
# message itself is already on the line.
_STANDARD: Final = frozenset(
    {
        *logging.LogRecord("", 0, "", 0, "", None, None).__dict__,
        "message",
        "asctime",
        "taskName",
        "color_message",
    }
)


class FieldsFormatter(logging.Formatter):
    """``<UTC time> <LEVEL> <logger> <message> key=value ...`` (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        return f"{stamp}.{int(record.msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        safe = _printable(message)
        if safe != message:  # a request path or a name from a caller: never a raw newline
            record = logging.makeLogRecord({**record.__dict__, "msg": safe, "args": None})
        line = super().format(record)
        fields = {k: v for k, v in record.__dict__.items() if k not in _STANDARD}
        if fields:
            line += " " + " ".join(f"{k}={_value(v)}" for k, v in fields.items())
        return line

    def formatException(self, ei: Any) -> str:
        # Keep the traceback, indented, under its line: one record stays one block.
        return "\n".join("  " + line for line in super().formatException(ei).splitlines())


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if text and all(ch.isprintable() and ch not in ' "=' for ch in text):
        return text
    return json.dumps(text, ensure_ascii=False)


def configure(level: str = "info", *, stream: TextIO | None = None) -> logging.Handler:
    """Send ``detente.*`` and ``uvicorn.*`` records at ``level`` or above to ``stream``.

    Idempotent: a second call replaces the handler the first one installed.

    Args:
        level: one of :data:`LEVELS` (case-insensitive).
        stream: where lines go (default stderr: stdout may be a protocol channel).

    Returns:
        The installed handler.

    Raises:
        ValueError: an unknown level.
    """
    name = level.lower()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; one of {', '.join(LEVELS)}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(FieldsFormatter())
    handler.set_name("detente")
    for logger_name in ("detente", "uvicorn"):
        logger = logging.getLogger(logger_name)
        for old in [h for h in logger.handlers if h.get_name() == "detente"]:
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(name.upper())
        logger.propagate = False
    return handler


def _printable(text: str) -> str:
    """``text`` with every non-printable character (newline, ESC, NUL, ...) escaped as
    Python writes it (``\\n``, ``\\x1b``, ``\\x00``), so one record stays one line and
    a caller's input cannot forge another or colour a terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
