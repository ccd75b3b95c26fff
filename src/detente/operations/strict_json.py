"""The one strict reading of a JSON request (an HTTP body, an MCP stdio line).

JSON that parsers read differently is refused instead of read one way here and another
way elsewhere (a proxy, a log reader, the client, the SDK):

- bytes that are not UTF-8 (a lenient decoder turns them into U+FFFD);
- a leading byte order mark (RFC 8259 section 8.1: implementations must not add one;
  some parsers skip it, others fail);
- ``NaN``, ``Infinity``, ``-Infinity`` (not JSON numbers; Python's parser takes them);
- a duplicate key in an object (first wins in some parsers, last in others);
- a lone surrogate escape (``"a\\ud800b"``): JSON's grammar allows it, but it is not a
  character, and strict parsers fail on it (checked by
  :func:`~detente.operations.unicode_text.refuse_surrogates`).

Every refusal is one ``validation_error`` whose ``reading`` says which kind:
``not_json`` (the bytes are no JSON text: a JSON-RPC parse error) or ``ambiguous``
(JSON, read differently by different parsers: a JSON-RPC invalid request).
"""

from __future__ import annotations

import json
from typing import Any

from detente.errors import ValidationError
from detente.operations.unicode_text import refuse_surrogates

__all__ = ["AMBIGUOUS", "NOT_JSON", "read_json"]

#: ``reading`` of a refusal: the bytes are not a JSON text.
NOT_JSON = "not_json"
#: ``reading`` of a refusal: JSON that parsers read differently.
AMBIGUOUS = "ambiguous"

_BOM = b"\xef\xbb\xbf"


def read_json(raw: bytes) -> Any:
    """The JSON value of ``raw``, read strictly (see the module docstring).

    Args:
        raw: the request's bytes (an HTTP body, one stdio line without its newline).

    Returns:
        The value (dicts, lists, str, int, float, bool, None).

    Raises:
        ValidationError: ``validation_error`` (HTTP 422) with ``reading`` ``not_json``
            or ``ambiguous`` and a detail naming why (the field, for a lone surrogate).
    """
    if raw.startswith(_BOM):
        raise ValidationError(
            "the JSON text starts with a byte order mark; send it without one",
            reading=NOT_JSON,
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"the JSON text is not UTF-8 (byte {exc.start} cannot be decoded)", reading=NOT_JSON
        ) from None
    try:
        doc = json.loads(text, object_pairs_hook=_unique, parse_constant=_no_constant)
    except ValidationError:
        raise
    except ValueError as exc:
        where = f" at offset {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
        raise ValidationError(f"the request is not valid JSON{where}", reading=NOT_JSON) from None
    except RecursionError:
        raise ValidationError("the JSON text nests too deeply", reading=NOT_JSON) from None
    try:
        refuse_surrogates(doc)
    except ValidationError as exc:
        raise ValidationError(exc.detail, field=exc.field, reading=AMBIGUOUS) from None
    return doc


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValidationError(
                f"duplicate key {key!r} in a JSON object (parsers disagree on which counts)",
                field=key,
                reading=AMBIGUOUS,
            )
        seen[key] = value
    return seen


def _no_constant(name: str) -> Any:
    raise ValidationError(f"{name} is not a JSON number", reading=NOT_JSON)
