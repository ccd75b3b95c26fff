"""JSON text of stored rows (event payloads, projection rows), encoded with orjson.

What a store writes is parsed back before anyone uses it (the hash chain covers the
canonical JSON of :mod:`detente.eventlog.envelope`, never these bytes), so the encoder is
free to be the fastest: orjson encodes a claim record several times faster than the
standard library, which on a group-committed batch is a large share of the Python work
per command. Keys are sorted (stable rows, readable diffs) and non-ASCII text is kept as
UTF-8.
"""

from __future__ import annotations

from typing import Any

import orjson

__all__ = ["dumps_bytes", "dumps_text", "loads"]

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def dumps_bytes(value: Any) -> bytes:
    """``value`` as UTF-8 JSON, keys sorted.

    Raises:
        TypeError: ``value`` holds something JSON cannot carry (a bug of the caller).
    """
    return orjson.dumps(value, option=_OPTIONS)


def dumps_text(value: Any) -> str:
    """:func:`dumps_bytes` as text (for a ``TEXT`` column)."""
    return orjson.dumps(value, option=_OPTIONS).decode()


def loads(raw: str | bytes) -> Any:
    """The value of JSON text or bytes.

    Raises:
        ValueError: ``raw`` is not JSON (``orjson.JSONDecodeError`` is one).
    """
    return orjson.loads(raw)
