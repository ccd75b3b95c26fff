"""A negotiation that cannot wedge: after every command, contests are settled or roomed.

Run by :func:`detente.domain.reactions.react` in the same transaction as the command,
over the claims and meetings the command touched (and the rooms those claims sit in):

- a ``negotiating`` claim that nothing blocks any more (its holder narrowed, completed,
  abandoned, or a resolution settled it) becomes ``active`` at once, its pending targets
  granted; waiters that were never granted do not block one that opened before them
  (first come, first granted:
  :func:`detente.domain.waiting_line.queued_behind`), so when a holder lets go of a
  target several claims wait for, the earliest of them gets it;
- a ``negotiating`` claim still blocked by a claim it shares no open room with (a
  resolution that settled only part of a three-party contest, a holder taken over by a
  successor) is put in a follow-up room with that claim at once: the room for the
  contested target when one is open, else a new one;
- a ``blocked`` claim whose escalation was resolved (no escalated room left): a holder
  (granted, nothing pending) gets its authority back (``active``); a newcomer still
  blocked by a third claim goes back to ``negotiating`` in a follow-up room the same way;
- a ``negotiating`` claim held off only by the ``first`` claims it was serialized behind
  (its other contests ended) goes back to ``suspended``: the serialization still
  stands (:func:`detente.domain.authority.holds_off`);
- a participant of an open or escalated room that no longer holds leaves it
  (``meeting.left``);
- an open (or escalated) meeting with no live contest left closes with a ``dissolved`` outcome
  (``meeting.dissolved``).

A *live contest* is :mod:`detente.domain.live_contests`'s; the rooms a claim is put in,
:mod:`detente.domain.follow_up_rooms`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from detente.domain import events as ev
from detente.domain.arrivals import Arrival, arrival, live_with, newly_stakeless
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.follow_up_rooms import follow_up, negotiating, restated, settle_pending
from detente.domain.live_contests import (
    WAITING,
    BlockerMemo,
    awaiting_handoff,
    escalated,
    meeting_is_live,
    open_rooms,
    stakeless,
    user_contest,
)
from detente.domain.meetings.claim_grants import grant_events
from detente.domain.meetings.model import Meeting, MeetingStatus
from detente.domain.policy import IdSource, Policy
from detente.domain.state import RepoState
from detente.domain.waiting_line import queued_behind

__all__ = ["settle"]

#: The statuses of a room whose parties a round looks at.
_STAYING = (MeetingStatus.OPEN, MeetingStatus.ESCALATED)


def _touched(
    state: RepoState, batch: Sequence[tuple[str, dict[str, Any]]]
) -> tuple[set[str], set[str]]:
    """The claims and meetings a round looks at: those the batch names, the parties of
    those meetings, the open (and escalated) rooms of all of these and their parties."""
    claims, meetings = _named(state, batch)
    for claim_id in list(claims):
        meetings.update(m.id for m in open_rooms(state, claim_id))
        meetings.update(  # a departed claim leaves escalated rooms too
            m
            for m in state.meetings.rooms_of_claim.get(claim_id, ())
            if state.meetings[m].status is MeetingStatus.ESCALATED
        )
    for meeting_id in meetings:
        meeting = state.meetings.get(meeting_id)
        if meeting is not None:
            claims.update(meeting.participants)
    return claims, meetings


def _touched_among(
    state: RepoState, batch: Sequence[tuple[str, dict[str, Any]]], candidates: Iterable[str]
) -> set[str]:
    """The claims of ``candidates`` that :func:`_touched` finds, without walking every
    room it would: a claim is touched when the batch names it or a meeting it names
    lists it, or when it sits in an open (or escalated) room with such a claim."""
    named, _ = _named(state, batch)
    found: set[str] = set()
    for claim_id in candidates:
        if claim_id in named:
            found.add(claim_id)
            continue
        for meeting_id in state.meetings.rooms_of_claim.get(claim_id, ()):
            meeting = state.meetings[meeting_id]
            if meeting.status in _STAYING and not named.isdisjoint(meeting.participants):
                found.add(claim_id)
                break
    return found


def _named(
    state: RepoState, batch: Sequence[tuple[str, dict[str, Any]]]
) -> tuple[set[str], set[str]]:
    """The claims and meetings ``batch`` names, with the parties of those meetings."""
    claims: set[str] = set()
    meetings: set[str] = set()
    for event_type, data in batch:
        if "claimId" in data and isinstance(data["claimId"], str):
            claims.add(data["claimId"])
        if event_type.startswith("meeting.") and "meetingId" in data:
            meetings.add(str(data["meetingId"]))
        if event_type == ev.CLAIM_TAKEN_OVER and isinstance(data.get("successorId"), str):
            claims.add(data["successorId"])
        if event_type == ev.MEMORY_REGISTERED:  # a document's class changes overlap for all
            meetings.update(state.meetings.room_of_target.values())
    for meeting_id in list(meetings):
        meeting = state.meetings.get(meeting_id)
        if meeting is not None:
            claims.update(meeting.participants)
    return claims, meetings


def settle(
    state: RepoState,
    batch: Sequence[tuple[str, dict[str, Any]]],
    ids: IdSource,
    now: datetime,
    policy: Policy,
    *,
    skip: Iterable[str] = (),
    whole: bool = False,
) -> list[ev.Event]:
    """Events that settle the contests ``batch`` touched (see the module docstring).

    Args:
        state: the projection with ``batch`` folded in.
        batch: ``(type, data)`` of the events just appended.
        ids: id source.
        now: the server's time (a follow-up room's deadline runs from it).
        policy: meeting deadline.
        skip: claims another reaction already moves in this round (decided next round).
        whole: judge every claim and room the batch touched, even after one claim's
            arrival (:mod:`detente.domain.arrivals` judges only what it may move, to the
            same events): the reference the tests hold the shortcut to.

    Returns:
        The events; empty when every touched contest is settled or roomed.
    """
    blockers = BlockerMemo(state)  # the state does not change within one round
    came = None if whole else arrival(state, batch, skip, blockers)
    if came is None:
        claims, meetings = _touched(state, batch)
    else:  # one claim opened: only what it may move is judged again
        claims = came.to_judge(state, _touched_among(state, batch, came.related))
        meetings = set(came.opened | came.joined)
    skipped = set(skip)
    out: list[ev.Event] = []
    moved: set[str] = set()
    roomed: dict[frozenset[str], list[str]] = {}
    for claim_id in sorted(claims - skipped):
        claim = state.claims.get(claim_id)
        if claim is None or awaiting_handoff(state, claim_id):
            continue
        if claim.status is ClaimStatus.ACTIVE and claim.pending_paths:
            out += settle_pending(state, claim, now, ids, policy, roomed, meetings)
            moved.add(claim_id)
            continue
        if claim.status not in WAITING:
            continue
        if claim.status is ClaimStatus.BLOCKED:
            if escalated(state, claim_id) or claim.takeover is not None:
                continue
            if claim.granted and not claim.pending_paths:
                # A holder blocked by an escalation gets its authority back once no
                # escalated room is left; newcomers still contesting it negotiate.
                out += grant_events(ids, claim, "the escalation is resolved")
                moved.add(claim_id)
                continue
        blocking = [o for o in blockers(claim) if not queued_behind(state, claim, o)]
        rooms = open_rooms(state, claim_id)
        if any(user_contest(m, claim_id) for m in rooms):
            continue
        if not blocking:
            if claim.status is ClaimStatus.NEGOTIATING:
                out += grant_events(ids, claim, "no contest left: nothing blocks it any more")
                moved.add(claim_id)
            continue
        firsts = _serialized_before(state, claim_id)
        if claim.status is ClaimStatus.NEGOTIATING and all(o.claim_id in firsts for o in blocking):
            out.append(_back_in_line(ids, claim, sorted({o.claim_id for o in blocking})))
            moved.add(claim_id)
            continue
        uncovered = [o for o in blocking if not any(o.claim_id in m.participants for m in rooms)]
        fresh = [o for o in uncovered if frozenset({claim_id, o.claim_id}) not in roomed]
        if fresh:
            events = follow_up(state, claim, fresh, now, ids, policy)
            out += events
            moved.add(claim_id)
            opened = [str(e.data["meetingId"]) for e in events if e.type.startswith("meeting.")]
            for o in fresh:
                roomed[frozenset({claim_id, o.claim_id})] = opened
            meetings.update(opened)
        elif uncovered and claim.status is ClaimStatus.BLOCKED:
            joined = [m for o in uncovered for m in roomed[frozenset({claim_id, o.claim_id})]]
            out.append(negotiating(ids, claim, list(dict.fromkeys(joined)), uncovered))
            moved.add(claim_id)
        elif claim.status is ClaimStatus.NEGOTIATING:
            # Its reason still naming a holder that has left: say who holds it off now.
            out += restated(state, ids, claim, blocking, rooms)
    out += _departures(state, meetings, ids, blockers, came)
    touched_now = {
        str(e.data["meetingId"])
        for e in out
        if e.type.startswith("meeting.") and e.type != ev.MEETING_LEFT
    }
    for meeting_id in sorted(meetings - touched_now):
        meeting = state.meetings.get(meeting_id)
        # An escalated room closes the same way once its parties left (no arbitrator
        # is needed for a contest that ended).
        if meeting is None or meeting.status is MeetingStatus.RESOLVED:
            continue
        if any(c in moved for c in meeting.participants):
            continue  # decided again next round, on the state these events make
        if not _live(state, meeting, blockers, came):
            out.append(
                ev.meeting_event(
                    ids,
                    meeting_id,
                    ev.MEETING_DISSOLVED,
                    outcome="dissolved",
                    reason="no contest left: every participant's overlap is gone",
                )
            )
    return out


def _live(state: RepoState, meeting: Meeting, blockers: BlockerMemo, came: Arrival | None) -> bool:
    if came is None:
        return meeting_is_live(state, meeting, blockers)
    return live_with(state, meeting, came, blockers)


def _departures(
    state: RepoState,
    meetings: Iterable[str],
    ids: IdSource,
    blockers: BlockerMemo,
    came: Arrival | None = None,
) -> list[ev.Event]:
    """``meeting.left`` for each participant of an open or escalated room that no longer
    holds (completed, integrated, abandoned, taken over), and, in a room still live, for
    each holding participant that contests nothing with the others any more (its only
    holder left, or it narrowed away every contested target): a room holds only live
    parties, so its options and its "held by" never name a claim with no stake in it.
    After an arrival (``came``) only the arriving claim can have lost its stake
    (:mod:`detente.domain.arrivals`)."""
    out: list[ev.Event] = []
    for meeting_id in sorted(meetings):
        meeting = state.meetings.get(meeting_id)
        if meeting is None or meeting.status is MeetingStatus.RESOLVED:
            continue
        # A room the arriving claim joined held only live parties before it came.
        joined = came is not None and meeting_id in came.joined
        gone = [] if joined else [c for c in meeting.participants if not _holds(state, c)]
        for claim_id in gone:
            status = state.claims[claim_id].status.value if claim_id in state.claims else "gone"
            out.append(
                ev.meeting_event(
                    ids,
                    meeting_id,
                    ev.MEETING_LEFT,
                    claimId=claim_id,
                    status=status,
                    reason=f"{claim_id} is {status}: it no longer holds",
                )
            )
        if (
            meeting.requested_by is not None
            or meeting.merge_conflicts
            or not _live(state, meeting, blockers, came)
        ):
            continue  # a room asked for or predicted, or one about to dissolve, keeps its parties
        if came is None:
            loose = stakeless(state, meeting, exclude=gone, blockers=blockers)
        else:
            loose = newly_stakeless(state, meeting, came, blockers)
        for claim_id in loose:
            out.append(
                ev.meeting_event(
                    ids,
                    meeting_id,
                    ev.MEETING_LEFT,
                    claimId=claim_id,
                    status=state.claims[claim_id].status.value,
                    reason=f"{claim_id} contests nothing with the room's other parties any more",
                )
            )
    return out


def _holds(state: RepoState, claim_id: str) -> bool:
    claim = state.claims.get(claim_id)
    return claim is not None and claim.holding


def _serialized_before(state: RepoState, claim_id: str) -> set[str]:
    """The ``first`` claims ``claim_id`` was serialized behind (a ``serialize`` it is the
    ``then`` of)."""
    return {first for first, thens in state.meetings.serialized.items() if claim_id in thens}


def _back_in_line(ids: IdSource, claim: Claim, firsts: Sequence[str]) -> ev.Event:
    """A serialized ``then`` whose other contests ended waits for its turn again."""
    return ev.status_event(
        ids,
        claim.id,
        ev.CLAIM_SUSPENDED,
        to=ClaimStatus.SUSPENDED.value,
        was=claim.status.value,
        reason=f"serialized behind {', '.join(firsts)}: it waits for its turn again",
    )
