"""Claim decisions: renew, expire, change scope, set status (commands in, events out).

Opening a claim is decided in :mod:`.opening`, a takeover in :mod:`.takeover`; every one
has the shape ``decide(state, command, now, ids) -> list[Event]``.

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

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.claims.commands import ChangeScope, RenewLease, SetStatus
from detente.domain.claims.guards import check_alive, check_claim_revision, get_claim
from detente.domain.claims.model import DECLARABLE_STATUSES, Claim, ClaimStatus
from detente.domain.claims.record import claim_to_wire
from detente.domain.claims.transitions import require
from detente.domain.claims.wire import contract_to_wire
from detente.domain.meetings.decide import blocking_only, meeting_events_for
from detente.domain.memory.touched import memory_state
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.carveouts import carved_may_overlap
from detente.domain.policy import DEFAULT_POLICY, IdSource, Policy
from detente.domain.state import RepoState
from detente.domain.validation import (
    contract_list,
    identifier_list,
    module_list,
    pattern_list,
    symbol_list,
    text_field,
    ttl_field,
)
from detente.errors import InvalidTransition, OverlapBlocking, RevisionConflict, ValidationError


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
    ttl = ttl_field(cmd.ttl_seconds, "ttlSeconds", policy)
    return [
        ev.claim_event(
            ids,
            claim.id,
            ev.LEASE_RENEWED,
            leaseId=claim.lease.id,
            leaseRevision=claim.lease.revision + 1,
            ttlSeconds=ttl,
            expiresAt=format_time(now + timedelta(seconds=ttl)),
        )
    ]


def decide_expiry(state: RepoState, now: datetime, ids: IdSource) -> list[ev.Event]:
    """``claim.expired`` for every leased claim whose deadline is at or before ``now``."""
    out: list[ev.Event] = []
    for claim in state.claims.due_for_expiry(now):
        require(claim.status, ClaimStatus.EXPIRED, claim_id=claim.id)
        out.append(
            ev.status_event(
                ids,
                claim.id,
                ev.CLAIM_EXPIRED,
                to=ClaimStatus.EXPIRED.value,
                was=claim.status.value,
                reason=f"lease deadline {format_time(claim.lease.expires_at)} passed",
                deadline=format_time(claim.lease.expires_at),
            )
        )
    return out


#: Leases one ``lease.checkpoint`` event names at most (a larger set takes several).
CHECKPOINT_CHUNK = 500


def decide_lease_checkpoint(
    state: RepoState, now: datetime, ids: IdSource, policy: Policy = DEFAULT_POLICY
) -> list[ev.Event]:
    """``lease.checkpoint`` events naming every lease moved by row (a renewal that
    appended nothing) since the last checkpoint, once the oldest of them is
    ``policy.lease_checkpoint_seconds`` old; nothing before. Each event names at most
    :data:`CHECKPOINT_CHUNK` leases (``{claimId, leaseId, leaseRevision, ttlSeconds,
    expiresAt}``, by claim id)."""
    book = state.claims
    if not book.checkpoint_due(now, timedelta(seconds=policy.lease_checkpoint_seconds)):
        return []
    entries = [
        {
            "claimId": claim_id,
            "leaseId": lease.id,
            "leaseRevision": lease.revision,
            "ttlSeconds": lease.ttl_seconds,
            "expiresAt": format_time(lease.expires_at),
        }
        for claim_id, lease in sorted(book.unchecked.items())
    ]
    subject = ev.lease_subject(state.repo)
    return [
        ev.stream_event(ids, subject, ev.LEASE_CHECKPOINT, leases=entries[i : i + CHECKPOINT_CHUNK])
        for i in range(0, len(entries), CHECKPOINT_CHUNK)
    ]


def decide_scope_change(
    state: RepoState,
    cmd: ChangeScope,
    now: datetime,
    ids: IdSource,
    policy: Policy = DEFAULT_POLICY,
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
    if claim.status not in DECLARABLE_STATUSES:
        raise InvalidTransition(
            claim.status.value,
            ClaimStatus.NEGOTIATING.value,
            f"the scope of claim {claim.id} cannot change while it is {claim.status.value}",
        )
    add = pattern_list(state, cmd.add_paths, "addPaths", policy)
    remove = pattern_list(state, cmd.remove_paths, "removePaths", policy)
    held = claim.paths + claim.pending_paths
    carve_outs = _carve_out_removed(claim, remove)
    remove = tuple(p for p in remove if p in held)
    drop_modules = _held_names(claim.modules, cmd.remove_modules, "removeModules", policy)
    drop_symbols = _held_names(claim.symbols, cmd.remove_symbols, "removeSymbols", policy)
    kept_modules = tuple(m for m in claim.modules if m not in drop_modules)
    kept_symbols = tuple(s for s in claim.symbols if s not in drop_symbols)
    new_paths = tuple(p for p in add if p not in held)
    modules = tuple(
        m for m in module_list(cmd.add_modules, "addModules", policy) if m not in kept_modules
    )
    symbols = tuple(
        s for s in symbol_list(cmd.add_symbols, "addSymbols", policy) if s not in kept_symbols
    )
    contracts = tuple(
        c
        for c in contract_list(
            cmd.add_expected_contract_changes, "addExpectedContractChanges", policy
        )
        if c not in claim.expected_contract_changes
    )
    kept = tuple(p for p in claim.paths if p not in remove)
    pending = tuple(p for p in claim.pending_paths if p not in remove)
    if not (
        kept
        or pending
        or new_paths
        or kept_modules
        or modules
        or kept_symbols
        or symbols
        or claim.expected_contract_changes
        or contracts
        or claim.memory_impacts
    ):
        raise ValidationError(
            "a scope change must leave at least one target (to give up the last one, "
            "abandon or complete the claim)",
            field="removeSymbols"
            if drop_symbols
            else "removeModules"
            if drop_modules
            else "removePaths",
        )
    carved = carve_outs != {p: list(c) for p, c in claim.carve_outs}
    if not (
        new_paths
        or modules
        or symbols
        or contracts
        or remove
        or carved
        or drop_modules
        or drop_symbols
    ):
        raise ValidationError("the scope change adds or removes nothing", field="addPaths")

    blocking = blocking_only(
        find_overlaps(
            state,
            Targets(
                paths=new_paths,
                modules=modules,
                symbols=symbols,
                contracts=tuple(c.area for c in contracts if c.area not in claim.contract_areas),
                base_commit=claim.base_commit,
            ),
            exclude=claim.id,
        )
    )
    for overlap in blocking:
        settled = state.meetings.resolved_pairs.get(frozenset({claim.id, overlap.claim_id}))
        if settled is not None:
            raise OverlapBlocking(
                f"meeting {settled.meeting_id} already settled these targets "
                f"({settled.resolution.TYPE}): {overlap.reason}",
                claimId=claim.id,
                meetingId=settled.meeting_id,
                blockers=[overlap.claim_id],
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
    reason = text_field(cmd.reason or "", "reason", policy, required=False) or None
    out.append(
        ev.claim_event(
            ids,
            claim.id,
            ev.CLAIM_SCOPE_CHANGED,
            addPaths=list(new_paths),
            removePaths=list(remove),
            paths=list(kept),
            pendingPaths=list(pending),
            modules=list(kept_modules + modules),
            symbols=list(kept_symbols + symbols),
            expectedContractChanges=[
                contract_to_wire(c) for c in claim.expected_contract_changes + contracts
            ],
            reason=reason,
            **({"carveOuts": carve_outs} if carved else {}),
            **(
                # The parked targets' place in line: after every claim opened so far.
                {"askedAt": [state.claims.last_fencing_token, state.claims.last_ask + 1]}
                if blocking and new_paths
                else {}
            ),
        )
    )
    if blocking:
        meeting_ids, meeting_events = meeting_events_for(
            state, claim.id, blocking, now, ids, policy
        )
        out.extend(meeting_events)
        out.append(
            ev.claim_event(
                ids,
                claim.id,
                ev.CLAIM_NEGOTIATING,
                status=status.value,
                meetingId=meeting_ids[0],
                meetingIds=meeting_ids,
                reason="scope change overlaps " + ", ".join(o.claim_id for o in blocking),
            )
        )
    return out


def _carve_out_removed(claim: Claim, remove: tuple[str, ...]) -> dict[str, list[str]]:
    """The claim's carve-outs after removing ``remove``: a removed pattern that is not one
    of the claim's own is carved out of every held pattern it lies inside
    (``docs/**`` minus ``docs/a.md``).

    Raises:
        ValidationError: ``removePaths[i]`` when a pattern is neither held nor inside one.
    """
    held = claim.paths + claim.pending_paths
    cuts = {p: list(c) for p, c in claim.carve_outs}
    for i, pattern in enumerate(remove):
        if pattern in held:
            continue
        inside = [p for p in held if carved_may_overlap(p, claim.carved(p), pattern)]
        if not inside:
            raise ValidationError(
                f"removePaths[{i}] {pattern!r} is not one of the claim's paths nor inside one",
                field=f"removePaths[{i}]",
            )
        for p in inside:
            if pattern not in cuts.setdefault(p, []):
                cuts[p].append(pattern)
    return {p: c for p, c in cuts.items() if p in held and p not in remove and c}


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
    if (
        target is ClaimStatus.ACTIVE
        and claim.status is ClaimStatus.SUSPENDED
        and claim.pending_paths
    ):
        target = ClaimStatus.NEGOTIATING
    if target is ClaimStatus.ACTIVE and claim.status is not ClaimStatus.SUSPENDED:
        raise InvalidTransition(
            claim.status.value,
            "active",
            f"only a suspended claim can resume (it is {claim.status.value})",
        )
    require(claim.status, target, claim_id=claim.id)
    reason = text_field(cmd.reason or "", "reason", policy, required=False) or None
    data: dict[str, Any] = {}
    if cmd.to is ClaimStatus.ABANDONED:
        data.update(
            headCommit=cmd.details.get("headCommit"),
            diffSummary=cmd.details.get("diffSummary") or {},
            # The server's record of each memory document the claim touched wins over
            # what the client says (its current revision and file hash).
            memoryState={
                **(cmd.details.get("memoryState") or {}),
                **memory_state(state.memory, claim),
            },
        )
    return [
        ev.status_event(
            ids,
            claim.id,
            _STATUS_EVENT[cmd.to],
            to=target.value,
            was=claim.status.value,
            reason=reason,
            **data,
        )
    ]


def _held_names(
    held: tuple[str, ...], asked: Sequence[str], fld: str, policy: Policy
) -> tuple[str, ...]:
    """The held modules or symbols that ``asked`` names, in the claim's order.

    A symbol may be named as held (``path::Name``) or by its qualified name alone when
    exactly one held symbol has it; names are NFC-normalised as stored names are.

    Raises:
        ValidationError: ``validation_error`` naming ``fld[i]`` for a name the claim does
            not hold (or one that matches several held symbols).
    """
    out: list[str] = []
    for i, name in enumerate(identifier_list(asked, fld, policy)):
        found = [h for h in held if h == name or h.partition("::")[2] == name]
        if len(found) != 1:
            what = "matches several of" if found else "is not one of"
            raise ValidationError(
                f"{fld}[{i}] {name!r} {what} the claim's {fld[6:].lower()} "
                f"({', '.join(held) or 'none'})",
                field=f"{fld}[{i}]",
            )
        out += found
    return tuple(h for h in held if h in out)
