"""Live contests: who still keeps a claim waiting, and which rooms still hold a contest.

A *live contest* of a meeting is a participant that is ``negotiating`` (or ``blocked``)
with a blocking overlap against another participant, or whose edit met a user's edit
(a contested target naming only that claim: a deferred memory patch). The recipient of
a pending ``handoff`` waits for its own acceptance, not for a room. Read by
:mod:`detente.domain.settle` (what to grant, room or dissolve) and by the invariants.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from detente.domain.authority import holds_off
from detente.domain.checks.merge import conflict_stands
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.meetings.model import Decided, Meeting, MeetingStatus
from detente.domain.meetings.on_request import potential_between
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.model import Overlap
from detente.domain.overlap.remembered import claim_overlaps
from detente.domain.state import RepoState
from detente.domain.waiting_line import queued_behind

__all__ = [
    "WAITING",
    "BlockerMemo",
    "awaiting_handoff",
    "escalated",
    "live_blockers",
    "meeting_is_live",
    "open_rooms",
    "stakeless",
    "user_contest",
    "waits_on_someone",
]

#: The statuses of a claim that waits for a room (or an arbitrator).
WAITING = (ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED)


def live_blockers(
    state: RepoState, claim: Claim, among: Collection[str] | None = None
) -> list[Overlap]:
    """Overlaps of ``claim`` whose other holding claim keeps it waiting: blocking ones,
    and those a resolution settled without letting ``claim`` write
    (:func:`detente.domain.authority.holds_off`); only with the claims ``among`` when
    given (a room's parties)."""
    if not claim.holding:
        return []
    overlaps = find_overlaps(state, Targets.of(claim), exclude=claim.id, among=among)
    return [o for o in overlaps if holds_off(state, claim, o)]


class BlockerMemo:
    """:func:`live_blockers` of each claim over one unchanging state, computed once.

    A settle round asks about one claim from every room it sits in (its own standing,
    whether each room is still live, who in it has no stake left): about three times per
    claim on a repository with crowded rooms. Called as ``memo(claim, among)``.
    """

    def __init__(self, state: RepoState) -> None:
        self._state = state
        self._known: dict[str, list[Overlap]] = {}
        self._overlaps: dict[str, list[Overlap]] = {}

    def overlaps(self, claim: Claim) -> list[Overlap]:
        """Every overlap of ``claim`` with another holding claim (``find_overlaps``),
        computed once: what :func:`live_blockers` filters."""
        found = self._overlaps.get(claim.id)
        if found is None:
            found = self._overlaps[claim.id] = claim_overlaps(self._state, claim)
        return found

    def __call__(self, claim: Claim, among: Collection[str] | None = None) -> list[Overlap]:
        known = self._known.get(claim.id)
        if known is None:
            state = self._state
            found = self.overlaps(claim) if claim.holding else []
            known = self._known[claim.id] = [o for o in found if holds_off(state, claim, o)]
        return known if among is None else [o for o in known if o.claim_id in among]


def awaiting_handoff(state: RepoState, claim_id: str) -> bool:
    """True when ``claim_id`` is the recipient of a handoff it has not accepted yet."""
    for meeting_id in state.meetings.rooms_of_claim.get(claim_id, ()):
        outcome = state.meetings[meeting_id].resolution
        if isinstance(outcome, Decided) and outcome.resolution.awaits() == claim_id:
            return True
    return False


def open_rooms(state: RepoState, claim_id: str) -> list[Meeting]:
    """The open meetings ``claim_id`` sits in."""
    return [
        state.meetings[m]
        for m in state.meetings.rooms_of_claim.get(claim_id, ())
        if state.meetings[m].status is MeetingStatus.OPEN
    ]


def escalated(state: RepoState, claim_id: str) -> bool:
    """Does ``claim_id`` sit in a meeting escalated to human arbitration?"""
    return any(
        state.meetings[m].status is MeetingStatus.ESCALATED
        for m in state.meetings.rooms_of_claim.get(claim_id, ())
    )


def user_contest(meeting: Meeting, claim_id: str) -> bool:
    """A contested target naming only ``claim_id``: its edit met a user's edit (a deferred
    memory patch); only a resolution (or releasing the claim) ends that contest."""
    return claim_id in meeting.solo_claims


def meeting_is_live(
    state: RepoState, meeting: Meeting, blockers: BlockerMemo | None = None
) -> bool:
    """Does a participant still wait on another participant, or on a user's edit (see the
    module docstring)? ``blockers`` reuses a settle round's answers."""
    members = meeting.party_set
    if meeting.requested_by is not None and _potential_left(state, meeting):
        return True
    if meeting.merge_conflicts and _conflict_left(state, meeting):
        return True
    for claim_id in meeting.participants:
        claim = state.claims.get(claim_id)
        if claim is None or claim.status not in WAITING or not claim.holding:
            continue
        if user_contest(meeting, claim_id):
            return True
        found = blockers(claim, members) if blockers else live_blockers(state, claim, members)
        if found:
            return True
    return False


def stakeless(
    state: RepoState,
    meeting: Meeting,
    exclude: Sequence[str] = (),
    blockers: BlockerMemo | None = None,
) -> list[str]:
    """The holding participants of ``meeting`` (other than ``exclude``) that no live
    contest ties to another participant: none waits on another member, no waiting member
    waits on it, no user's edit contests its write, and no handoff to it is pending.
    ``blockers`` reuses a settle round's answers."""
    members = [c for c in meeting.participants if c not in exclude and c in state.claims]
    members = [c for c in members if state.claims[c].holding]
    in_room = frozenset(members)
    tied: set[str] = set()
    for claim_id in members:
        claim = state.claims[claim_id]
        if user_contest(meeting, claim_id) or awaiting_handoff(state, claim_id):
            tied.add(claim_id)
        if claim.status not in (*WAITING, ClaimStatus.SUSPENDED):
            continue
        found = blockers(claim, in_room) if blockers else live_blockers(state, claim, in_room)
        for o in found:
            tied.update((claim_id, o.claim_id))
    return [c for c in members if c not in tied]


def _potential_left(state: RepoState, meeting: Meeting) -> bool:
    """Does a room asked for over a ``potential`` overlap still have one between two of
    its live participants (:mod:`detente.domain.meetings.on_request`)?"""
    live = [c for c in meeting.participants if c in state.claims and state.claims[c].holding]
    return any(potential_between(state, a, b) is not None for a in live for b in live if a < b)


def _conflict_left(state: RepoState, meeting: Meeting) -> bool:
    """Does a room a predicted merge conflict opened still have one standing between two
    of its live participants (:func:`detente.domain.checks.merge.conflict_stands`)?"""
    live = [c for c in meeting.participants if c in state.claims and state.claims[c].holding]
    return any(conflict_stands(state, a, b) for a in live for b in live if a < b)


def waits_on_someone(state: RepoState, claim: Claim) -> bool:
    """Does a ``negotiating`` claim wait on something that can move?

    True when a holder blocks it (one it does not go before, see
    :func:`~detente.domain.waiting_line.queued_behind`),
    a user's edit contests its write, or a handoff to it awaits its acceptance. False
    means :func:`detente.domain.settle.settle` grants it.
    """
    if awaiting_handoff(state, claim.id):
        return True
    if any(user_contest(m, claim.id) for m in open_rooms(state, claim.id)):
        return True
    return any(not queued_behind(state, claim, o) for o in live_blockers(state, claim))
