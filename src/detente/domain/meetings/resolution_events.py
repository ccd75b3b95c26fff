"""The claim events a resolution implies, and the activations that follow it (pure).

:func:`apply_events` turns a validated resolution (see
:mod:`detente.domain.meetings.resolutions`) into claim events: a split's new scopes, the
serialized claim's suspension, a handoff's moved targets, an escalation's blocks.
:func:`activation_events` then activates whatever the folded resolution unblocked
(what a split grants a claim never granted: :mod:`detente.domain.meetings.split_grants`);
the grant events themselves are :mod:`detente.domain.meetings.claim_grants`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from detente.domain import events as ev
from detente.domain.authority import carries_authority, holds_off
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.meetings.claim_grants import grant_events, scope_body, set_status
from detente.domain.meetings.model import Decided, Meeting
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
from detente.domain.meetings.split_grants import grant_settled
from detente.domain.meetings.target_kinds import is_path_target
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.policy import IdSource
from detente.domain.state import RepoState

__all__ = ["activation_events", "apply_events", "still_blocked"]


def still_blocked(state: RepoState, claim: Claim, ignore: Sequence[str] = ()) -> list[str]:
    """Claims other than ``ignore`` that still keep ``claim`` waiting
    (:func:`detente.domain.authority.holds_off`: a resolution that does not let it
    write what they hold settles nothing for it)."""
    return [
        o.claim_id
        for o in find_overlaps(state, Targets.of(claim), exclude=claim.id)
        if o.claim_id not in ignore and holds_off(state, claim, o)
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
            return set_status(
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
                for e in set_status(
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
        scope = scope_body(
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
            out += set_status(
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
    scope = scope_body(sender, left.paths, left.memory, handed, (left.modules, left.symbols))
    scope["carveOuts"] = left.carve_outs
    out.append(ev.claim_event(ids, sender.id, ev.CLAIM_SCOPE_CHANGED, **scope))
    if not (left.paths or left.memory or left.modules or left.symbols):
        # Its whole scope moved on: a claim with no target holds nothing; close it.
        out += set_status(
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
    scope = scope_body(
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
            events = grant_settled(ids, state, state.claims[claim_id], meeting, why)
        out += events
    return out
