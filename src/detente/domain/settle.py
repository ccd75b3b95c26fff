"""A negotiation that cannot wedge: after every command, contests are settled or roomed.

Run by :func:`detente.domain.reactions.react` in the same transaction as the command,
over the claims and meetings the command touched (and the rooms those claims sit in):

- a ``negotiating`` claim that nothing blocks any more (its holder narrowed, completed,
  abandoned, or a resolution settled it) becomes ``active`` at once, its pending targets
  granted; waiters that were never granted do not block one that opened before them
  (first come, first granted: :func:`queued_behind`), so when a holder lets go of a
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

A *live contest* of a meeting is a participant that is ``negotiating`` (or ``blocked``)
with a blocking overlap against another participant, or whose edit met a user's edit
(a contested target naming only that claim: a deferred memory patch). The recipient of a pending
``handoff`` waits for its own acceptance, not for a room, and is left alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from detente.domain import events as ev
from detente.domain.authority import holds_off
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.meetings.decide import blocking_only, meeting_events_for
from detente.domain.meetings.model import Decided, Meeting, MeetingStatus
from detente.domain.meetings.on_request import potential_between
from detente.domain.meetings.resolution_events import grant_events, grant_pending_events
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.model import Overlap
from detente.domain.policy import IdSource, Policy
from detente.domain.state import RepoState

__all__ = [
    "arrival",
    "awaiting_handoff",
    "live_blockers",
    "meeting_is_live",
    "queued_behind",
    "settle",
    "waits_on_someone",
]

_WAITING = (ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED)


def live_blockers(state: RepoState, claim: Claim) -> list[Overlap]:
    """Overlaps of ``claim`` whose other holding claim keeps it waiting: blocking ones,
    and those a resolution settled without letting ``claim`` write
    (:func:`detente.domain.authority.holds_off`)."""
    if not claim.holding:
        return []
    overlaps = find_overlaps(state, Targets.of(claim), exclude=claim.id)
    return [o for o in overlaps if holds_off(state, claim, o)]


def awaiting_handoff(state: RepoState, claim_id: str) -> bool:
    """True when ``claim_id`` is the recipient of a handoff it has not accepted yet."""
    for meeting_id in state.meetings.rooms_of_claim.get(claim_id, ()):
        outcome = state.meetings[meeting_id].resolution
        if isinstance(outcome, Decided) and outcome.resolution.awaits() == claim_id:
            return True
    return False


def _open_rooms(state: RepoState, claim_id: str) -> list[Meeting]:
    return [
        state.meetings[m]
        for m in state.meetings.rooms_of_claim.get(claim_id, ())
        if state.meetings[m].status is MeetingStatus.OPEN
    ]


def _escalated(state: RepoState, claim_id: str) -> bool:
    return any(
        state.meetings[m].status is MeetingStatus.ESCALATED
        for m in state.meetings.rooms_of_claim.get(claim_id, ())
    )


def _user_contest(meeting: Meeting, claim_id: str) -> bool:
    """A contested target naming only ``claim_id``: its edit met a user's edit (a deferred
    memory patch); only a resolution (or releasing the claim) ends that contest."""
    return any(t.claim_ids == (claim_id,) for t in meeting.contested_targets)


def meeting_is_live(state: RepoState, meeting: Meeting) -> bool:
    """Does a participant still wait on another participant, or on a user's edit (see the
    module docstring)?"""
    members = set(meeting.participants)
    if meeting.requested_by is not None and _potential_left(state, meeting):
        return True
    for claim_id in meeting.participants:
        claim = state.claims.get(claim_id)
        if claim is None or claim.status not in _WAITING or not claim.holding:
            continue
        if _user_contest(meeting, claim_id):
            return True
        if any(o.claim_id in members for o in live_blockers(state, claim)):
            return True
    return False


def _potential_left(state: RepoState, meeting: Meeting) -> bool:
    """Does a room asked for over a ``potential`` overlap still have one between two of
    its live participants (:mod:`detente.domain.meetings.on_request`)?"""
    live = [c for c in meeting.participants if c in state.claims and state.claims[c].holding]
    return any(potential_between(state, a, b) is not None for a in live for b in live if a < b)


def queued_behind(state: RepoState, claim: Claim, overlap: Overlap) -> bool:
    """Is the other claim of ``overlap`` a later waiter that ``claim`` goes before?

    First come, first granted: when a holder lets go, the waiters that contested it
    would otherwise block one another for ever (each is still negotiating, none holds
    the target). A negotiating claim that waits for the contested targets (it was never
    granted, or they are among its ``pendingPaths``) does not block a waiter that asked
    for them before it did (:func:`arrival`: when each asked, not when each opened), so
    the earliest asker is granted and the others go on negotiating with it in their
    room.
    """
    other = state.claims.get(overlap.claim_id)
    return (
        other is not None
        and claim.status is ClaimStatus.NEGOTIATING
        and other.status is ClaimStatus.NEGOTIATING
        and _waits_for(other, overlap)
        and arrival(state, other) > arrival(state, claim)
    )


def _waits_for(other: Claim, overlap: Overlap) -> bool:
    """Does ``other`` wait for its side of ``overlap`` (rather than hold it)?"""
    if not other.granted:
        return True
    pending = set(other.pending_paths)
    return bool(pending) and all(t.theirs in pending for t in overlap.targets)


def arrival(state: RepoState, claim: Claim) -> tuple[int, int, int]:
    """A waiter's place in line: when it asked for what it waits for.

    A granted claim waiting for targets a scope change parked asked when that change
    was recorded (:attr:`~detente.domain.claims.model.Claim.asked`: after every claim
    opened by then, in ask order); any other claim asked when it opened (its fencing
    token, handed out in opening order), a takeover successor when its predecessor did
    (the chain followed to the first claim, bounded). Its own token breaks a tie.
    """
    if claim.granted and claim.pending_paths and claim.asked is not None:
        return (claim.asked[0], 1, claim.asked[1])
    first = claim
    for _ in range(64):
        of = (first.takeover or {}).get("claimId")
        pred = state.claims.get(str(of)) if of is not None else None
        if pred is None:
            break
        first = pred
    return (first.fencing_token, 0, claim.fencing_token)


def waits_on_someone(state: RepoState, claim: Claim) -> bool:
    """Does a ``negotiating`` claim wait on something that can move?

    True when a holder blocks it (one it does not go before, see :func:`queued_behind`),
    a user's edit contests its write, or a handoff to it awaits its acceptance. False
    means :func:`settle` grants it.
    """
    if awaiting_handoff(state, claim.id):
        return True
    if any(_user_contest(m, claim.id) for m in _open_rooms(state, claim.id)):
        return True
    return any(not queued_behind(state, claim, o) for o in live_blockers(state, claim))


def _touched(
    state: RepoState, batch: Sequence[tuple[str, dict[str, Any]]]
) -> tuple[set[str], set[str]]:
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
    for claim_id in list(claims):
        meetings.update(m.id for m in _open_rooms(state, claim_id))
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


def settle(
    state: RepoState,
    batch: Sequence[tuple[str, dict[str, Any]]],
    ids: IdSource,
    now: datetime,
    policy: Policy,
    *,
    skip: Iterable[str] = (),
) -> list[ev.Event]:
    """Events that settle the contests ``batch`` touched (see the module docstring).

    Args:
        state: the projection with ``batch`` folded in.
        batch: ``(type, data)`` of the events just appended.
        ids: id source.
        now: the server's time (a follow-up room's deadline runs from it).
        policy: meeting deadline.
        skip: claims another reaction already moves in this round (decided next round).

    Returns:
        The events; empty when every touched contest is settled or roomed.
    """
    claims, meetings = _touched(state, batch)
    skipped = set(skip)
    out: list[ev.Event] = []
    moved: set[str] = set()
    roomed: dict[frozenset[str], list[str]] = {}
    for claim_id in sorted(claims - skipped):
        claim = state.claims.get(claim_id)
        if claim is None or awaiting_handoff(state, claim_id):
            continue
        if claim.status is ClaimStatus.ACTIVE and claim.pending_paths:
            out += _settle_pending(state, claim, now, ids, policy, roomed, meetings)
            moved.add(claim_id)
            continue
        if claim.status not in _WAITING:
            continue
        if claim.status is ClaimStatus.BLOCKED:
            if _escalated(state, claim_id) or claim.takeover is not None:
                continue
            if claim.granted and not claim.pending_paths:
                # A holder blocked by an escalation gets its authority back once no
                # escalated room is left; newcomers still contesting it negotiate.
                out += grant_events(ids, claim, "the escalation is resolved")
                moved.add(claim_id)
                continue
        blocking = [o for o in live_blockers(state, claim) if not queued_behind(state, claim, o)]
        rooms = _open_rooms(state, claim_id)
        if any(_user_contest(m, claim_id) for m in rooms):
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
            events = _follow_up(state, claim, fresh, now, ids, policy)
            out += events
            moved.add(claim_id)
            opened = [str(e.data["meetingId"]) for e in events if e.type.startswith("meeting.")]
            for o in fresh:
                roomed[frozenset({claim_id, o.claim_id})] = opened
            meetings.update(opened)
        elif uncovered and claim.status is ClaimStatus.BLOCKED:
            joined = [m for o in uncovered for m in roomed[frozenset({claim_id, o.claim_id})]]
            out.append(_negotiating(ids, claim, list(dict.fromkeys(joined)), uncovered))
            moved.add(claim_id)
    out += _departures(state, meetings, ids)
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
        if not meeting_is_live(state, meeting):
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


def _departures(state: RepoState, meetings: Iterable[str], ids: IdSource) -> list[ev.Event]:
    """``meeting.left`` for each participant of an open or escalated room that no longer
    holds (completed, integrated, abandoned, taken over): a room holds only live parties,
    so its options and its "held by" never name a departed claim."""
    out: list[ev.Event] = []
    for meeting_id in sorted(meetings):
        meeting = state.meetings.get(meeting_id)
        if meeting is None or meeting.status is MeetingStatus.RESOLVED:
            continue
        for claim_id in meeting.participants:
            claim = state.claims.get(claim_id)
            if claim is None or claim.holding:
                continue
            out.append(
                ev.meeting_event(
                    ids,
                    meeting_id,
                    ev.MEETING_LEFT,
                    claimId=claim_id,
                    status=claim.status.value,
                    reason=f"{claim_id} is {claim.status.value}: it no longer holds",
                )
            )
    return out


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


def _settle_pending(
    state: RepoState,
    claim: Claim,
    now: datetime,
    ids: IdSource,
    policy: Policy,
    roomed: dict[frozenset[str], list[str]],
    meetings: set[str],
) -> list[ev.Event]:
    """An ``active`` claim with pending targets (a handoff that met a third holder):
    grant them when nothing contests them, else negotiate for them in a room."""
    pending = Targets(
        paths=claim.pending_paths, base_commit=claim.base_commit, carve_outs=claim.carve_outs
    )
    blocking = blocking_only(find_overlaps(state, pending, exclude=claim.id))
    if not blocking:
        return grant_pending_events(ids, claim, "its pending targets are no longer contested")
    events = _follow_up(state, claim, blocking, now, ids, policy)
    opened = [str(e.data["meetingId"]) for e in events if e.type.startswith("meeting.")]
    for o in blocking:
        roomed[frozenset({claim.id, o.claim_id})] = opened
    meetings.update(opened)
    return events


def _follow_up(
    state: RepoState,
    claim: Claim,
    uncovered: Sequence[Overlap],
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> list[ev.Event]:
    """Put ``claim`` in a room with each claim in ``uncovered`` (join or open)."""
    meeting_ids, events = meeting_events_for(state, claim.id, uncovered, now, ids, policy)
    out = list(events)
    holders = {o.claim_id for o in uncovered}
    for event in events:
        if event.type != ev.MEETING_JOINED:
            continue
        meeting = state.meetings[str(event.data["meetingId"])]
        for holder in sorted(holders - set(meeting.participants)):
            out.append(
                ev.meeting_event(
                    ids, meeting.id, ev.MEETING_JOINED, claimId=holder, contestedTargets=[]
                )
            )
    out.append(_negotiating(ids, claim, meeting_ids, uncovered))
    return out


def _negotiating(
    ids: IdSource, claim: Claim, meeting_ids: Sequence[str], blockers: Sequence[Overlap]
) -> ev.Event:
    return ev.status_event(
        ids,
        claim.id,
        ev.CLAIM_NEGOTIATING,
        to=ClaimStatus.NEGOTIATING.value,
        was=claim.status.value,
        reason="follow-up room: still contested by "
        + ", ".join(sorted({o.claim_id for o in blockers})),
        meetingId=meeting_ids[0],
        meetingIds=list(meeting_ids),
    )
