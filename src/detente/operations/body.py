"""The base of every request body, and the one way a body is validated in-process.

Request bodies are pydantic models (camelCase aliases, unknown fields refused): the HTTP
routers parse requests with them, and :class:`~detente.client.inprocess.InProcessClient`
validates the same camelCase mappings with them through :func:`parse`, so both client
implementations refuse the same input with the same ``validation_error``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.alias_generators import to_camel

from detente.errors import ValidationError
from detente.operations.unicode_text import refuse_surrogates

__all__ = ["Body", "invalid", "parse"]


class Body(BaseModel):
    """A request body: camelCase on the wire, snake_case in Python, extra fields refused,
    every string (and key) valid Unicode text."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    #: Other wire names a field is accepted under: ``{alias: wire name}`` (one name in
    #: the contract, the other spelling taken too; both at once is ambiguous: 422).
    aliases: ClassVar[dict[str, str]] = {}

    @model_validator(mode="before")
    @classmethod
    def _unicode_text(cls, data: Any) -> Any:
        """Refuse a lone surrogate anywhere in the body (``validation_error`` naming where),
        and read each alias of :attr:`aliases` as its field."""
        refuse_surrogates(data)
        if cls.aliases and isinstance(data, Mapping):
            data = dict(data)
            for alias, name in cls.aliases.items():
                if alias not in data:
                    continue
                if name in data:
                    raise ValidationError(
                        f"{alias} and {name} name the same field: send one of them",
                        field=alias,
                    )
                data[name] = data.pop(alias)
        return data

    def fields(self, *, exclude: Sequence[str] = (), **extra: Any) -> dict[str, Any]:
        """The validated fields by their Python names (nested bodies as they are), without
        ``exclude``, plus ``extra``: the keyword arguments of a command of the same names."""
        names = [n for n in type(self).model_fields if n not in exclude]
        return {**{n: getattr(self, n) for n in names}, **extra}


_B = TypeVar("_B", bound=BaseModel)

#: Location parts that say where a field came from, not which field it is.
_ORIGINS = ("body", "query", "path")


def invalid(errors: Sequence[Mapping[str, Any]]) -> ValidationError:
    """The ``validation_error`` for pydantic's error list: the first error's field (dotted
    path without its origin) and message, every error in ``errors``.

    Args:
        errors: pydantic's ``errors()`` (``loc``, ``msg``, ``type`` each).

    Returns:
        The error, not raised.
    """
    first = errors[0] if errors else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in _ORIGINS]
    field = ".".join(loc) or None
    message = str(first.get("msg", "invalid request"))
    if first.get("type") == "json_invalid":  # loc is a character offset, not a field
        field = None
        message = f"the request body is not valid JSON ({message} at offset {loc[0] if loc else 0})"
    detail = f"{field}: {message}" if field else message
    listed = [{"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg"))} for e in errors]
    return ValidationError(detail, field=field, errors=listed)


def parse(model: type[_B], body: Mapping[str, Any] | None) -> _B:
    """Validate ``body`` (camelCase keys) like the HTTP edge does.

    Raises:
        ValidationError: ``validation_error`` naming the first offending field.
    """
    try:
        return model.model_validate(dict(body or {}))
    except pydantic.ValidationError as exc:
        # The HTTP edge reports body fields under a ``body`` origin, stripped the same way.
        raise invalid([{**e, "loc": ("body", *e.get("loc", ()))} for e in exc.errors()]) from None
