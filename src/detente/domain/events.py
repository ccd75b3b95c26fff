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
    meeting.proposal_added    [meeting/<id>]  a participant proposes a typed resolution
    meeting.proposal_accepted [meeting/<id>]  an affected participant accepts a proposal
    meeting.resolved     [meeting/<id>]  a resolution took effect (with the claim events it implies)
    meeting.escalated    [meeting/<id>]  human arbitration (asked or deadline); arbitrators named
    meeting.handoff_accepted  [meeting/<id>]  the recipient of a handoff accepted it
    meeting.notice       [meeting/<id>]  a notification to a participant (e.g. first expired)
    claim.blocked        [claim/<id>]    waits for a human arbitrator
    agent.registered     [agent/<sessionId>]  a session's name, intent, branch, worktree, TTL and
                         absolute ``expiresAt``; registering again renews (advisory registry)

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
MEETING_PROPOSAL_ADDED = "meeting.proposal_added"
MEETING_PROPOSAL_ACCEPTED = "meeting.proposal_accepted"
MEETING_RESOLVED = "meeting.resolved"
MEETING_ESCALATED = "meeting.escalated"
MEETING_HANDOFF_ACCEPTED = "meeting.handoff_accepted"
MEETING_NOTICE = "meeting.notice"
CLAIM_BLOCKED = "claim.blocked"
AGENT_REGISTERED = "agent.registered"

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
        MEETING_PROPOSAL_ADDED,
        MEETING_PROPOSAL_ACCEPTED,
        MEETING_RESOLVED,
        MEETING_ESCALATED,
        MEETING_HANDOFF_ACCEPTED,
        MEETING_NOTICE,
        CLAIM_BLOCKED,
        AGENT_REGISTERED,
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
