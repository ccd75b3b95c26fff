"""The claim events a resolution implies, and the activations that follow it (pure).

:func:`apply_events` turns a validated resolution (see
:mod:`detente.domain.meetings.resolutions`) into claim events: a split's new scopes, the
serialized claim's suspension, a handoff's moved targets, an escalation's blocks.
:func:`activation_events` then activates whatever the folded resolution unblocked;
:func:`grant_events` and :func:`grant_pending_events` are shared with
:mod:`detente.domain.settle`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, assert_never

from detente.domain import events as ev
from detente.domain.authority import carries_authority, holds_off
from detente.domain.claims.model import Claim, ClaimStatus, MemoryImpact
from detente.domain.claims.transitions import allowed
from detente.domain.claims.wire import contract_to_wire, memory_impact_to_wire
from detente.domain.meetings.model import Decided, Meeting, MeetingStatus
from detente.domain.meetings.resolution_types import (
    Assignment,
    Handoff,
    HumanArbitration,
    Joint,
    Resolution,
    Serialize,
    SplitOwnership,
)
from detente.domain.meetings.resolutions import split_scopes
from detente.domain.meetings.target_kinds import is_path_target
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.policy import IdSource
from detente.domain.state import RepoState

__all__ = [
    "activation_events",
    "apply_events",
    "grant_events",
    "grant_pending_events",
    "still_blocked",
]


def still_blocked(state: RepoState, claim: Claim, ignore: Sequence[str] = ()) -> list[str]:
    """Claims other than ``ignore`` that still keep ``claim`` waiting
    (:func:`detente.domain.authority.holds_off`: a resolution that does not let it
    write what they hold settles nothing for it)."""
    return [
        o.claim_id
        for o in find_overlaps(state, Targets.of(claim), exclude=claim.id)
        if o.claim_id not in ignore and holds_off(state, claim, o)
    ]


def _set_status(
    ids: IdSource, claim: Claim, to: ClaimStatus, event_type: str, reason: str, **extra: Any
) -> list[ev.Event]:
    if claim.status is to or not allowed(claim.status, to):
        return []
    return [
        ev.status_event(
            ids, claim.id, event_type, to=to.value, was=claim.status.value, reason=reason, **extra
        )
    ]


def grant_events(ids: IdSource, claim: Claim, reason: str, **extra: Any) -> list[ev.Event]:
    """``claim`` becomes ``active``: its pending targets (a scope change's contested part)
    are granted first, so every target it holds carries authority."""
    if claim.status is ClaimStatus.ACTIVE or not allowed(claim.status, ClaimStatus.ACTIVE):
        return []
    out: list[ev.Event] = []
    if claim.pending_paths:
        paths = list(dict.fromkeys(claim.paths + claim.pending_paths))
        out.append(
            ev.claim_event(
                ids,
                claim.id,
                ev.CLAIM_SCOPE_CHANGED,
                **_scope(claim, paths, claim.memory_impacts, reason),
            )
        )
    out += _set_status(ids, claim, ClaimStatus.ACTIVE, ev.CLAIM_ACTIVATED, reason, **extra)
    return out


def grant_pending_events(ids: IdSource, claim: Claim, reason: str) -> list[ev.Event]:
    """An ``active`` claim's pending targets are granted (nothing contests them now)."""
    paths = list(dict.fromkeys(claim.paths + claim.pending_paths))
    return [
        ev.claim_event(
            ids,
            claim.id,
            ev.CLAIM_SCOPE_CHANGED,
            **_scope(claim, paths, claim.memory_impacts, reason),
        )
    ]


def _activate(
    ids: IdSource, state: RepoState, claim: Claim, meeting: Meeting, reason: str
) -> list[ev.Event]:
    if claim.status not in (ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED):
        return []
    if still_blocked(state, claim):
        return []
    return grant_events(ids, claim, reason, meetingId=meeting.id)


def _held_by_others(state: RepoState, pattern: str, exclude: set[str]) -> bool:
    """Does a claim outside ``exclude`` hold ``pattern`` (or part of it) with authority?"""
    for key, theirs, _ in state.claims.path_index.overlapping(pattern):
        other = state.claims.get(key)
        if other is not None and key not in exclude and carries_authority(other, theirs):
            return True
    return False


def _scope(
    claim: Claim,
    paths: Sequence[str],
    memory: Sequence[MemoryImpact],
    reason: str,
    named: tuple[Sequence[str], Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The body of a ``claim.scope_changed``; ``named`` is ``(modules, symbols)`` when
    they change (a split), else the claim's own."""
    mods, syms = named if named is not None else (claim.modules, claim.symbols)
    return {
        "paths": list(paths),
        "pendingPaths": [],
        "addPaths": [p for p in paths if p not in claim.paths],
        "removePaths": [p for p in claim.paths + claim.pending_paths if p not in paths],
        "modules": list(mods),
        "symbols": list(syms),
        "expectedContractChanges": [contract_to_wire(c) for c in claim.expected_contract_changes],
        "memoryImpacts": [memory_impact_to_wire(m) for m in memory],
        "reason": reason,
    }


def apply_events(
    state: RepoState, meeting: Meeting, resolution: Resolution, ids: IdSource
) -> list[ev.Event]:
    """Claim events implied by a validated resolution (not the ``meeting.resolved`` itself).

    Events are computed against ``state`` before the resolution is folded in, so the
    caller folds ``meeting.resolved`` first (making the pair resolved) and then calls this
    with the updated state when it needs the activation checks to see the resolution.
    """
    match resolution:
        case SplitOwnership():
            return _split_events(state, meeting, resolution, ids)
        case Serialize(first=first, then=then_id):
            return _set_status(
                ids,
                state.claims[then_id],
                ClaimStatus.SUSPENDED,
                ev.CLAIM_SUSPENDED,
                f"serialized behind {first} (meeting {meeting.id})",
                meetingId=meeting.id,
            )
        case Handoff(accepted=True):
            return _handoff_events(state, meeting, resolution, ids)
        case Handoff() | Joint():
            return []  # a pending handoff moves nothing yet; a joint group shares as is
        case HumanArbitration():
            return [
                e
                for claim_id in meeting.participants
                # a serialized claim waiting for its turn keeps waiting: ``blocked`` would
                # read as writing what its ``first`` still holds
                if state.claims[claim_id].status is not ClaimStatus.SUSPENDED
                for e in _set_status(
                    ids,
                    state.claims[claim_id],
                    ClaimStatus.BLOCKED,
                    ev.CLAIM_BLOCKED,
                    f"meeting {meeting.id} escalated to human arbitration",
                    meetingId=meeting.id,
                )
            ]
        case _:
            assert_never(resolution)


def _split_events(
    state: RepoState, meeting: Meeting, resolution: SplitOwnership, ids: IdSource
) -> list[ev.Event]:
    out: list[ev.Event] = []
    why = f"meeting {meeting.id} resolved: {resolution.TYPE}"
    scopes = split_scopes(state, resolution)
    for claim_id, kept in scopes.items():
        claim = state.claims[claim_id]
        paths, memory = kept.paths, kept.memory
        # A pending target a claim outside the split holds stays pending: the split
        # settles this meeting's contest, not that one.
        waiting = [
            p for p in paths if p in claim.pending_paths and _held_by_others(state, p, set(scopes))
        ]
        scope = _scope(
            claim,
            [p for p in paths if p not in waiting],
            memory,
            why,
            (kept.modules, kept.symbols),
        )
        scope["pendingPaths"] = waiting
        scope["carveOuts"] = kept.carve_outs
        out.append(ev.claim_event(ids, claim.id, ev.CLAIM_SCOPE_CHANGED, **scope))
        if not (paths or memory or kept.modules or kept.symbols or claim.contract_areas):
            # Everything it held went to others: a claim with no target is closed.
            out += _set_status(
                ids,
                claim,
                ClaimStatus.ABANDONED,
                ev.CLAIM_ABANDONED,
                f"the split of meeting {meeting.id} left it no target",
                meetingId=meeting.id,
            )
    return out


def _handoff_events(
    state: RepoState, meeting: Meeting, resolution: Handoff, ids: IdSource
) -> list[ev.Event]:
    out: list[ev.Event] = []
    sender = state.claims[resolution.from_claim_id]
    recipient = state.claims[resolution.to_claim_id]
    moved = list(resolution.targets or ())
    # Only what the recipient asked for moves: the sender keeps the rest of its
    # patterns with the recipient's targets carved out, as in a split.
    left = split_scopes(
        state,
        SplitOwnership((Assignment(recipient.id, tuple(moved)), Assignment(sender.id))),
    )[sender.id]
    handed = f"handed off to {recipient.id}"
    scope = _scope(sender, left.paths, left.memory, handed, (left.modules, left.symbols))
    scope["carveOuts"] = left.carve_outs
    out.append(ev.claim_event(ids, sender.id, ev.CLAIM_SCOPE_CHANGED, **scope))
    if not (left.paths or left.memory or left.modules or left.symbols):
        # Its whole scope moved on: a claim with no target holds nothing; close it.
        out += _set_status(
            ids,
            sender,
            ClaimStatus.ABANDONED,
            ev.CLAIM_ABANDONED,
            f"handed its whole scope off to {recipient.id} (meeting {meeting.id})",
            meetingId=meeting.id,
        )
    # Named targets (modules, symbols, sections) the recipient holds already: only its
    # path targets change hands in its scope (pending ones are granted with them).
    wanted = [
        *recipient.pending_paths,
        *(p for p in moved if is_path_target(p) and p not in recipient.paths),
    ]
    # What a third claim holds with authority by now stays pending: the recipient
    # negotiates for it (:mod:`detente.domain.settle` rooms it), never takes it.
    contested = [p for p in wanted if _held_by_others(state, p, {sender.id, recipient.id})]
    gained = [*recipient.paths, *(p for p in wanted if p not in contested)]
    scope = _scope(
        recipient,
        list(dict.fromkeys(gained)),
        recipient.memory_impacts,
        f"handoff from {sender.id}",
    )
    scope["pendingPaths"] = list(dict.fromkeys(contested))
    out.append(ev.claim_event(ids, recipient.id, ev.CLAIM_SCOPE_CHANGED, **scope))
    return out


def activation_events(
    state: RepoState, meeting: Meeting, decided: Decided, ids: IdSource
) -> list[ev.Event]:
    """After a resolution is folded in: activate the claims it unblocked."""
    why = f"meeting {meeting.id} resolved: {decided.resolution.TYPE}"
    out: list[ev.Event] = []
    for claim_id in decided.resolution.activates(decided.affected):
        events = _activate(ids, state, state.claims[claim_id], meeting, why)
        if not events and isinstance(decided.resolution, SplitOwnership):
            events = _grant_settled(ids, state, state.claims[claim_id], meeting, why)
        out += events
    return out


def _grant_settled(
    ids: IdSource, state: RepoState, claim: Claim, meeting: Meeting, reason: str
) -> list[ev.Event]:
    """A never-granted claim a split settled in part: what nothing holds off any more is
    granted at once, the paths still held off (by a holder, a waiter that asked first,
    or a party it still negotiates with) stay pending, and the claim goes on negotiating
    for those in its other rooms.
    When a held-off target is not a path (a module, a symbol: they cannot wait as
    pending), nothing is granted. A claim ``blocked`` by an escalated room the split
    settled is such a claim too."""
    if claim.status not in (ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED) or claim.granted:
        return []
    held: set[str] = set()
    for o in find_overlaps(state, Targets.of(claim), exclude=claim.id):
        other = state.claims.get(o.claim_id)
        if other is None or not holds_off(state, claim, o):
            continue
        # Held off by a holder, a waiter that asked first, or a party still negotiating
        # with it in an open room: that target stays pending either way.
        held |= {t.mine for t in o.targets}
    free = [p for p in claim.paths if p not in held]
    if not held or not free or not held <= set(claim.paths):
        return []
    rooms = [
        m
        for m in state.meetings.rooms_of_claim.get(claim.id, ())
        if state.meetings[m].status is MeetingStatus.OPEN
    ]
    if not rooms:
        return []  # settle rooms it first; the grant follows on the next command
    scope = _scope(claim, free, claim.memory_impacts, reason)
    scope["pendingPaths"] = [p for p in claim.paths if p in held]
    was = claim.status.value
    return [
        ev.claim_event(ids, claim.id, ev.CLAIM_SCOPE_CHANGED, **scope),
        ev.status_event(
            ids,
            claim.id,
            ev.CLAIM_ACTIVATED,
            to="active",
            was=was,
            reason=reason,
            meetingId=meeting.id,
        ),
        ev.status_event(
            ids,
            claim.id,
            ev.CLAIM_NEGOTIATING,
            to=ClaimStatus.NEGOTIATING.value,
            was=ClaimStatus.ACTIVE.value,
            reason="granted what the resolution settled; still negotiating for "
            + ", ".join(sorted(held)),
            meetingId=rooms[0],
            meetingIds=rooms,
        ),
    ]
