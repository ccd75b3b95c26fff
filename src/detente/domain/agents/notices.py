"""What wakes an agent session: the events that concern the claims it works under.

An agent waiting for its turn is idle and reads no event stream; its harness hooks run
on its next tool use, prompt or stop. :func:`session_notices` picks, from the events
after the session's ``delivered_up_to``, those that change what the session may do:

- ``claim.activated`` of one of its claims after a wait (a room resolved, the claim
  ahead finished): its turn came, it may edit its files;
- a change of a meeting room one of its claims sits in (a proposal, an acceptance, a
  resolution, an escalation, a notice, the room dissolved);
- a slot of a shared resource granted to a request that waited in line
  (``resource.granted`` with ``waited``), when the request named one of its claims or
  the session itself;
- what :data:`WAKERS` adds: each entry maps an event type to the claims it wakes, so
  another aggregate adds its own wake-ups here without touching the rest.

Pure: the caller reads the events (``(seq, type, data)``) and hands in the state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from detente.clock import whole_seconds
from detente.domain import events as ev

if TYPE_CHECKING:
    from detente.domain.state import RepoState

__all__ = ["WAKERS", "Notice", "Waker", "session_notices"]

#: ``(state, event data) -> ids of the claims the event wakes``.
Waker = Callable[["RepoState", Mapping[str, Any]], Iterable[str]]

_ROOM_CHANGES = {
    ev.MEETING_PROPOSAL_ADDED: "a proposal was made",
    ev.MEETING_PROPOSAL_ACCEPTED: "a proposal was accepted",
    ev.MEETING_RESOLVED: "it was resolved",
    ev.MEETING_ESCALATED: "it was escalated to a person",
    ev.MEETING_HANDOFF_ACCEPTED: "a handoff was accepted",
    ev.MEETING_NOTICE: "a notice was posted",
    ev.MEETING_DISSOLVED: "it closed: no contest is left",
    ev.MEETING_JOINED: "another claim joined",
}


def _activated(state: RepoState, data: Mapping[str, Any]) -> Iterable[str]:
    # A claim granted at once when it opened never waited: nothing to wake.
    return () if data.get("reason") == "no overlap" else (str(data.get("claimId")),)


def _room(state: RepoState, data: Mapping[str, Any]) -> Iterable[str]:
    meeting = state.meetings.get(str(data.get("meetingId")))
    return meeting.participants if meeting is not None else ()


def _slot(state: RepoState, data: Mapping[str, Any]) -> Iterable[str]:
    # A slot granted at once answered its own request: only a wait in line wakes.
    claim = data.get("claimId")
    return (str(claim),) if data.get("waited") and claim else ()


#: Event type -> the claims it wakes. Extend it for a new kind of wait.
WAKERS: dict[str, Waker] = {
    ev.CLAIM_ACTIVATED: _activated,
    ev.CLAIM_RESUMED: _activated,
    ev.RESOURCE_GRANTED: _slot,
    **{kind: _room for kind in _ROOM_CHANGES},
}


@dataclass(frozen=True)
class Notice:
    """One wake-up for a session.

    Attributes:
        seq: the event's global sequence number.
        type: the event's type.
        claim_id: the session's claim it concerns (None: a resource request that named
            the session and no claim).
        meeting_id: the room, for a room change.
        turn: the claim may write now (its turn came): a stop hook tells the agent to
            continue.
        text: one sentence for the agent.
    """

    seq: int
    type: str
    claim_id: str | None
    meeting_id: str | None
    turn: bool
    text: str

    def to_wire(self) -> dict[str, Any]:
        """``{seq, type, claimId, meetingId, turn, text}``."""
        return {
            "seq": self.seq,
            "type": self.type,
            "claimId": self.claim_id,
            "meetingId": self.meeting_id,
            "turn": self.turn,
            "text": self.text,
        }


def session_notices(
    state: RepoState,
    claim_ids: Sequence[str],
    events: Iterable[tuple[int, str, Mapping[str, Any]]],
    session_id: str | None = None,
) -> list[Notice]:
    """The notices of a session whose claims are ``claim_ids``, in log order (one per
    event and claim).

    Args:
        state: the repository's state now.
        claim_ids: the session's claims.
        events: ``(seq, type, data)`` after the session's ``delivered_up_to``.
        session_id: the session: a resource slot its request waited for (naming no claim
            of it) wakes it too.
    """
    mine = set(claim_ids)
    out: list[Notice] = []
    for seq, kind, data in events:
        waker = WAKERS.get(kind)
        if waker is None:
            continue
        woken = list(dict.fromkeys(c for c in waker(state, data) if c in mine))
        for claim_id in woken:
            out.append(_notice(state, seq, kind, claim_id, data))
        if (
            not woken
            and kind == ev.RESOURCE_GRANTED
            and data.get("waited")
            and session_id is not None
            and data.get("sessionId") == session_id
        ):
            out.append(_notice(state, seq, kind, None, data))
    return out


def _notice(
    state: RepoState, seq: int, kind: str, claim_id: str | None, data: Mapping[str, Any]
) -> Notice:
    if kind == ev.RESOURCE_GRANTED:
        name = str(data.get("resource"))
        until = whole_seconds(str(data.get("expiresAt")))
        return Notice(
            seq,
            kind,
            claim_id,
            None,
            True,
            f"detente: your turn came for resource {name}: a slot is yours (fencing token "
            f"{data.get('fencingToken')}, lease until {until}); proceed, and "
            f"release it when done (detente resource release {name}).",
        )
    assert claim_id is not None  # only a resource slot wakes a session without a claim
    claim = state.claims.get(claim_id)
    active_now = claim is not None and claim.status.value == "active"
    if kind in _ROOM_CHANGES:
        room = str(data.get("meetingId"))
        return Notice(
            seq,
            kind,
            claim_id,
            room,
            False,
            f"detente: meeting room {room} of your claim {claim_id} changed: "
            f"{_ROOM_CHANGES[kind]} (detente meeting show {room}).",
        )
    if active_now:
        text = (
            f"detente: your claim {claim_id} is active now: your turn came, you may "
            "proceed with its files."
        )
    else:
        status = claim.status.value if claim is not None else "gone"
        text = f"detente: your claim {claim_id} was activated, and is {status} again now."
    return Notice(seq, kind, claim_id, None, active_now, text)
