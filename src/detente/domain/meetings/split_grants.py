"""What a split grants a claim that was never granted (pure): the one rule.

A target a split assigns to a claim is writable by that claim at once. A claim that
was never granted (``negotiating``; ``blocked`` by the escalated room the split
resolved; ``suspended``, a serialized ``then`` the split left sharing nothing with its
``first``: the split is the newer word between them) cannot wait for it in the room
the split closed, so the split grants it everything nothing ahead of it holds off:

- a target another claim holds off *and goes before it for* (a holder with authority
  outside the split, a waiter that asked first) stays pending, and the claim goes on
  negotiating for it in its open rooms;
- a target only later waiters contest (claims never granted it, that asked after this
  one, wherever their room: :func:`detente.domain.waiting_line.goes_before`) is granted:
  first come, first granted, so they wait behind it and their room now reads so;
- when a held-off target is not a path (a module, a symbol: they cannot wait as
  pending), nothing is granted and the claim keeps negotiating for all of it.

Invariant 10 (:mod:`detente.domain.invariants`) reads the same rule back.
"""

from __future__ import annotations

from detente.domain import events as ev
from detente.domain.authority import holds_off
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.meetings.claim_grants import grant_events, scope_body
from detente.domain.meetings.model import Meeting, MeetingStatus
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.domain.waiting_line import goes_before

__all__ = ["grant_settled", "held_ahead"]

_WAITING = (ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED, ClaimStatus.SUSPENDED)


def held_ahead(state: RepoState, claim: Claim) -> set[str]:
    """``claim``'s targets that a claim ahead of it in line holds off: one that holds
    them off (:func:`detente.domain.authority.holds_off`) and that ``claim`` does not
    go before (:func:`detente.domain.waiting_line.goes_before`)."""
    held: set[str] = set()
    for o in find_overlaps(state, Targets.of(claim), exclude=claim.id):
        if holds_off(state, claim, o) and not goes_before(state, claim, o):
            held |= {t.mine for t in o.targets}
    return held


def grant_settled(
    ids: IdSource, state: RepoState, claim: Claim, meeting: Meeting, reason: str
) -> list[ev.Event]:
    """The events that grant a never-granted ``claim`` what the split of ``meeting``
    settled (see the module docstring): ``claim.activated`` when nothing ahead of it
    holds anything off; else its free part granted (``claim.scope_changed`` with the
    held paths pending, ``claim.activated``) and ``claim.negotiating`` in its open
    rooms for the rest. Empty when it was granted already, is not waiting, or a named
    target is held off."""
    if claim.status not in _WAITING or claim.granted:
        return []
    held = held_ahead(state, claim)
    if not held:
        return grant_events(ids, claim, reason, meetingId=meeting.id)
    free = [p for p in claim.paths if p not in held]
    if not free or not held <= set(claim.paths):
        return []
    rooms = [
        m
        for m in state.meetings.rooms_of_claim.get(claim.id, ())
        if state.meetings[m].status is MeetingStatus.OPEN
    ]
    if not rooms:
        return []  # settle rooms it first; the grant follows on the next command
    scope = scope_body(claim, free, claim.memory_impacts, reason)
    scope["pendingPaths"] = [p for p in claim.paths if p in held]
    return [
        ev.claim_event(ids, claim.id, ev.CLAIM_SCOPE_CHANGED, **scope),
        ev.status_event(
            ids,
            claim.id,
            ev.CLAIM_ACTIVATED,
            to="active",
            was=claim.status.value,
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
