"""Domain events: stable type names with a version, JSON-ready ``data`` (camelCase).

Event types (all version 1; subject in brackets)::

    claim.announced      [claim/<id>]    the full seed, the lease grant and the fencing token
    claim.activated      [claim/<id>]    no blocking overlap: authority granted
    claim.negotiating    [claim/<id>]    blocking overlap: waits in meeting ``meetingId``
    claim.scope_changed  [claim/<id>]    targets added/removed; ``paths``/``pendingPaths`` after
    claim.objective_changed [claim/<id>] the new ``objective`` (and ``previousObjective``), and
                         its advisory ``semantic`` record computed again
    claim.suspended      [claim/<id>]    paused by its holder (or a resolution)
    claim.resumed        [claim/<id>]    back to ``status`` (active, or negotiating on overlap)
    claim.abandoned      [claim/<id>]    explicit release with head commit, diff summary, memory
    claim.expired        [claim/<id>]    the lease deadline passed: authority frozen
    claim.draft_announced [claim/<id>]   a draft is announced: its lease starts now
    lease.renewed        [claim/<id>]    the lease's new revision and absolute deadline (only on a
                         store without lease rows: elsewhere a renewal moves the claim's
                         lease row by compare-and-swap and appends nothing)
    lease.checkpoint     [lease/<repo>]  ``leases``: ``{claimId, leaseId, leaseRevision,
                         ttlSeconds, expiresAt}`` of each lease renewed (by row) since the
                         last checkpoint, at most one checkpoint per
                         ``Policy.lease_checkpoint_seconds`` per repository
    meeting.opened       [meeting/<id>]  participants and contested targets
    meeting.joined       [meeting/<id>]  another claim joins an open meeting
    meeting.proposal_added    [meeting/<id>]  a participant proposes a typed resolution
    meeting.proposal_accepted [meeting/<id>]  an affected participant accepts a proposal
    meeting.resolved     [meeting/<id>]  a resolution took effect (with the claim events it implies)
    meeting.escalated    [meeting/<id>]  human arbitration (asked or deadline); arbitrators named
    meeting.handoff_accepted  [meeting/<id>]  the recipient of a handoff accepted it
    meeting.notice       [meeting/<id>]  a notification to a participant (e.g. first expired)
    meeting.dissolved    [meeting/<id>]  no contest left (holder narrowed, finished, released)
    meeting.left         [meeting/<id>]  a participant that no longer holds left the room
    claim.blocked        [claim/<id>]    waits for a human arbitrator (or takeover approvers)
    claim.taken_over     [claim/<id>]    the predecessor's record: successor, pieces, rescue ref
    claim.takeover_approved [claim/<id>] an approver (human or CODEOWNERS owner) of a takeover
    claim.worktree_cleaned [claim/<id>]  a finished claim's worktree entry removed (rescue first)
    claim.merge_checked  [checks/<id>]   its branch merged (git merge-tree) with its neighbours'
                         and the integration branch: head, changed, checked, conflicts
                         (:mod:`detente.domain.checks`; not the claim's stream: no revision)
    claim.drifted        [checks/<id>]   paths its work changed outside its granted scope
    agent.registered     [agent/<sessionId>]  a session's name, intent, branch, worktree, TTL and
                         absolute ``expiresAt``; registering again renews (advisory registry);
                         a first registration's ``noticesFrom``: the log position its
                         notices start after
    agent.notices_received [agent/<sessionId>]  a receipt: the session's notices up to
                         ``upTo`` (a global seq) were ``delivered`` (put before the agent)
                         or ``seen`` (the agent acted after them)
    memory.registered    [memory/<id>]   a document's path, class and what the file held
    memory.section_patched [memory/<id>] one section rewritten (claim, token, new hashes)
    memory.written       [memory/<id>]   a whole-file write by a claim
    memory.appended      [memory/<id>]   an entry appended (offset, length, entry hash)
    memory.rendered      [memory/<id>]   generated regions re-rendered from the records
    memory.reconciliation_opened   [memory/<id>]  a user's edit found in a generated region
    memory.reconciliation_resolved [memory/<id>]  upstream or overlay; the user's text kept
    memory.patch_deferred [memory/<id>]  an agent's edit refused over a user's: the artifact
    claim.ready_for_review [claim/<id>]  completion evidence accepted (stored on the claim)
    claim.integrated     [claim/<id>]    the protected ref moved by CAS: ref, oldOid, newOid
    claim.integration_stale [claim/<id>] the CAS lost (ref moved): back to active, evidence stale
    claim.completed      [claim/<id>]    memory and deployment evidence done (or not required)
    patch.published      [patch/<id>]    a content-addressed format-patch artifact of a claim
    patch.integrated / patch.discarded [patch/<id>]  the artifact left the queue
    deployment.recorded  [deployment/<repo>:<env>]  an environment moved by CAS (claim, commit)
    deployment.policy_set [deployment/<repo>:<env>] the environment's deployment policy
    resource.declared    [resource/<repo>:<name>]  a shared resource and its ``capacity`` (first
                         acquire, or an explicit declaration; ``previousCapacity`` on a change)
    resource.granted     [resource/<repo>:<name>]  a slot to ``ticket``'s holder: ``fencingToken``,
                         ``principal``, ``ttlSeconds`` and the absolute ``expiresAt``
    resource.queued      [resource/<repo>:<name>]  a request waits in line for a slot (``ticket``)
    resource.renewed     [resource/<repo>:<name>]  a grant's new ``leaseRevision`` and deadline
    resource.released    [resource/<repo>:<name>]  a grant given back (``forced`` by an admin)
    resource.expired     [resource/<repo>:<name>]  a grant's deadline passed: its slot is free
    resource.left_queue  [resource/<repo>:<name>]  a waiter gave up its place (``ticket``)
    resource.number_issued [resource/<repo>:<name>]  the next ``number`` of a counter, once

The stored envelope (sequence, hash chain) is added by :mod:`detente.eventlog`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from detente.clock import format_time

CLAIM_ANNOUNCED = "claim.announced"
CLAIM_ACTIVATED = "claim.activated"
CLAIM_NEGOTIATING = "claim.negotiating"
CLAIM_SCOPE_CHANGED = "claim.scope_changed"
CLAIM_OBJECTIVE_CHANGED = "claim.objective_changed"
CLAIM_SUSPENDED = "claim.suspended"
CLAIM_RESUMED = "claim.resumed"
CLAIM_ABANDONED = "claim.abandoned"
CLAIM_EXPIRED = "claim.expired"
CLAIM_DRAFT_ANNOUNCED = "claim.draft_announced"
LEASE_RENEWED = "lease.renewed"
LEASE_CHECKPOINT = "lease.checkpoint"
MEETING_OPENED = "meeting.opened"
MEETING_JOINED = "meeting.joined"
MEETING_PROPOSAL_ADDED = "meeting.proposal_added"
MEETING_PROPOSAL_ACCEPTED = "meeting.proposal_accepted"
MEETING_RESOLVED = "meeting.resolved"
MEETING_ESCALATED = "meeting.escalated"
MEETING_HANDOFF_ACCEPTED = "meeting.handoff_accepted"
MEETING_NOTICE = "meeting.notice"
MEETING_DISSOLVED = "meeting.dissolved"
MEETING_LEFT = "meeting.left"
CLAIM_BLOCKED = "claim.blocked"
CLAIM_TAKEN_OVER = "claim.taken_over"
CLAIM_TAKEOVER_APPROVED = "claim.takeover_approved"
CLAIM_WORKTREE_CLEANED = "claim.worktree_cleaned"
#: The agent sessions' events (their records name no claim and no room).
AGENT_PREFIX = "agent."
AGENT_REGISTERED = "agent.registered"
AGENT_NOTICES_RECEIVED = "agent.notices_received"

MEMORY_REGISTERED = "memory.registered"
MEMORY_SECTION_PATCHED = "memory.section_patched"
MEMORY_WRITTEN = "memory.written"
MEMORY_APPENDED = "memory.appended"
MEMORY_RENDERED = "memory.rendered"
MEMORY_RECONCILIATION_OPENED = "memory.reconciliation_opened"
MEMORY_RECONCILIATION_RESOLVED = "memory.reconciliation_resolved"
MEMORY_PATCH_DEFERRED = "memory.patch_deferred"
MEMORY_ADOPTED = "memory.adopted"
CLAIM_READY_FOR_REVIEW = "claim.ready_for_review"
CLAIM_INTEGRATED = "claim.integrated"
CLAIM_INTEGRATION_STALE = "claim.integration_stale"
CLAIM_COMPLETED = "claim.completed"
PATCH_PUBLISHED = "patch.published"
PATCH_INTEGRATED = "patch.integrated"
PATCH_DISCARDED = "patch.discarded"
DEPLOYMENT_RECORDED = "deployment.recorded"
DEPLOYMENT_POLICY_SET = "deployment.policy_set"
RESOURCE_DECLARED = "resource.declared"
RESOURCE_GRANTED = "resource.granted"
RESOURCE_QUEUED = "resource.queued"
RESOURCE_RENEWED = "resource.renewed"
RESOURCE_RELEASED = "resource.released"
RESOURCE_EXPIRED = "resource.expired"
RESOURCE_LEFT_QUEUE = "resource.left_queue"
RESOURCE_NUMBER_ISSUED = "resource.number_issued"
#: The key registry (``principals.json``) changed: ``{name, fingerprint, roles}``.
PRINCIPAL_KEY_REGISTERED = "principal.key_registered"
PRINCIPAL_KEY_REMOVED = "principal.key_removed"
#: A claim's branch was merge-checked (``data``: see
#: :func:`detente.domain.checks.model.merge_check_data`); on the ``checks/<id>`` stream.
CLAIM_MERGE_CHECKED = "claim.merge_checked"
#: A claim's work was compared with its granted scope (``drifted`` lists the paths outside).
CLAIM_DRIFTED = "claim.drifted"

#: The advisories of :mod:`detente.domain.checks` (their own streams, never a claim's).
CHECK_EVENT_TYPES = frozenset({CLAIM_MERGE_CHECKED, CLAIM_DRIFTED})
#: What the gates' fold (:mod:`detente.domain.gates.evolve`) applies: the claim events of
#: evidence, integration and completion, and the patches' and deployments' own.
GATE_EVENT_TYPES = frozenset(
    {
        CLAIM_READY_FOR_REVIEW,
        CLAIM_INTEGRATED,
        CLAIM_INTEGRATION_STALE,
        CLAIM_COMPLETED,
        PATCH_PUBLISHED,
        PATCH_DISCARDED,
        PATCH_INTEGRATED,
        DEPLOYMENT_RECORDED,
        DEPLOYMENT_POLICY_SET,
    }
)


@dataclass(frozen=True)
class Event:
    """An event decided by the domain, before the log gives it a sequence and hash.

    Attributes:
        id: unique event id (``evt_...``), chosen by the caller of ``decide``.
        type: one of the event type constants of this module.
        subject: the stream, ``claim/<id>`` or ``meeting/<id>``.
        data: JSON-ready payload, camelCase keys.
        version: payload schema version of ``type``.
    """

    id: str
    type: str
    subject: str
    data: dict[str, Any]
    version: int = 1


def principal_subject(name: str) -> str:
    """The stream of a registered key's changes: ``principal/<name>``."""
    return f"principal/{name}"


def claim_subject(claim_id: str) -> str:
    return f"claim/{claim_id}"


def stream_event(ids: Callable[[str], str], subject: str, event_type: str, **data: Any) -> Event:
    """An event on stream ``subject`` with payload ``data`` (one ``evt`` id is drawn)."""
    return Event(id=ids("evt"), type=event_type, subject=subject, data=data)


def claim_event(ids: Callable[[str], str], claim_id: str, event_type: str, **data: Any) -> Event:
    """An event on the claim's stream ``claim/<claim_id>``; ``data`` follows ``claimId``."""
    return stream_event(ids, claim_subject(claim_id), event_type, claimId=claim_id, **data)


def status_event(
    ids: Callable[[str], str],
    claim_id: str,
    event_type: str,
    *,
    to: str,
    was: str | None = None,
    reason: str | None,
    **data: Any,
) -> Event:
    """A claim's status change: ``data`` gets ``status`` (``to``), ``from`` (``was``, when
    given) and ``reason`` after ``claimId``; the rest of ``data`` follows."""
    moved: dict[str, Any] = {"status": to} if was is None else {"status": to, "from": was}
    return claim_event(ids, claim_id, event_type, **moved, **data, reason=reason)


def meeting_subject(meeting_id: str) -> str:
    return f"meeting/{meeting_id}"


def meeting_event(
    ids: Callable[[str], str], meeting_id: str, event_type: str, **data: Any
) -> Event:
    """An event on the meeting's stream ``meeting/<meeting_id>``; ``data`` follows
    ``meetingId``."""
    return stream_event(ids, meeting_subject(meeting_id), event_type, meetingId=meeting_id, **data)


def meeting_opened(
    ids: Callable[[str], str],
    meeting_id: str,
    participants: Sequence[str],
    contested: Sequence[dict[str, Any]],
    deadline: datetime,
) -> Event:
    """``meeting.opened``: who sits in the room, what they contest, and when it escalates.

    Args:
        ids: the id source (one ``evt`` id is drawn).
        meeting_id: the new room's id.
        participants: claim ids, holders first.
        contested: ``{target, claimIds, reason}`` entries (API.md "Meetings").
        deadline: when the room escalates to human arbitration (UTC).
    """
    return meeting_event(
        ids,
        meeting_id,
        MEETING_OPENED,
        participants=list(participants),
        contestedTargets=list(contested),
        deadline=format_time(deadline),
    )


def lease_subject(repo: str) -> str:
    """The stream of a repository's lease checkpoints: ``lease/<repo>``."""
    return f"lease/{repo}"


def memory_subject(document_id: str) -> str:
    return f"memory/{document_id}"
