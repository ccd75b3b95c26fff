"""Event versions: old payloads are brought up to the current shape when they are read.

The log is append-only and hash-chained, so a stored event is never rewritten when its
payload's shape changes. Instead every event keeps the ``version`` it was written with,
and replay passes it through an :class:`Upcasters` table: one step per ``(type, version)``
turning a version-``n`` payload into version ``n + 1``, applied until the event reaches
its type's current version. The fold (``RepoState.apply``) therefore only ever sees the
current shape; the stored bytes, and so the hash chain, stay as they were written.

To change an event's payload shape: raise the version its ``decide`` writes
(``Event(version=n + 1)``) and register the step from ``n`` in :data:`UPCASTERS`
(the technique is Greg Young's "upcasting", *Versioning in an Event Sourced System*, 2017).

One step applies to every type and version: an event written before events recorded
their ``actor`` (``{principal, via, keyFingerprint?}``, see :mod:`detente.security.identity`)
replays with :data:`LEGACY_ACTOR`, the loopback principal every caller was then.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from detente.errors import StoreError
from detente.eventlog.envelope import StoredEvent

#: One step: the payload at version ``n`` -> the payload at version ``n + 1`` (a new dict).
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

#: The actor of an event stored without one: the unauthenticated loopback caller.
LEGACY_ACTOR: dict[str, Any] = {"principal": "local", "via": "local"}


class Upcasters:
    """The upcasting steps of every event type.

    Args:
        steps: ``(type, from_version) -> step``; each type's steps must start at version 1
            and have no gap.

    Raises:
        ValueError: a type's steps leave a gap (a version that could not be read).
    """

    def __init__(self, steps: Mapping[tuple[str, int], Upcaster] | None = None) -> None:
        self._steps = dict(steps or {})
        self._current: dict[str, int] = {}
        for event_type, version in sorted(self._steps):
            expected = self._current.get(event_type, 1)
            if version != expected:
                raise ValueError(
                    f"upcasters of {event_type!r} jump from version {expected} to {version}"
                )
            self._current[event_type] = version + 1

    def current(self, event_type: str) -> int:
        """The version replay delivers for ``event_type`` (1 when it never changed)."""
        return self._current.get(event_type, 1)

    def upcast(self, event: StoredEvent) -> StoredEvent:
        """``event`` with its payload at the current version of its type.

        Raises:
            StoreError: ``store_unavailable`` for a version newer than this detente knows
                (written by a newer release: upgrade before reading this log).
        """
        target = self.current(event.type)
        if "actor" not in event.data:
            event = dataclasses.replace(event, data={**event.data, "actor": dict(LEGACY_ACTOR)})
        if event.version == target:
            return event
        if not 1 <= event.version < target:
            raise StoreError(
                f"event {event.seq} ({event.type}) has version {event.version}; this detente "
                f"reads versions 1 to {target}: upgrade detente to read this log"
            )
        data, version = event.data, event.version
        while version < target:
            data = self._steps[(event.type, version)](dict(data))
            version += 1
        return dataclasses.replace(event, data=data, version=version)


#: The steps of this release (empty: every event type is still at version 1).
UPCASTERS = Upcasters()
