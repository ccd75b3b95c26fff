"""What every wire record is: an open TypedDict whose keys are the API's camelCase names.

A record lists the members API.md promises (and those detente adds); API.md allows a
server to add members, so a record is *open*: pydantic keeps unknown members when the
HTTP edge validates an answer, and the OpenAPI document says ``additionalProperties``.
Marking a class costs no import (the configuration is a plain mapping pydantic reads).
"""

from __future__ import annotations

import types
import typing
from typing import Any, TypeVar

import typing_extensions

from detente.domain.claims.record import Json, Time
from detente.domain.claims.record import StatusName as ClaimStatus

__all__ = ["ClaimStatus", "Json", "Time", "derived", "record"]

_T = TypeVar("_T", bound=type)

_DERIVED: dict[type, Any] = {}


def record(cls: _T) -> _T:
    """Mark a wire TypedDict open: members beyond the declared ones are kept."""
    cls.__pydantic_config__ = {"extra": "allow"}  # type: ignore[attr-defined]
    return cls


def derived(cls: type, name: str | None = None) -> Any:
    """The open ``typing_extensions`` TypedDict with the members of the stdlib TypedDict
    ``cls`` (a domain record), named ``name`` (default: ``cls``'s name); nested records
    are derived too, once each.

    The domain declares its records with the standard library only; pydantic on Python
    3.11 validates and documents only ``typing_extensions``' TypedDicts. Type checkers see
    the domain's class (the wire modules import it under ``TYPE_CHECKING``), so one
    declaration is both the checked shape and the documented one.
    """
    if cls in _DERIVED:
        return _DERIVED[cls]
    hints = typing.get_type_hints(cls)
    optional: frozenset[str] = getattr(cls, "__optional_keys__", frozenset())
    members = {
        key: typing_extensions.NotRequired[_derive(tp)] if key in optional else _derive(tp)
        for key, tp in hints.items()
    }
    factory: Any = typing_extensions.TypedDict  # the functional form, with a computed name
    made = factory(name or cls.__name__, members)
    made.__doc__ = cls.__doc__
    _DERIVED[cls] = record(made)
    return made


def _derive(tp: Any) -> Any:
    if typing_extensions.is_typeddict(tp):
        return derived(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if not args or origin is typing.Literal:
        return tp
    inner = tuple(_derive(a) for a in args)
    if origin is typing.Union or origin is types.UnionType:
        return typing.Union[inner]  # noqa: UP007 (a union built at run time)
    return origin[inner]
