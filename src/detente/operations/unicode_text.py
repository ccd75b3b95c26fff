"""The one check that a request body is Unicode text, without pydantic.

A lone UTF-16 surrogate can be spelt in JSON (``"\\ud800"``) and reaches Python from a
command line that is not UTF-8 (``surrogateescape``), but it is not a character: no UTF-8
log, file or database can hold it. Every request body (:class:`~detente.operations.body.Body`)
and the claim seed the local CLI builds without the request model
(:meth:`~detente.client.inprocess.InProcessClient.open_typed_claim`) are checked here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from detente.errors import ValidationError

__all__ = ["refuse_surrogates"]

#: A lone UTF-16 surrogate.
_SURROGATE = re.compile("[\ud800-\udfff]")


def refuse_surrogates(data: Any) -> None:
    """Refuse a lone surrogate anywhere in ``data`` (strings, keys, nested mappings and
    sequences).

    Raises:
        ValidationError: ``validation_error`` naming where (a dotted path; ``body`` for
            the whole).
    """
    pending: list[tuple[str, Any]] = [("", data)]
    while pending:  # no recursion: the depth of a body is the client's choice
        where, value = pending.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise ValidationError(
                    f"{where or 'body'}: not valid Unicode text (a lone surrogate such as "
                    "\\ud800 is not a character)",
                    field=where or None,
                )
        elif isinstance(value, Mapping):
            for key, item in value.items():
                name = str(key)
                if _SURROGATE.search(name):
                    detail = f"{where or 'body'}: a key is not valid Unicode text"
                    raise ValidationError(detail, field=where or None)
                pending.append((f"{where}.{name}" if where else name, item))
        elif isinstance(value, list | tuple):
            pending.extend((f"{where}.{i}", item) for i, item in enumerate(value))
