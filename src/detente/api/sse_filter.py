"""Which events a subscriber of ``GET /v1/events/stream`` wants, decided cheaply.

The fan-out (:mod:`detente.api.sse`) offers every event to every subscriber. What a
filter asks of an event is computed once per event, not once per subscriber:
:class:`EventKeys` holds the event, its encoded message and, on first use, the set of
strings in its payload (the ``claim`` filter) and the path patterns it concerns (the
``path`` filter). A :class:`StreamFilter` is compiled once per subscriber (the exact
types and the ``family.*`` prefixes of its ``type`` list), so a match is a few set and
string operations.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from detente.errors import ValidationError
from detente.eventlog.envelope import StoredEvent

__all__ = [
    "EventKeys",
    "StreamFilter",
    "credentials_expired",
    "encode",
    "parse_filter",
    "resync",
]

_PATH_KEYS = {"paths", "addPaths", "removePaths", "pendingPaths", "target", "targets"}
_GLOB = "*?["


def _strings(value: Any, depth: int = 0) -> Iterable[str]:
    """Every string in a JSON value, at most 8 levels deep."""
    if depth > 8:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | dict):
        for item in value.values() if isinstance(value, dict) else value:
            yield from _strings(item, depth + 1)


def _path_patterns(value: Any, depth: int = 0) -> Iterable[str]:
    """Strings under path-like keys (``paths``, ``target``, ...) of a JSON value."""
    if depth > 8:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _PATH_KEYS:
                yield from _strings(item, depth + 1)
            else:
                yield from _path_patterns(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _path_patterns(item, depth + 1)


def _pattern_touches(pattern: str, prefix: str) -> bool:
    """Whether a path pattern may name something under ``prefix`` (over-inclusive)."""
    literal = pattern
    for i, ch in enumerate(pattern):
        if ch in _GLOB:
            literal = pattern[:i]
            break
    return pattern.startswith(prefix) or prefix.startswith(literal)


def encode(event: StoredEvent) -> bytes:
    """The SSE message of ``event``: ``id``, ``event`` and the JSON envelope as ``data``."""
    data = json.dumps(event.to_wire(), separators=(",", ":"), ensure_ascii=False)
    return f"id: {event.seq}\nevent: {event.type}\ndata: {data}\n\n".encode()


def resync(position: int, code: str, reason: str) -> bytes:
    """An ``event: resync`` message (see :mod:`detente.api.sse`)."""
    data = json.dumps({"position": position, "code": code, "reason": reason})
    return f"id: {position}\nevent: resync\ndata: {data}\n\n".encode()


def credentials_expired(position: int) -> bytes:
    """An ``event: credentials_expired`` message: the stream ends because the token it was
    opened with expired; reconnect with a fresh token from ``position``."""
    data = json.dumps(
        {
            "position": position,
            "code": "credentials_expired",
            "reason": "the token this stream was opened with has expired; reconnect with "
            f"a fresh token and Last-Event-ID: {position}",
        }
    )
    return f"id: {position}\nevent: credentials_expired\ndata: {data}\n\n".encode()


@dataclass(eq=False)
class EventKeys:
    """One event as every filter sees it, each key computed at most once.

    Args:
        event: the stored event.
        scopes: the path patterns of each claim (``claim/ID`` -> patterns) known to the
            fan-out when the event was read.
    """

    event: StoredEvent
    scopes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    _message: bytes | None = None
    _strings: frozenset[str] | None = None
    _patterns: frozenset[str] | None = None

    @property
    def message(self) -> bytes:
        """The encoded SSE message (encoded once, shared by every subscriber)."""
        if self._message is None:
            self._message = encode(self.event)
        return self._message

    @property
    def strings(self) -> frozenset[str]:
        """Every string of the payload (ids named anywhere in it)."""
        if self._strings is None:
            self._strings = frozenset(_strings(self.event.data))
        return self._strings

    @property
    def patterns(self) -> frozenset[str]:
        """The path patterns the event concerns: its payload's and its claim's scope."""
        if self._patterns is None:
            own = _path_patterns(self.event.data)
            self._patterns = frozenset(own).union(self.scopes.get(self.event.subject, ()))
        return self._patterns


@dataclass(frozen=True)
class StreamFilter:
    """Which events a subscriber wants (query filters, combined with AND).

    Attributes:
        repo: only this repository's events.
        claim: the claim's own stream and every event whose payload names it.
        path: events of claims whose scope has a pattern under this prefix, or covering it.
        types: event type names; ``family.*`` names a family.
    """

    repo: str | None = None
    claim: str | None = None
    path: str | None = None
    types: tuple[str, ...] = ()
    _exact: frozenset[str] = field(init=False, repr=False, compare=False)
    _families: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        exact = frozenset(t for t in self.types if not t.endswith("*"))
        families = tuple(t[:-1] for t in self.types if t.endswith("*"))
        object.__setattr__(self, "_exact", exact)
        object.__setattr__(self, "_families", families)

    def wants(self, keys: EventKeys) -> bool:
        """Whether the event of ``keys`` passes every filter."""
        event = keys.event
        if self.repo is not None and event.repo != self.repo:
            return False
        if (
            self.types
            and event.type not in self._exact
            and not (self._families and event.type.startswith(self._families))
        ):
            return False
        if (
            self.claim is not None
            and event.subject != f"claim/{self.claim}"
            and self.claim not in keys.strings
        ):
            return False
        if self.path is not None:
            prefix = self.path
            if not any(_pattern_touches(p, prefix) for p in keys.patterns):
                return False
        return True

    def matches(self, event: StoredEvent, scopes: Mapping[str, tuple[str, ...]]) -> bool:
        """:meth:`wants` for a single event (keys computed for this call only)."""
        return self.wants(EventKeys(event, scopes))


def parse_filter(repo: str | None, query: Mapping[str, str]) -> StreamFilter:
    """The subscriber's filter from the query string.

    Raises:
        ValidationError: ``validation_error`` for an empty ``type`` entry or ``path``.
    """
    types = tuple(t.strip() for t in query.get("type", "").split(",") if t.strip())
    if "type" in query and not types:
        raise ValidationError("type must name at least one event type", field="type")
    path = query.get("path")
    if path is not None:
        path = path.strip().removeprefix("./")
        if not path or path.startswith("/") or ".." in path.split("/"):
            raise ValidationError("path must be a relative path prefix", field="path")
    return StreamFilter(repo=repo, claim=query.get("claim") or None, path=path, types=types)
