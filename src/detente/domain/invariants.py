"""Protocol invariants: what must hold after every command (pure; no IO).

Checked after every command in the test suite, by the model-based race suite, and by
``detente audit verify`` (on the replayed state and along the replay):

1. every ``negotiating`` claim sits in at least one open meeting whose contest is still
   live (or waits for a handoff addressed to it);
2. no open meeting without a live contest;
3. no two claims with granted authority over intersecting exclusive targets, unless a
   sharing resolution (``joint``; a ``serialize`` or a pending ``handoff`` whose
   authority rule names who writes) says so; judged granted target against granted
   target (``find_overlaps(..., granted_only=True)``), so either one's pending part
   never turns a ``potential`` meeting of their granted parts into a reported one;
4. every status change in the log is an edge of the transition table (on replay);
5. projections equal a replay (the audit compares stored rows; the tests compare the
   service's cached projection with an independent replay);
6. each claim's scope after a resolution keeps its uncontested scope: a split gives up
   only what other assignments name; a pattern that covers another's assigned target
   stays, with that target carved out (and nothing else);
7. no ``negotiating`` claim waits only on claims that asked after it and were never
   granted (first come, first granted: the earliest waiter gets a released target);
8. a claim's status agrees with the authority rule: a claim that may write its granted
   targets in its status (``active``, or granted and waiting for more) is held off by
   nobody over them (:func:`detente.domain.authority.holds_off`: a ``serialize``
   ``then`` never reads ``active`` while its ``first`` holds);
9. every participant of an open or escalated meeting is live (it holds): a departed
   claim leaves its rooms (``meeting.left``);
10. no target is writable by nobody after a resolution that assigned it: a path a split
    assigned to a claim that still holds it is granted to that claim, or pending while
    a claim ahead of it in line holds it off (a holder with authority, a waiter that
    asked first: :func:`detente.domain.meetings.split_grants.held_ahead`); a later
    waiter never keeps it from its assignee. Only the targets the split's room contested
    count: a target the assignee kept that the room never contested may still wait on
    another room (one escalated to a person, say);
11. a shared resource with requests in line has no free slot (first come, first granted:
    a freed slot goes to the head of the line in the transaction that freed it), and no
    two of its live grants share a fencing token.

:func:`state_violations` checks 1-3 and 7-11 on one state; :class:`Replay` folds events
one by one and checks 4 and 6 along the way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from detente.domain import events as ev
from detente.domain.authority import carries_authority, holds_off, writes_granted_scope
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.transitions import allowed
from detente.domain.live_contests import awaiting_handoff, meeting_is_live, waits_on_someone
from detente.domain.meetings.model import Decided, MeetingStatus
from detente.domain.meetings.resolution_types import SplitOwnership, resolution_from_wire
from detente.domain.meetings.split_grants import held_ahead
from detente.domain.meetings.split_named import carved_for
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.carveouts import is_covered
from detente.domain.overlap.globs import Undecided, intersect
from detente.domain.overlap.model import Severity
from detente.domain.state import RepoState
from detente.errors import ValidationError

__all__ = ["Replay", "state_violations"]


def _granted_targets(claim: Claim) -> Targets:
    return Targets(
        paths=tuple(p for p in claim.paths if p not in claim.pending_paths),
        modules=claim.modules,
        symbols=claim.symbols,
        contracts=claim.contract_areas,
        memory=claim.memory_impacts,
        base_commit=claim.base_commit,
        carve_outs=claim.carve_outs,
    )


def state_violations(state: RepoState) -> list[str]:
    """Invariants 1-3 and 7-11 on ``state``; one sentence per violation (empty: all hold)."""
    out: list[str] = []
    for claim in sorted(state.claims.values(), key=lambda c: c.id):
        if claim.status is not ClaimStatus.NEGOTIATING:
            continue
        rooms = [state.meetings[m] for m in state.meetings.rooms_of_claim.get(claim.id, ())]
        live = [m for m in rooms if m.status is MeetingStatus.OPEN and meeting_is_live(state, m)]
        if not live and not awaiting_handoff(state, claim.id):
            out.append(
                f"claim {claim.id} is negotiating in no open meeting with a live contest "
                f"(rooms: {', '.join(m.id + ':' + m.status.value for m in rooms) or 'none'})"
            )
        elif claim.holding and not waits_on_someone(state, claim):
            out.append(
                f"claim {claim.id} is negotiating although only later waiters that were "
                "never granted contest it (the first waiter must be granted)"
            )
    for meeting in sorted(state.meetings.values(), key=lambda m: m.id):
        if meeting.status is MeetingStatus.OPEN and not meeting_is_live(state, meeting):
            out.append(f"meeting {meeting.id} is open without a live contest")
    seen: set[frozenset[str]] = set()
    for claim in sorted(state.claims.values(), key=lambda c: c.id):
        if not carries_authority(claim):
            continue
        # Granted against granted only: a pair's severity is judged on what both hold
        # with authority, never raised by either one's pending part.
        granted = find_overlaps(state, _granted_targets(claim), exclude=claim.id, granted_only=True)
        for overlap in granted:
            other = state.claims[overlap.claim_id]
            pair = frozenset({claim.id, other.id})
            if overlap.severity is not Severity.BLOCKING or pair in seen:
                continue
            if not carries_authority(other) or not overlap.targets:
                continue
            seen.add(pair)
            out.append(
                f"claims {claim.id} and {other.id} both hold granted authority over "
                f"{overlap.targets[0].witness!r} and no sharing resolution says so"
            )
    out += _status_against_authority(state)
    for meeting in sorted(state.meetings.values(), key=lambda m: m.id):
        if meeting.status is MeetingStatus.RESOLVED:
            continue
        gone = [
            c for c in meeting.participants if c in state.claims and not state.claims[c].holding
        ]
        if gone:
            out.append(
                f"meeting {meeting.id} is {meeting.status.value} with participants that no "
                f"longer hold: {', '.join(gone)}"
            )
    out += _assigned_but_unwritable(state)
    out += _resources_served_in_order(state)
    return out


def _resources_served_in_order(state: RepoState) -> list[str]:
    """Invariant 11, over every shared resource."""
    out: list[str] = []
    for resource in sorted(state.resources.values(), key=lambda r: r.id):
        if resource.waiters and resource.free:
            out.append(
                f"resource {resource.name} has {resource.free} free slot(s) while "
                f"{len(resource.waiters)} request(s) wait in line"
            )
        tokens = [g.fencing_token for g in resource.holders]
        if len(set(tokens)) != len(tokens):
            out.append(f"resource {resource.name} has two grants with one fencing token")
    return out


def _meet(a: str, b: str) -> bool:
    """Do path targets ``a`` and ``b`` cover a path in common (undecided counts as yes)?"""
    try:
        return intersect(a.partition("#")[0], b.partition("#")[0]) is not None
    except Undecided:
        return True


def _assigned_but_unwritable(state: RepoState) -> list[str]:
    """Invariant 10, over the path targets of every applied split."""
    out: list[str] = []
    for meeting in sorted(state.meetings.values(), key=lambda m: m.id):
        decided = meeting.resolution
        if not isinstance(decided, Decided) or not isinstance(decided.resolution, SplitOwnership):
            continue
        for a in decided.resolution.assignments:
            claim = state.claims.get(a.claim_id)
            if claim is None or not claim.holding or claim.granted:
                continue
            stranded = [t for t in a.targets if t in claim.paths and t not in claim.pending_paths]
            # A split settles its own room's contest: a target the claim kept that the
            # room never contested may still wait on another room (an escalation, say).
            contested = [c.target for c in meeting.contested_targets]
            stranded = [t for t in stranded if any(_meet(t, c) for c in contested)]
            if stranded:
                ahead = held_ahead(state, claim)
                stranded = [t for t in stranded if t not in ahead]
            if stranded:
                out.append(
                    f"meeting {meeting.id} assigned {', '.join(stranded)} to claim "
                    f"{claim.id}, which was never granted it: nobody may write it"
                )
    return out


def _status_against_authority(state: RepoState) -> list[str]:
    """Invariant 8: what reads as writing its granted targets is held off by nobody
    (blocking overlaps are invariant 3's; this one reads the settled pairs)."""
    out: list[str] = []
    for claim in sorted(state.claims.values(), key=lambda c: c.id):
        if not claim.holding or not claim.granted or not writes_granted_scope(claim):
            continue
        for overlap in find_overlaps(state, _granted_targets(claim), exclude=claim.id):
            if overlap.severity is Severity.BLOCKING or not holds_off(state, claim, overlap):
                continue
            witness = overlap.targets[0].witness if overlap.targets else "its targets"
            out.append(
                f"claim {claim.id} reads {claim.status.value} (granted) but the authority "
                f"rule lets {overlap.claim_id} hold it off {witness!r}"
            )
    return out


@dataclass
class Replay:
    """Fold a repository's events one at a time, checking invariants 4 and 6.

    Attributes:
        state: the replayed projection.
        violations: sentences, in log order.
    """

    state: RepoState
    violations: list[str] = field(default_factory=list)
    _kept: dict[str, tuple[str, list[str], list[str]]] = field(default_factory=dict)

    def fold(
        self,
        event_type: str,
        data: dict[str, Any],
        event_id: str,
        apply: Callable[[RepoState], None],
    ) -> None:
        """Apply one event to :attr:`state`, recording any violation it shows.

        Args:
            event_type: the event's type.
            data: its payload (at the current version).
            event_id: its id, named in violations.
            apply: folds the event into the state it is given (the caller's
                :meth:`RepoState.apply` call, which knows the envelope: time, sequence,
                stream).
        """
        claim_id = data.get("claimId")
        before = self.state.claims.get(claim_id) if isinstance(claim_id, str) else None
        if event_type == ev.MEETING_RESOLVED:
            self._expect_kept(str(data.get("meetingId")), data.get("resolution"))
        apply(self.state)
        after = self.state.claims.get(claim_id) if isinstance(claim_id, str) else None
        if (
            before is not None
            and after is not None
            and before.status is not after.status
            and not allowed(before.status, after.status)
        ):
            self.violations.append(
                f"event {event_id} ({event_type}) moves claim {after.id} "
                f"{before.status.value} -> {after.status.value}: not an edge of the "
                "transition table"
            )
        if event_type == ev.CLAIM_SCOPE_CHANGED and after is not None and after.id in self._kept:
            meeting_id, kept, theirs = self._kept.pop(after.id)
            before_cuts = dict(before.carve_outs) if before is not None else {}
            lost = [p for p in kept if p not in after.paths + after.pending_paths]
            lost += [
                f"{p} minus {c}"
                for p, cuts in after.carve_outs
                for c in cuts
                if c not in theirs and c not in before_cuts.get(p, ())
            ]
            if lost:
                self.violations.append(
                    f"meeting {meeting_id}'s resolution dropped uncontested targets of claim "
                    f"{after.id}: {', '.join(lost)}"
                )

    def _expect_kept(self, meeting_id: str, stored: object) -> None:
        try:
            resolution = resolution_from_wire(stored)
        except ValidationError:
            return  # not a resolution this detente can read: the fold reports it
        if not isinstance(resolution, SplitOwnership):
            return  # only a split narrows scopes by assignment
        assignments = resolution.assignments
        for a in assignments:
            claim = self.state.claims.get(a.claim_id)
            if claim is None:
                continue
            theirs = [
                cut for b in assignments if b is not a for t in b.targets for cut in carved_for(t)
            ]
            kept = [
                p
                for p in claim.paths + claim.pending_paths
                if not is_covered(p, [*claim.carved(p), *theirs])
            ]
            self._kept[claim.id] = (meeting_id, kept, theirs)
