"""What one claim's arrival can change: the claims and rooms a settle round judges again.

A claim opening (``claim.announced``, then ``claim.activated`` or ``claim.negotiating``
with the rooms it joined or opened) touches every participant of the rooms it joined,
and :func:`detente.domain.settle.settle` judged each of them again, with the open rooms
of each: in a repository whose claims name paths that do not exist yet, rooms over
broad ``dir/**`` patterns gather hundreds of parties, and the round grew with the live
claims. The round before left every claim and room settled (each command's reactions
run until nothing is left), and the arrival of ``C`` adds one holding claim and ``C``
to some rooms; nothing else moves. So, exactly as the whole round would decide:

- a claim that ``C``'s targets do not meet keeps every input of its judgement (its
  overlaps, who holds it off, its rooms' contests and statuses): it is not judged;
- a ``negotiating`` claim ``X`` that ``C`` meets, when ``C`` is a waiter that asked
  after it (:func:`~detente.domain.waiting_line.goes_before`: ``C`` is never in what
  blocks ``X``), and no user's edit contests ``X`` in a room (a joined target could
  merge with such an entry): its blocking set is the one before, its rooms only gained
  ``C``; it is not judged;
- a room ``C`` joined was live and stays live (its parties' blockers only gain ``C``),
  and only ``C`` can have no stake in it (:func:`newly_stakeless`); a room the batch
  opened is judged, ``C`` first (:func:`live_with`).

Anything else in the batch (a second claim, a resolution, a memory registration, a
claim naming modules, symbols, contract areas, memory, pending paths or carve-outs, an
advisory claim) falls back to the whole round: :func:`arrival` answers None.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from detente.domain import events as ev
from detente.domain.claims.model import ClaimStatus
from detente.domain.live_contests import (
    WAITING,
    BlockerMemo,
    awaiting_handoff,
    meeting_is_live,
    open_rooms,
    user_contest,
)
from detente.domain.meetings.model import Meeting
from detente.domain.state import RepoState
from detente.domain.waiting_line import arrival as place_in_line

__all__ = ["Arrival", "arrival", "live_with", "newly_stakeless"]

_ARRIVAL_EVENTS = frozenset(
    {
        ev.CLAIM_ANNOUNCED,
        ev.CLAIM_ACTIVATED,
        ev.CLAIM_NEGOTIATING,
        ev.MEETING_JOINED,
        ev.MEETING_OPENED,
    }
)


@dataclass(frozen=True)
class Arrival:
    """One claim's arrival: ``claim_id``; ``related``, the claims its arrival may move
    (itself, every claim its targets meet, every party of a room the batch opened,
    every claim a contested target of the batch names); the rooms the batch ``opened``
    and ``joined``."""

    claim_id: str
    related: frozenset[str]
    opened: frozenset[str]
    joined: frozenset[str]

    def to_judge(self, state: RepoState, touched: Iterable[str]) -> set[str]:
        """The claims of ``touched`` whose judgement the arrival may change (see the
        module docstring)."""
        return {c for c in touched if c in self.related and not self._behind_it(state, c)}

    def _behind_it(self, state: RepoState, claim_id: str) -> bool:
        """Is ``self.claim_id`` a later waiter that ``claim_id`` (negotiating, no user's
        edit in its rooms) goes before, so never among what blocks it?"""
        me = state.claims[self.claim_id]
        other = state.claims.get(claim_id)
        if other is None or claim_id == self.claim_id:
            return False
        return (
            other.status is ClaimStatus.NEGOTIATING
            and me.status is ClaimStatus.NEGOTIATING
            and not me.granted
            and place_in_line(state, me) > place_in_line(state, other)
            and not any(user_contest(m, claim_id) for m in open_rooms(state, claim_id))
        )


def arrival(
    state: RepoState,
    batch: Sequence[tuple[str, dict[str, Any]]],
    skip: Iterable[str],
    blockers: BlockerMemo,
) -> Arrival | None:
    """The arrival ``batch`` is, or None when it is anything else (see the module
    docstring). ``state`` has ``batch`` folded in; ``skip`` are claims another reaction
    moves this round (then the whole round runs); ``blockers`` the round's memo."""
    if any(True for _ in skip) or not batch:
        return None
    types = [event_type for event_type, _ in batch]
    if any(t not in _ARRIVAL_EVENTS for t in types) or ev.CLAIM_ANNOUNCED not in types:
        return None
    named = {data.get("claimId") for event_type, data in batch if event_type != ev.MEETING_OPENED}
    claim_id = named.pop() if len(named) == 1 else None
    claim = state.claims.get(claim_id) if isinstance(claim_id, str) else None
    if claim is None or claim.status not in (ClaimStatus.ACTIVE, ClaimStatus.NEGOTIATING):
        return None
    if claim.advisory or claim.modules or claim.symbols or claim.contract_areas:
        return None
    if claim.memory_impacts or claim.pending_paths or claim.carve_outs:
        return None
    related = {claim.id, *(o.claim_id for o in blockers.overlaps(claim))}
    opened: set[str] = set()
    joined: set[str] = set()
    for event_type, data in batch:
        if event_type == ev.MEETING_OPENED:
            parties = [str(p) for p in data.get("participants", ())]
            if claim.id not in parties:
                return None
            related.update(parties)
            opened.add(str(data["meetingId"]))
        elif event_type == ev.MEETING_JOINED:
            joined.add(str(data["meetingId"]))
        for target in data.get("contestedTargets", ()):
            related.update(str(c) for c in target.get("claimIds", ()))
    return Arrival(claim.id, frozenset(related), frozenset(opened), frozenset(joined - opened))


def live_with(state: RepoState, meeting: Meeting, came: Arrival, blockers: BlockerMemo) -> bool:
    """:func:`~detente.domain.live_contests.meeting_is_live`, the arriving claim asked
    first (a room it joined was live before it came and stays so)."""
    if meeting.id in came.joined:
        return True
    claim = state.claims[came.claim_id]
    members = meeting.party_set
    if claim.status in WAITING and claim.holding and blockers(claim, members):
        return True
    return meeting_is_live(state, meeting, blockers)


def newly_stakeless(
    state: RepoState, meeting: Meeting, came: Arrival, blockers: BlockerMemo
) -> list[str]:
    """``[came.claim_id]`` when the arriving claim contests nothing in ``meeting``
    (:func:`~detente.domain.live_contests.stakeless` of it alone: every other party
    had a stake before it came and keeps it), else empty."""
    claim = state.claims[came.claim_id]
    if came.claim_id not in meeting.participants or not claim.holding:
        return []
    if user_contest(meeting, came.claim_id) or awaiting_handoff(state, came.claim_id):
        return []
    members = meeting.party_set  # all hold (see the module docstring)
    if meeting.id in came.opened:
        members = frozenset(c for c in members if c in state.claims and state.claims[c].holding)
    if claim.status in (*WAITING, ClaimStatus.SUSPENDED) and blockers(claim, members):
        return []
    for other_id in sorted(members & came.related):
        other = state.claims[other_id]
        if other_id == came.claim_id or other.status not in (*WAITING, ClaimStatus.SUSPENDED):
            continue
        if any(o.claim_id == came.claim_id for o in blockers(other, members)):
            return []
    return [came.claim_id]
