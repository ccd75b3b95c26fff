"""What every wire record is: an open TypedDict whose keys are the API's camelCase names.

A record lists the members API.md promises (and those detente adds); API.md allows a
server to add members, so a record is *open*: pydantic keeps unknown members when the
HTTP edge validates an answer, and the OpenAPI document says ``additionalProperties``.
Marking a class costs no import (the configuration is a plain mapping pydantic reads).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

__all__ = ["ClaimStatus", "Json", "Time", "record"]

_T = TypeVar("_T", bound=type)

#: An RFC 3339 UTC time string, e.g. ``2026-11-30T14:05:00Z``.
Time = str

#: Any JSON value (a member whose shape the operation that wrote it decides).
Json = Any

#: The twelve claim statuses of API.md.
ClaimStatus = Literal[
    "draft",
    "announced",
    "negotiating",
    "active",
    "blocked",
    "suspended",
    "ready_for_review",
    "integrated",
    "completed",
    "abandoned",
    "expired",
    "taken_over",
]


def record(cls: _T) -> _T:
    """Mark a wire TypedDict open: members beyond the declared ones are kept."""
    cls.__pydantic_config__ = {"extra": "allow"}  # type: ignore[attr-defined]
    return cls
