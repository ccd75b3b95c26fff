"""Commands in, events out: ``decide(state, command, now, ids) -> list[Event]``.

Each ``decide_*`` function is pure: it reads the projection, the command, the time the
server's clock gave and an id source, and either raises a typed
:class:`~detente.errors.DetenteError` (nothing is written) or returns the events that
record the change. Order of checks, for good messages and safe races:

1. the record exists (``not_found``);
2. the lease is still alive (``lease_expired``): a heartbeat racing expiry loses;
3. the expected revisions match (``revision_conflict`` with the current record);
4. the state machine allows the move (``invalid_transition``);
5. the input is valid (``validation_error``) and overlap analysis decides the status.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.analysis import Targets, find_overlaps
from detente.domain.model import (
    Agent,
    Claim,
    ClaimStatus,
    MeetingStatus,
    MemoryImpact,
    Overlap,
    Severity,
)
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.state import RepoState
from detente.domain.transitions import require
from detente.domain.wire import agent_to_wire, claim_to_wire, memory_impact_to_wire
from detente.errors import (
    InvalidTransition,
    LeaseExpired,
    NotFoundError,
    RevisionConflict,
    ValidationError,
)

IdSource = Callable[[str], str]
"""Returns a fresh id for a prefix (``evt``, ``clm``, ``mtg``, ``lse``)."""

_OID = re.compile(r"^[0-9a-f]{4,64}$")


@dataclass(frozen=True)
class Policy:
    """Tunable limits. Durations in seconds."""

    min_ttl_seconds: int = 1
    max_ttl_seconds: int = 7 * 24 * 3600
    meeting_deadline_seconds: int = 15 * 60
    max_targets: int = 1000
    max_text: int = 4000


DEFAULT_POLICY = Policy()


@dataclass(frozen=True)
class OpenClaim:
    """Seed of a new claim (API.md ``POST /v1/claims``)."""

    repo: str
    objective: str
    base_commit: str
    agent: Agent
    lease_ttl_seconds: int
    paths: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    expected_contract_changes: tuple[str, ...] = ()
    test_responsibility: tuple[str, ...] = ()
    deployment_responsibility: str | None = None
    memory_impacts: tuple[MemoryImpact, ...] = ()
    branch: str | None = None
    worktree: str | None = None
    claim_id: str | None = None


@dataclass(frozen=True)
class RenewLease:
    claim_id: str
    expected_lease_revision: int
    expected_claim_revision: int
    ttl_seconds: int


@dataclass(frozen=True)
class ChangeScope:
    claim_id: str
    expected_claim_revision: int
    add_paths: tuple[str, ...] = ()
    remove_paths: tuple[str, ...] = ()
    add_modules: tuple[str, ...] = ()
    add_symbols: tuple[str, ...] = ()
    add_expected_contract_changes: tuple[str, ...] = ()
    reason: str | None = None


@dataclass(frozen=True)
class SetStatus:
    """Suspend, resume or abandon. ``details`` carries the abandonment record."""

    claim_id: str
    expected_claim_revision: int
    to: ClaimStatus
    reason: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------- helpers


def get_claim(state: RepoState, claim_id: str) -> Claim:
    """The claim, or ``not_found``."""
    claim = state.claims.get(claim_id)
    if claim is None:
        raise NotFoundError(f"no claim {claim_id!r} in repository {state.repo!r}", claimId=claim_id)
    return claim


def check_claim_revision(claim: Claim, expected: int) -> None:
    """``revision_conflict`` (with the current record) unless ``expected`` is current."""
    if expected != claim.revision:
        raise RevisionConflict(
            f"claim {claim.id} is at revision {claim.revision}, not {expected}: "
            "re-read it and decide again",
            expected=expected,
            actual=claim.revision,
            current=claim_to_wire(claim),
            event_ids=[claim.last_event_id] if claim.last_event_id else [],
        )


def check_alive(claim: Claim, now: datetime) -> None:
    """``lease_expired`` when the claim's lease has run out (or it is already expired)."""
    if claim.status is ClaimStatus.EXPIRED or (claim.leased and now >= claim.lease.expires_at):
        raise LeaseExpired(
            f"the lease of claim {claim.id} expired at {format_time(claim.lease.expires_at)}; "
            "its authority is frozen (take it over to continue the work)",
            current=claim_to_wire(claim),
            expiredAt=format_time(claim.lease.expires_at),
        )


def _text(value: str, fld: str, policy: Policy, *, required: bool = True) -> str:
    value = value.strip()
    if required and not value:
        raise ValidationError(f"{fld} must not be empty", field=fld)
    if len(value) > policy.max_text:
        raise ValidationError(f"{fld} is longer than {policy.max_text} characters", field=fld)
    return value


def _ttl(ttl: int, fld: str, policy: Policy) -> int:
    if isinstance(ttl, bool) or not isinstance(ttl, int):
        raise ValidationError(f"{fld} must be an integer number of seconds", field=fld)
    if not policy.min_ttl_seconds <= ttl <= policy.max_ttl_seconds:
        raise ValidationError(
            f"{fld} must be between {policy.min_ttl_seconds} and {policy.max_ttl_seconds} "
            f"seconds, got {ttl}",
            field=fld,
        )
    return ttl


def _patterns(state: RepoState, raw: Sequence[str], fld: str, policy: Policy) -> tuple[str, ...]:
    if len(raw) > policy.max_targets:
        raise ValidationError(f"{fld} lists more than {policy.max_targets} targets", field=fld)
    out: list[str] = []
    for i, item in enumerate(raw):
        pattern = normalize_pattern(item, case_insensitive=state.case_insensitive, field=f"{fld}[{i}]")
        if pattern not in out:
            out.append(pattern)
    return tuple(out)


def _names(raw: Sequence[str], fld: str, policy: Policy) -> tuple[str, ...]:
    out: list[str] = []
    for i, item in enumerate(raw):
        value = _text(item, f"{fld}[{i}]", policy)
        if value not in out:
            out.append(value)
    return tuple(out)


def _blocking(overlaps: Sequence[Overlap]) -> list[Overlap]:
    return [o for o in overlaps if o.severity is Severity.BLOCKING]


def _meeting_events(
    state: RepoState,
    claim_id: str,
    blocking: Sequence[Overlap],
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> tuple[str, list[ev.Event]]:
    """Join an open meeting of one of the holders, or open a new one. Returns its id."""
    contested = [
        {
            "target": t.witness,
            "claimIds": sorted({claim_id, o.claim_id}),
            "reason": f"{o.kind.value} overlap: {t.mine!r} vs {t.theirs!r}",
        }
        for o in blocking
        for t in o.targets
    ]
    holders = {o.claim_id for o in blocking}
    for meeting in sorted(state.meetings.values(), key=lambda m: m.created_at):
        if meeting.status is MeetingStatus.OPEN and holders & set(meeting.participants):
            joined = ev.Event(
                id=ids("evt"),
                type=ev.MEETING_JOINED,
                subject=ev.meeting_subject(meeting.id),
                data={"meetingId": meeting.id, "claimId": claim_id, "contestedTargets": contested},
            )
            return meeting.id, [joined]
    meeting_id = ids("mtg")
    opened = ev.Event(
        id=ids("evt"),
        type=ev.MEETING_OPENED,
        subject=ev.meeting_subject(meeting_id),
        data={
            "meetingId": meeting_id,
            "participants": sorted(holders) + [claim_id],
            "contestedTargets": contested,
            "deadline": format_time(now + timedelta(seconds=policy.meeting_deadline_seconds)),
        },
    )
    return meeting_id, [opened]


# ---------------------------------------------------------------------------- decide


def decide_open(
    state: RepoState, cmd: OpenClaim, now: datetime, ids: IdSource, policy: Policy = DEFAULT_POLICY
) -> list[ev.Event]:
    """Announce a claim, grant its lease and fencing token, and activate or negotiate.

    A multi-target claim is atomic: either every target is granted (``active``) or none is
    (``negotiating`` with a meeting listing each contested target and its holders once).

    Raises:
        ValidationError: ``validation_error`` naming the field.
    """
    objective = _text(cmd.objective, "objective", policy)
    base = cmd.base_commit.strip().lower()
    if not _OID.match(base):
        raise ValidationError("baseCommit must be a commit object id (hex)", field="baseCommit")
    ttl = _ttl(cmd.lease_ttl_seconds, "leaseTtlSeconds", policy)
    paths = _patterns(state, cmd.paths, "paths", policy)
    modules = _names(cmd.modules, "modules", policy)
    symbols = _names(cmd.symbols, "symbols", policy)
    contracts = _names(cmd.expected_contract_changes, "expectedContractChanges", policy)
    memory = tuple(
        MemoryImpact(
            path=normalize_pattern(
                m.path, case_insensitive=state.case_insensitive, field=f"memoryImpacts[{i}].path"
            ),
            mode=m.mode,
            sections=tuple(dict.fromkeys(m.sections)),
        )
        for i, m in enumerate(cmd.memory_impacts)
    )
    if not (paths or modules or symbols or contracts or memory):
        raise ValidationError(
            "a claim must name at least one target (paths, modules, symbols, "
            "expectedContractChanges or memoryImpacts)",
            field="paths",
        )
    if cmd.claim_id is not None and cmd.claim_id in state.claims:
        raise ValidationError(f"claim id {cmd.claim_id!r} is already used", field="id")
    _text(cmd.agent.id, "agent.id", policy)
    _text(cmd.agent.name, "agent.name", policy)

    claim_id = cmd.claim_id or ids("clm")
    token = state.last_fencing_token + 1
    announced = ev.Event(
        id=ids("evt"),
        type=ev.CLAIM_ANNOUNCED,
        subject=ev.claim_subject(claim_id),
        data={
            "claimId": claim_id,
            "status": ClaimStatus.ANNOUNCED.value,
            "objective": objective,
            "agent": agent_to_wire(cmd.agent),
            "baseCommit": base,
            "branch": cmd.branch,
            "worktree": cmd.worktree,
            "paths": list(paths),
            "modules": list(modules),
            "symbols": list(symbols),
            "expectedContractChanges": list(contracts),
            "testResponsibility": list(_names(cmd.test_responsibility, "testResponsibility", policy)),
            "deploymentResponsibility": cmd.deployment_responsibility,
            "memoryImpacts": [memory_impact_to_wire(m) for m in memory],
            "lease": {
                "id": ids("lse"),
                "revision": 1,
                "ttlSeconds": ttl,
                "expiresAt": format_time(now + timedelta(seconds=ttl)),
            },
            "fencingToken": token,
        },
    )
    targets = Targets(paths=paths, modules=modules, symbols=symbols, contracts=contracts, memory=memory)
    blocking = _blocking(find_overlaps(state, targets))
    if not blocking:
        activated = ev.Event(
            id=ids("evt"),
            type=ev.CLAIM_ACTIVATED,
            subject=ev.claim_subject(claim_id),
            data={"claimId": claim_id, "status": ClaimStatus.ACTIVE.value, "reason": "no overlap"},
        )
        return [announced, activated]
    meeting_id, meeting_events = _meeting_events(state, claim_id, blocking, now, ids, policy)
    negotiating = ev.Event(
        id=ids("evt"),
        type=ev.CLAIM_NEGOTIATING,
        subject=ev.claim_subject(claim_id),
        data={
            "claimId": claim_id,
            "status": ClaimStatus.NEGOTIATING.value,
            "meetingId": meeting_id,
            "reason": "blocking overlap with " + ", ".join(o.claim_id for o in blocking),
        },
    )
    return [announced, *meeting_events, negotiating]


def decide_renew(
    state: RepoState, cmd: RenewLease, now: datetime, ids: IdSource, policy: Policy = DEFAULT_POLICY
) -> list[ev.Event]:
    """Extend only the lease: ``expiresAt = now + ttlSeconds``.

    Raises:
        NotFoundError, LeaseExpired, RevisionConflict (claim or lease revision),
        InvalidTransition (no running lease), ValidationError (ttl).
    """
    claim = get_claim(state, cmd.claim_id)
    check_alive(claim, now)
    check_claim_revision(claim, cmd.expected_claim_revision)
    if cmd.expected_lease_revision != claim.lease.revision:
        raise RevisionConflict(
            f"lease of claim {claim.id} is at revision {claim.lease.revision}, "
            f"not {cmd.expected_lease_revision}",
            expected=cmd.expected_lease_revision,
            actual=claim.lease.revision,
            current=claim_to_wire(claim),
            event_ids=[claim.last_event_id] if claim.last_event_id else [],
        )
    if not claim.leased:
        raise InvalidTransition(
            claim.status.value,
            claim.status.value,
            f"claim {claim.id} is {claim.status.value}: it has no running lease to renew",
        )
    ttl = _ttl(cmd.ttl_seconds, "ttlSeconds", policy)
    return [
        ev.Event(
            id=ids("evt"),
            type=ev.LEASE_RENEWED,
            subject=ev.claim_subject(claim.id),
            data={
                "claimId": claim.id,
                "leaseId": claim.lease.id,
                "leaseRevision": claim.lease.revision + 1,
                "ttlSeconds": ttl,
                "expiresAt": format_time(now + timedelta(seconds=ttl)),
            },
        )
    ]


def decide_expiry(state: RepoState, now: datetime, ids: IdSource) -> list[ev.Event]:
    """``claim.expired`` for every leased claim whose deadline is at or before ``now``."""
    out: list[ev.Event] = []
    for claim in state.due_for_expiry(now):
        require(claim.status, ClaimStatus.EXPIRED, claim_id=claim.id)
        out.append(
            ev.Event(
                id=ids("evt"),
                type=ev.CLAIM_EXPIRED,
                subject=ev.claim_subject(claim.id),
                data={
                    "claimId": claim.id,
                    "status": ClaimStatus.EXPIRED.value,
                    "from": claim.status.value,
                    "deadline": format_time(claim.lease.expires_at),
                    "reason": f"lease deadline {format_time(claim.lease.expires_at)} passed",
                },
            )
        )
    return out


_SCOPE_STATUSES = frozenset(
    {ClaimStatus.ACTIVE, ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED, ClaimStatus.SUSPENDED}
)


def decide_scope_change(
    state: RepoState, cmd: ChangeScope, now: datetime, ids: IdSource, policy: Policy = DEFAULT_POLICY
) -> list[ev.Event]:
    """Add or remove targets. Additions re-run overlap analysis: a blocking overlap parks
    the new targets in ``pendingPaths`` and moves the claim to ``negotiating`` (targets
    already granted keep their authority); narrowing never negotiates.

    Raises:
        NotFoundError, LeaseExpired, RevisionConflict, InvalidTransition, ValidationError.
    """
    claim = get_claim(state, cmd.claim_id)
    check_alive(claim, now)
    check_claim_revision(claim, cmd.expected_claim_revision)
    if claim.status not in _SCOPE_STATUSES:
        raise InvalidTransition(
            claim.status.value,
            ClaimStatus.NEGOTIATING.value,
            f"the scope of claim {claim.id} cannot change while it is {claim.status.value}",
        )
    add = _patterns(state, cmd.add_paths, "addPaths", policy)
    remove = _patterns(state, cmd.remove_paths, "removePaths", policy)
    held = claim.paths + claim.pending_paths
    for i, pattern in enumerate(remove):
        if pattern not in held:
            raise ValidationError(
                f"removePaths[{i}] {pattern!r} is not one of the claim's paths", field=f"removePaths[{i}]"
            )
    new_paths = tuple(p for p in add if p not in held)
    modules = tuple(m for m in _names(cmd.add_modules, "addModules", policy) if m not in claim.modules)
    symbols = tuple(s for s in _names(cmd.add_symbols, "addSymbols", policy) if s not in claim.symbols)
    contracts = tuple(
        c
        for c in _names(cmd.add_expected_contract_changes, "addExpectedContractChanges", policy)
        if c not in claim.expected_contract_changes
    )
    kept = tuple(p for p in claim.paths if p not in remove)
    pending = tuple(p for p in claim.pending_paths if p not in remove)
    if not (kept or pending or new_paths or claim.modules or modules or claim.symbols or symbols
            or claim.expected_contract_changes or contracts or claim.memory_impacts):
        raise ValidationError("a scope change must leave at least one target", field="removePaths")
    if not (new_paths or modules or symbols or contracts or remove):
        raise ValidationError("the scope change adds or removes nothing", field="addPaths")

    blocking = _blocking(
        find_overlaps(
            state,
            Targets(paths=new_paths, modules=modules, symbols=symbols, contracts=contracts),
            exclude=claim.id,
        )
    )
    status = claim.status
    out: list[ev.Event] = []
    if blocking:
        pending = pending + new_paths
        if claim.status is not ClaimStatus.NEGOTIATING:
            require(claim.status, ClaimStatus.NEGOTIATING, claim_id=claim.id)
        status = ClaimStatus.NEGOTIATING
    else:
        kept = kept + new_paths
    reason = _text(cmd.reason or "", "reason", policy, required=False) or None
    out.append(
        ev.Event(
            id=ids("evt"),
            type=ev.CLAIM_SCOPE_CHANGED,
            subject=ev.claim_subject(claim.id),
            data={
                "claimId": claim.id,
                "addPaths": list(new_paths),
                "removePaths": list(remove),
                "paths": list(kept),
                "pendingPaths": list(pending),
                "modules": list(claim.modules + modules),
                "symbols": list(claim.symbols + symbols),
                "expectedContractChanges": list(claim.expected_contract_changes + contracts),
                "reason": reason,
            },
        )
    )
    if blocking:
        meeting_id, meeting_events = _meeting_events(state, claim.id, blocking, now, ids, policy)
        out.extend(meeting_events)
        out.append(
            ev.Event(
                id=ids("evt"),
                type=ev.CLAIM_NEGOTIATING,
                subject=ev.claim_subject(claim.id),
                data={
                    "claimId": claim.id,
                    "status": status.value,
                    "meetingId": meeting_id,
                    "reason": "scope change overlaps " + ", ".join(o.claim_id for o in blocking),
                },
            )
        )
    return out


_STATUS_EVENT = {
    ClaimStatus.SUSPENDED: ev.CLAIM_SUSPENDED,
    ClaimStatus.ACTIVE: ev.CLAIM_RESUMED,
    ClaimStatus.ABANDONED: ev.CLAIM_ABANDONED,
}


def decide_status(
    state: RepoState, cmd: SetStatus, now: datetime, ids: IdSource, policy: Policy = DEFAULT_POLICY
) -> list[ev.Event]:
    """Suspend (to ``suspended``), resume (to ``active``) or abandon (to ``abandoned``).

    Abandoning needs no live lease (an expired claim can still be released explicitly);
    suspend and resume do.

    Raises:
        NotFoundError, LeaseExpired, RevisionConflict, InvalidTransition, ValidationError.
    """
    claim = get_claim(state, cmd.claim_id)
    if cmd.to not in _STATUS_EVENT:
        raise ValidationError(f"cannot set status {cmd.to.value!r} directly", field="status")
    if cmd.to is not ClaimStatus.ABANDONED:
        check_alive(claim, now)
    check_claim_revision(claim, cmd.expected_claim_revision)
    target = cmd.to
    if target is ClaimStatus.ACTIVE and claim.status is ClaimStatus.SUSPENDED and claim.pending_paths:
        target = ClaimStatus.NEGOTIATING
    if target is ClaimStatus.ACTIVE and claim.status is not ClaimStatus.SUSPENDED:
        raise InvalidTransition(
            claim.status.value, "active", f"only a suspended claim can resume (it is {claim.status.value})"
        )
    require(claim.status, target, claim_id=claim.id)
    reason = _text(cmd.reason or "", "reason", policy, required=False) or None
    data: dict[str, Any] = {
        "claimId": claim.id,
        "status": target.value,
        "from": claim.status.value,
        "reason": reason,
    }
    if cmd.to is ClaimStatus.ABANDONED:
        data.update(
            headCommit=cmd.details.get("headCommit"),
            diffSummary=cmd.details.get("diffSummary") or {},
            memoryState=cmd.details.get("memoryState") or {},
        )
    return [ev.Event(id=ids("evt"), type=_STATUS_EVENT[cmd.to], subject=ev.claim_subject(claim.id), data=data)]
