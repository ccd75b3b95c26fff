"""Domain events: stable type names with a version, JSON-ready ``data`` (camelCase).

Event types (all version 1; subject in brackets)::

    claim.announced      [claim/<id>]    the full seed, the lease grant and the fencing token
    claim.activated      [claim/<id>]    no blocking overlap: authority granted
    claim.negotiating    [claim/<id>]    blocking overlap: waits in meeting ``meetingId``
    claim.scope_changed  [claim/<id>]    targets added/removed; ``paths``/``pendingPaths`` after
    claim.suspended      [claim/<id>]    paused by its holder (or a resolution)
    claim.resumed        [claim/<id>]    back to ``status`` (active, or negotiating on overlap)
    claim.abandoned      [claim/<id>]    explicit release with head commit, diff summary, memory
    claim.expired        [claim/<id>]    the lease deadline passed: authority frozen
    lease.renewed        [claim/<id>]    the lease's new revision and absolute deadline
    meeting.opened       [meeting/<id>]  participants and contested targets
    meeting.joined       [meeting/<id>]  another claim joins an open meeting

The stored envelope (sequence, hash chain) is added by :mod:`detente.eventlog`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CLAIM_ANNOUNCED = "claim.announced"
CLAIM_ACTIVATED = "claim.activated"
CLAIM_NEGOTIATING = "claim.negotiating"
CLAIM_SCOPE_CHANGED = "claim.scope_changed"
CLAIM_SUSPENDED = "claim.suspended"
CLAIM_RESUMED = "claim.resumed"
CLAIM_ABANDONED = "claim.abandoned"
CLAIM_EXPIRED = "claim.expired"
LEASE_RENEWED = "lease.renewed"
MEETING_OPENED = "meeting.opened"
MEETING_JOINED = "meeting.joined"

EVENT_TYPES = frozenset(
    {
        CLAIM_ANNOUNCED,
        CLAIM_ACTIVATED,
        CLAIM_NEGOTIATING,
        CLAIM_SCOPE_CHANGED,
        CLAIM_SUSPENDED,
        CLAIM_RESUMED,
        CLAIM_ABANDONED,
        CLAIM_EXPIRED,
        LEASE_RENEWED,
        MEETING_OPENED,
        MEETING_JOINED,
    }
)


@dataclass(frozen=True)
class Event:
    """An event decided by the domain, before the log gives it a sequence and hash.

    Attributes:
        id: unique event id (``evt_...``), chosen by the caller of ``decide``.
        type: one of :data:`EVENT_TYPES`.
        subject: the stream, ``claim/<id>`` or ``meeting/<id>``.
        data: JSON-ready payload, camelCase keys.
        version: payload schema version of ``type``.
    """

    id: str
    type: str
    subject: str
    data: dict[str, Any]
    version: int = 1


def claim_subject(claim_id: str) -> str:
    return f"claim/{claim_id}"


def meeting_subject(meeting_id: str) -> str:
    return f"meeting/{meeting_id}"
