"""Reading MCP's stdio lines strictly: one reading, or one JSON-RPC error carrying the id.

The SDK reads a stdio line leniently in some ways and strictly in others: bytes that are
not UTF-8 become U+FFFD, ``NaN``/``Infinity`` and duplicate keys (last wins) are
accepted, while a lone surrogate escape (``"a\\ud800b"``, which JSON's grammar allows)
or a byte order mark fails the whole line, answered with ``id: null``: the client
waiting on its own id hangs. Another parser (a proxy, a log reader, the client itself)
may read such a line differently, so every one of them is refused here, before the SDK
sees it, with a JSON-RPC error that carries the request's ``id`` whenever a lenient
reading finds one (a number or a string; else ``null``, as JSON-RPC 2.0 requires):

==================================================  =======================
the line                                            error
==================================================  =======================
not UTF-8, a byte order mark, not JSON, ``NaN``,    ``-32700`` parse error
``Infinity``, ``-Infinity``
a lone surrogate in a string or key, a duplicate    ``-32600`` invalid
key, JSON that is not a JSON-RPC 2.0 message        request
==================================================  =======================

Nothing a refused line asks for is done.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable, AsyncIterator

from mcp.types import PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError as PydanticValidationError

from detente.errors import ValidationError
from detente.operations.strict_json import NOT_JSON, read_json
from mcp import types

__all__ = ["INVALID_REQUEST", "StrictLines", "line_error"]

#: JSON-RPC 2.0 "Invalid Request": valid JSON that is not a JSON-RPC message.
INVALID_REQUEST = -32600

#: What a refused line becomes for the SDK's reader: never JSON, so it fails there too
#: and the error queued for it is sent in its place (in line order).
REFUSED = "\x00\n"

_BOM = b"\xef\xbb\xbf"
_SURROGATE = re.compile("[\ud800-\udfff]")


def line_error(raw: bytes) -> JSONRPCError | None:
    """The JSON-RPC error for one stdio line (without its newline), or None to read it.

    Args:
        raw: the line's bytes.

    Returns:
        None when the line is JSON every parser reads alike
        (:func:`~detente.operations.strict_json.read_json`) and a JSON-RPC message; else
        the error, with the request's ``id`` when a lenient reading finds it.
    """
    try:
        read_json(raw)
    except ValidationError as exc:
        code = PARSE_ERROR if exc.extra.get("reading") == NOT_JSON else INVALID_REQUEST
        kind = "Parse error" if code == PARSE_ERROR else "Invalid Request"
        return _error(raw, code, f"{kind}: {exc.detail}")
    try:
        types.jsonrpc_message_adapter.validate_json(raw, by_name=False)
    except PydanticValidationError as exc:
        reasons = "; ".join(str(e.get("msg")) for e in exc.errors()[:3])
        return _error(
            raw,
            INVALID_REQUEST,
            f"Invalid Request: the line is JSON but not a JSON-RPC 2.0 message ({reasons})",
        )
    return None


def _error(raw: bytes, code: int, message: str) -> JSONRPCError:
    error = ErrorData(code=code, message=message)
    return JSONRPCError(jsonrpc="2.0", id=_lenient_id(raw), error=error)


def _lenient_id(raw: bytes) -> int | str | None:
    """The request's ``id`` as a forgiving reader finds it (None when it cannot)."""
    text = raw.removeprefix(_BOM).decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    found = doc.get("id") if isinstance(doc, dict) else None
    if isinstance(found, bool) or not isinstance(found, int | str):
        return None
    if isinstance(found, str) and _SURROGATE.search(found):
        return None  # it could not be written back as UTF-8
    return found


class StrictLines:
    """The stdin the SDK's stdio transport reads: each line as it came, or
    :data:`REFUSED` in place of a refused one, whose error waits in :attr:`errors`.

    Args:
        source: the raw stdin, line by line (bytes, each with its newline).
    """

    def __init__(self, source: AsyncIterable[bytes]) -> None:
        self._source = source
        #: Errors of refused lines, oldest first: the SDK fails on each :data:`REFUSED`
        #: in the same order, and the server answers that failure with the next one.
        self.errors: list[JSONRPCError] = []

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for raw in self._source:
            line = raw.rstrip(b"\r\n")
            error = line_error(line)
            if error is None:
                yield line.decode("utf-8") + "\n"
            else:
                self.errors.append(error)
                yield REFUSED
