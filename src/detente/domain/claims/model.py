"""The claim record and its parts: agent, lease, memory impacts, abandonment.

All records are frozen dataclasses; the fold (:mod:`detente.domain.claims.evolve`)
replaces them wholesale on every event. Times are timezone-aware UTC ``datetime``s; durations are
integer seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from enum import StrEnum
from operator import attrgetter
from typing import Any

from detente.domain.claims.declared import NO_FACTS, Declared


class ClaimStatus(StrEnum):
    """The twelve claim statuses of API.md."""

    DRAFT = "draft"
    ANNOUNCED = "announced"
    NEGOTIATING = "negotiating"
    ACTIVE = "active"
    BLOCKED = "blocked"
    SUSPENDED = "suspended"
    READY_FOR_REVIEW = "ready_for_review"
    INTEGRATED = "integrated"
    COMPLETED = "completed"
    ABANDONED = "abandoned"
    EXPIRED = "expired"
    TAKEN_OVER = "taken_over"


#: Statuses whose lease is running: the holder must heartbeat or the claim expires.
LEASED_STATUSES = frozenset(
    {
        ClaimStatus.ANNOUNCED,
        ClaimStatus.NEGOTIATING,
        ClaimStatus.ACTIVE,
        ClaimStatus.BLOCKED,
        ClaimStatus.SUSPENDED,
        ClaimStatus.READY_FOR_REVIEW,
    }
)

#: Statuses whose targets other claims must respect. An expired claim still holds its
#: targets (authority frozen, work not handed to anyone silently): only a takeover or an
#: abandonment releases them.
HOLDING_STATUSES = LEASED_STATUSES | {ClaimStatus.EXPIRED}

#: Statuses in which a claim may change what it declares (its targets, its objective).
DECLARABLE_STATUSES = frozenset(
    {ClaimStatus.ACTIVE, ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED, ClaimStatus.SUSPENDED}
)


@dataclass(frozen=True, slots=True)
class Agent:
    """Who holds a claim: a stable agent id, a display name and the session."""

    id: str
    name: str
    session_id: str | None = None


#: Other spellings of a memory impact's mode, and the mode each stands for.
MEMORY_MODE_ALIASES: dict[str, str] = {"append": "append_only"}


def canonical_memory_mode(mode: str) -> str:
    """The recorded spelling of a memory impact's ``mode`` (``append`` -> ``append_only``;
    anything else unchanged, for the decision to accept or refuse)."""
    return MEMORY_MODE_ALIASES.get(mode, mode)


@dataclass(frozen=True, slots=True)
class MemoryImpact:
    """A memory file the claim will change; ``sections`` empty means the whole file."""

    path: str
    mode: str = "section"
    sections: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ContractChange:
    """An expected contract change: ``{type, area, change}`` (API.md claims).

    Overlap is decided on ``area`` (two claims changing one contract area meet); a plain
    string seed is an ``area`` with no ``type`` or ``change``.
    """

    area: str
    type: str | None = None
    change: str | None = None


@dataclass(frozen=True, slots=True)
class Lease:
    """Liveness proof of a claim. ``expires_at`` is an absolute, persisted deadline."""

    id: str
    revision: int
    ttl_seconds: int
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class Abandonment:
    """What an explicit release recorded so a successor can continue."""

    head_commit: str | None
    diff_summary: dict[str, object]
    memory_state: dict[str, object]
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class SemanticRecord:
    """What a claim's objective resembled when it was computed (advisory only).

    Stored on ``claim.announced`` or ``claim.objective_changed`` as ``{mode, threshold,
    similar: [{claimId, score}], at?}``; the fold keeps it as this record (10,000 claims
    with 10 similar holders each held 23 MB of small dicts, about a fifth of that as
    tuples).

    Attributes:
        mode: ``semantic`` or ``lexical``.
        threshold: the score a holder had to reach.
        similar: ``(claim id, score)`` of the similar holders, by claim id.
        at: when it was computed for a changed objective (None: at the claim's opening).
    """

    mode: str
    threshold: float
    similar: tuple[tuple[str, float], ...] = ()
    at: str | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim record (API.md "Claims").

    ``paths`` are the granted path patterns (normalised); ``pending_paths`` are patterns a
    scope change asked for that wait on a negotiation. ``granted`` turns True the first
    time the claim becomes ``active``: only then do its ``paths`` carry authority over
    others' writes (a claim still negotiating its opening never blocks the holder it
    contests). ``revision`` counts every event of the claim's stream; ``fencing_token``
    is fixed at grant time and monotonic per repo. ``carve_outs`` pairs a pattern of
    ``paths``/``pending_paths`` with the patterns a split resolution cut out of it (the
    targets assigned to another claim): the claim covers what the pattern matches minus
    its carve-outs.
    """

    id: str
    repo: str
    objective: str
    status: ClaimStatus
    revision: int
    agent: Agent
    base_commit: str
    branch: str | None
    worktree: str | None
    paths: tuple[str, ...]
    modules: tuple[str, ...]
    symbols: tuple[str, ...]
    expected_contract_changes: tuple[ContractChange, ...]
    test_responsibility: tuple[str, ...]
    memory_impacts: tuple[MemoryImpact, ...]
    lease: Lease
    fencing_token: int
    created_at: datetime
    updated_at: datetime
    pending_paths: tuple[str, ...] = ()
    meeting_ids: tuple[str, ...] = ()
    status_reason: str | None = None
    abandonment: Abandonment | None = None
    last_event_id: str | None = None
    advisory: bool = False
    #: What its objective resembled when it opened or last changed (advisory only).
    semantic: SemanticRecord | None = None
    takeover: dict[str, object] | None = None
    successor_id: str | None = None
    granted: bool = False
    evidence: dict[str, Any] | None = None
    integration: dict[str, Any] | None = None
    test_plan: dict[str, tuple[str, ...]] | None = None
    #: The authenticated principal that opened the claim (``local`` without auth); only
    #: it (or an ``admin``) may renew, change, complete or abandon the claim.
    principal: str = "local"
    #: Per held pattern, the paths carved out of it by a split (another claim's targets).
    carve_outs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: When its ``pending_paths`` were asked for, as a place in line among waiters:
    #: ``(the last fencing token handed out then, the repository's ask number)`` (None:
    #: no scope change has parked targets). See :func:`detente.domain.waiting_line.arrival`.
    asked: tuple[int, int] | None = None
    #: The optional facts it declared when it opened (:mod:`.declared`).
    declared: Declared = NO_FACTS

    def with_lease(self, lease: Lease) -> Claim:
        """This claim holding ``lease``, every other field the same (a renewal's copy).

        Built positionally from the fields read at once: ``dataclasses.replace`` walks
        the field definitions and passes keywords, twice the cost, on every heartbeat.
        """
        values = list(_CLAIM_VALUES(self))
        values[_LEASE_INDEX] = lease
        return Claim(*values)

    def carved(self, pattern: str) -> tuple[str, ...]:
        """The carve-outs of one of this claim's patterns (empty: none)."""
        for held, cuts in self.carve_outs:
            if held == pattern:
                return cuts
        return ()

    @property
    def contract_areas(self) -> tuple[str, ...]:
        """The contract areas this claim changes (what contract overlap compares)."""
        return tuple(dict.fromkeys(c.area for c in self.expected_contract_changes))

    @property
    def holding(self) -> bool:
        """True while other claims must respect this claim's targets.

        An advisory claim (an MCP file lease) is released by expiry, and so is a claim
        that expired before it was ever granted (it waited in a negotiation, never held
        authority and has no work to freeze); a granted protocol claim keeps holding while
        expired, until taken over or abandoned.
        """
        if self.status is ClaimStatus.EXPIRED and (self.advisory or not self.granted):
            return False
        return self.status in HOLDING_STATUSES

    @property
    def leased(self) -> bool:
        """True while the lease runs (the claim expires at ``lease.expires_at``)."""
        return self.status in LEASED_STATUSES


#: Every field of a :class:`Claim`, in declaration order (what :meth:`Claim.with_lease`
#: copies).
_CLAIM_FIELDS = tuple(f.name for f in fields(Claim))
_CLAIM_VALUES = attrgetter(*_CLAIM_FIELDS)
_LEASE_INDEX = _CLAIM_FIELDS.index("lease")
