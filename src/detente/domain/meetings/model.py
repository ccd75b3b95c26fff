"""The meeting record: a room where overlapping claims settle a contested set of targets.

Frozen dataclasses, replaced wholesale by :mod:`detente.domain.meetings.evolve`; times are
timezone-aware UTC. A meeting holds its resolutions typed
(:mod:`detente.domain.meetings.resolution_types`): each :class:`Proposal` and the
:class:`Decided` resolution that closed it, read from the log's JSON and written back as
the same JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

from detente.clock import format_time
from detente.domain.meetings.resolution_types import (
    RESOLUTION_TYPES,
    Resolution,
    resolution_from_wire,
)


class MeetingStatus(StrEnum):
    OPEN = "open"
    RESOLVED = "resolved"
    ESCALATED = "escalated"


@dataclass(frozen=True)
class ContestedTarget:
    target: str
    claim_ids: tuple[str, ...]
    reason: str
    #: the overlap's kind (``path``, ``module``, ``symbol``, ``contract``, ``memory``...),
    #: read from the reason it was recorded with ("<kind> overlap: ...").
    kind: str = "path"

    @cached_property
    def wire(self) -> dict[str, Any]:
        """The API.md entry ``{target, claimIds[], reason}``, built once per target
        record: a join that leaves a target as it was reuses it (read-only, shared by
        the wire records of every meeting revision that holds this target)."""
        return {"target": self.target, "claimIds": list(self.claim_ids), "reason": self.reason}

    def __getstate__(self) -> dict[str, Any]:
        return _without_caches(self.__dict__)

    @property
    def movable(self) -> bool:
        """Can a handoff move this target (not a contract area, not a memory file
        claimed whole: :mod:`detente.domain.meetings.target_kinds`)?"""
        if self.kind == "contract":
            return False
        return not (self.kind == "memory" and "#" not in self.target)


@dataclass(frozen=True)
class Decided:
    """A validated resolution with the claims it affects (whose acceptance it needs) and,
    once applied, who resolved it: ``{type, ..., affected[], resolvedBy?}`` on the wire."""

    resolution: Resolution
    affected: tuple[str, ...]
    resolved_by: str | None = None

    def to_wire(self) -> dict[str, object]:
        out = {**self.resolution.to_wire(), "affected": list(self.affected)}
        if self.resolved_by is not None:
            out["resolvedBy"] = self.resolved_by
        return out


def decided_from_wire(raw: object) -> Decided:
    """A stored ``{type, ..., affected[], resolvedBy?}`` as a :class:`Decided`.

    Raises:
        ValidationError: as :func:`resolution_from_wire`.
    """
    resolution = resolution_from_wire(raw)
    assert isinstance(raw, Mapping)
    affected = raw.get("affected", [])
    by = raw.get("resolvedBy")
    return Decided(
        resolution,
        tuple(str(c) for c in affected) if isinstance(affected, list) else (),
        str(by) if by is not None else None,
    )


@dataclass(frozen=True)
class Dissolved:
    """A meeting closed with no contest left (``meeting.dissolved``): on the wire the
    meeting reads ``status: resolved``, ``outcome: dissolved``, ``resolution: null`` and
    ``dissolution: {reason}`` (``dissolved`` is no resolution type)."""

    reason: object = None

    def to_wire(self) -> dict[str, object]:
        return {"type": "dissolved", "reason": self.reason, "affected": []}


#: What closed a meeting: an applied resolution, or a dissolution.
Outcome = Decided | Dissolved


def options_for(
    participants: tuple[str, ...], targets: tuple[ContestedTarget, ...] = ()
) -> tuple[str, ...]:
    """The resolution types that can settle a room of ``participants`` contesting
    ``targets`` (in offer order).

    A resolution must name every live participant (:mod:`detente.domain.meetings.target_kinds`):
    ``serialize`` and ``handoff`` name two claims, so a room of three or more offers only
    ``split_ownership``, ``joint`` and ``human_arbitration``. A room whose every contested
    target is a contract area or a whole memory file offers no ``handoff`` (it would move
    nothing and be refused).
    """
    offered = RESOLUTION_TYPES
    if len(set(participants)) > 2:
        offered = tuple(t for t in offered if t not in _PAIRWISE)
    if targets and not any(t.movable for t in targets):
        offered = tuple(t for t in offered if t != "handoff")
    return offered


_PAIRWISE = frozenset({"serialize", "handoff"})


@dataclass(frozen=True)
class Settlement:
    """A resolution as it settles one pair of claims, with the meeting that recorded it."""

    meeting_id: str
    resolution: Resolution


ProposalStatus = Literal["open", "accepted", "superseded"]


@dataclass(frozen=True)
class Proposal:
    """A proposed resolution in a meeting: ``{id, claimId, resolution, affected[],
    acceptedBy[], status, at}`` on the wire."""

    id: str
    claim_id: str
    decided: Decided
    affected: tuple[str, ...]
    accepted_by: tuple[str, ...]
    status: ProposalStatus
    at: datetime

    def to_wire(self) -> dict[str, object]:
        return {
            "id": self.id,
            "claimId": self.claim_id,
            "resolution": self.decided.to_wire(),
            "affected": list(self.affected),
            "acceptedBy": list(self.accepted_by),
            "status": self.status,
            "at": format_time(self.at),
        }


@dataclass(frozen=True)
class Meeting:
    """A meeting room opened by a blocking overlap.

    ``proposals`` are the proposed resolutions (:class:`Proposal`); ``resolution`` is what
    closed the meeting: the applied resolution (:class:`Decided`) or a dissolution;
    ``arbitrators`` are the CODEOWNERS owners asked to decide after an escalation;
    ``notices`` are notifications to participants (e.g. a serialized first expired).
    """

    id: str
    repo: str
    status: MeetingStatus
    revision: int
    participants: tuple[str, ...]
    contested_targets: tuple[ContestedTarget, ...]
    deadline: datetime
    created_at: datetime
    updated_at: datetime
    proposals: tuple[Proposal, ...] = ()
    resolution: Outcome | None = None
    options: tuple[str, ...] = field(default=RESOLUTION_TYPES)
    arbitrators: tuple[str, ...] = ()
    escalation: dict[str, object] | None = None
    notices: tuple[dict[str, object], ...] = ()
    last_event_id: str | None = None
    #: The claim that asked for this room over a ``potential`` overlap (None: opened by
    #: a blocking overlap), see :mod:`detente.domain.meetings.on_request`.
    requested_by: str | None = None
    #: The predicted merge conflicts that opened (or joined) this room, each
    #: ``{claimIds, against, files, symbols, hunks}`` (:mod:`detente.domain.checks.merge`);
    #: empty for a room opened by an overlap.
    merge_conflicts: tuple[dict[str, Any], ...] = ()

    @cached_property
    def solo_claims(self) -> frozenset[str]:
        """The claims a contested target names alone (a user's edit met theirs: a
        deferred memory patch), computed once per record."""
        return frozenset(self.solo_targets.values())

    @cached_property
    def solo_targets(self) -> dict[str, str]:
        """``target -> the one claim it names`` for each contested target naming one
        claim (read-only; a join derives its record's from the one before)."""
        return {t.target: t.claim_ids[0] for t in self.contested_targets if len(t.claim_ids) == 1}

    @cached_property
    def party_set(self) -> frozenset[str]:
        """``participants`` as a set, computed once per record (a join derives its
        record's from the one before: :mod:`detente.domain.meetings.evolve`)."""
        return frozenset(self.participants)

    @cached_property
    def target_positions(self) -> dict[str, int]:
        """``target -> its index in contested_targets`` (read-only; a join derives its
        record's from the one before)."""
        return {t.target: i for i, t in enumerate(self.contested_targets)}

    @cached_property
    def targets_wire(self) -> list[dict[str, Any]]:
        """``contestedTargets`` as API.md entries, each target's built once
        (:attr:`ContestedTarget.wire`); read-only."""
        return [t.wire for t in self.contested_targets]

    def __getstate__(self) -> dict[str, Any]:
        return _without_caches(self.__dict__)


#: The per-record caches of :class:`Meeting` and :class:`ContestedTarget` (derived from
#: their fields): never pickled into a snapshot, computed again when asked.
_CACHES = frozenset(
    {"wire", "solo_claims", "solo_targets", "party_set", "target_positions", "targets_wire"}
)


def _without_caches(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k not in _CACHES}


def meeting_to_wire(meeting: Meeting) -> dict[str, Any]:
    """A meeting as the API.md record: a new dict and lists, whose contested-target
    entries are each target's own (:attr:`ContestedTarget.wire`, shared and read-only:
    a caller changes a copy, as :func:`detente.client.inprocess.plain` makes)."""
    return {
        "id": meeting.id,
        "repo": meeting.repo,
        "status": meeting.status.value,
        "revision": meeting.revision,
        "participants": list(meeting.participants),
        "contestedTargets": list(meeting.targets_wire),
        "proposals": [p.to_wire() for p in meeting.proposals],
        "deadline": format_time(meeting.deadline),
        "resolution": (
            meeting.resolution.to_wire() if isinstance(meeting.resolution, Decided) else None
        ),
        "outcome": _outcome(meeting),
        "dissolution": (
            {"reason": meeting.resolution.reason}
            if isinstance(meeting.resolution, Dissolved)
            else None
        ),
        "options": list(meeting.options),
        "arbitrators": list(meeting.arbitrators),
        "escalation": meeting.escalation,
        "notices": list(meeting.notices),
        "requestedBy": meeting.requested_by,
        "mergeConflicts": [dict(c) for c in meeting.merge_conflicts],
        "createdAt": format_time(meeting.created_at),
        "updatedAt": format_time(meeting.updated_at),
    }


def _outcome(meeting: Meeting) -> str | None:
    """How a closed meeting ended: ``resolved`` (a resolution took effect) or
    ``dissolved`` (no contest was left; ``resolution`` is null, ``dissolution`` says why);
    None while open or escalated."""
    if meeting.status is not MeetingStatus.RESOLVED:
        return None
    return "dissolved" if isinstance(meeting.resolution, Dissolved) else "resolved"


def past_deadline(meetings: Iterable[Meeting], now: datetime) -> bool:
    """True when one of ``meetings`` is open and past its deadline (``now``: aware UTC)."""
    return any(m.status is MeetingStatus.OPEN and m.deadline <= now for m in meetings)
