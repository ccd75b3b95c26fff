"""Merge checks between live claims: which branches to merge, and what a conflict means.

Declared scopes miss conflicts: two symbol claims on neighbouring functions of one file
do not overlap, yet their adjacent edits may be hunks ``git merge`` cannot combine. When
a claim's branch moves, the service merges it (``git merge-tree --write-tree``, nothing
checked out) with the integration branch and with the branch of every other live claim
that *shares a directory* with it (:func:`merge_partners`), and records what git said
(:func:`decide_merge_check`):

- ``claim.merge_checked`` on the claim's checks stream: the head checked, the paths the
  branch changes, what it was merged with, and each predicted conflict (files, the
  claims' declared symbols in them and the definitions either branch changed there, where
  the symbol index knows them, the conflicting hunks);
- for a predicted conflict with another live claim, a meeting (both claims stay
  ``active``: nothing they hold changes): the room the two already share when one is
  open; none when a meeting resolution already settled the pair (they agreed how to
  proceed: the conflict is only recorded); else an open merge room either sits in, which
  the other joins
  (``meeting.joined``); else a new room (``meeting.opened`` with ``mergeConflicts``,
  the hunks as the witness). The room stays open while the newest check of the pair
  still predicts the conflict (:func:`conflict_stands`) and dissolves once a check of
  either branch merges cleanly with the other.

Cost is bounded by the pairs that share a directory: a claim's directories are those of
its declared targets (the literal part of each path pattern; a pattern with ``**`` or a
trailing ``/`` covers its whole subtree) and of the paths its branch changed at its
newest check, so a claim that drifted outside its scope is still paired where it writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.checks.model import (
    CLAIM_MERGE_CHECKED,
    PredictedConflict,
    checks_subject,
)
from detente.domain.claims.guards import get_claim
from detente.domain.claims.model import Claim
from detente.domain.meetings.model import Meeting, MeetingStatus
from detente.domain.overlap.symbols import split_symbol
from detente.domain.policy import IdSource, Policy
from detente.domain.state import RepoState
from detente.errors import InvalidTransition

__all__ = [
    "MergeFinding",
    "RecordMergeCheck",
    "conflict_stands",
    "decide_merge_check",
    "directories",
    "merge_partners",
    "shares_directory",
]

_WILD = frozenset("*?[")
#: A directory of a claim: ``(path, deep)``; deep covers the whole subtree under it.
Directory = tuple[str, bool]


@dataclass(frozen=True)
class MergeFinding:
    """What ``git merge-tree`` said about the claim's head and one other commit.

    Attributes:
        against: the other claim's id, or ``ref:<refname>`` (the integration branch).
        head: the other commit (full OID).
        clean: the merge has no conflict.
        files: conflicted paths.
        hunks: ``(path, line, text)`` conflicting regions.
        symbols: the definitions either side changed in those files, where the symbol
            index knows them (``path::Qualified.name``).
    """

    against: str
    head: str
    clean: bool
    files: tuple[str, ...] = ()
    hunks: tuple[tuple[str, int, str], ...] = ()
    symbols: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecordMergeCheck:
    """Record the merge check of ``claim_id``'s branch at ``head``.

    Attributes:
        claim_id: the claim whose branch moved.
        head: its branch head (full OID).
        changed: the paths the branch changes since its base.
        findings: one per commit merged with.
    """

    claim_id: str
    head: str
    changed: tuple[str, ...]
    findings: tuple[MergeFinding, ...]


def _directory(pattern: str) -> Directory:
    """``src/a/**`` -> ``("src/a", True)``; ``src/a/x.py`` -> ``("src/a", False)``."""
    path = (split_symbol(pattern)[0] or "") if "::" in pattern else pattern
    cut = next((i for i, c in enumerate(path) if c in _WILD), None)
    literal = path if cut is None else path[:cut]
    deep = path.endswith("/") or (cut is not None and "**" in path[cut:])
    parent = literal.rsplit("/", 1)[0] if "/" in literal else ""
    return parent, deep


def directories(claim: Claim, touched: Iterable[str] = ()) -> frozenset[Directory]:
    """The directories of ``claim``'s declared paths and symbols and of ``touched``."""
    found = {_directory(p) for p in (*claim.paths, *claim.pending_paths, *claim.symbols)}
    found.update(_directory(p) for p in touched)
    return frozenset(found)


def _under(path: str, top: str) -> bool:
    return not top or path == top or path.startswith(top + "/")


def shares_directory(mine: Iterable[Directory], theirs: Iterable[Directory]) -> bool:
    """Do two claims share a directory: the same one, or one inside a deep one?"""
    theirs = tuple(theirs)
    for path, deep in mine:
        for other, other_deep in theirs:
            if path == other or (deep and _under(other, path)):
                return True
            if other_deep and _under(path, other):
                return True
    return False


def merge_partners(state: RepoState, claim_id: str, changed: Sequence[str]) -> list[Claim]:
    """The other live claims with a branch whose directories meet ``claim_id``'s (its
    declared targets and ``changed``, the paths its branch changes), by id."""
    claim = get_claim(state, claim_id)
    mine = directories(claim, changed)
    out: list[Claim] = []
    for other in state.claims.values():
        if other.id == claim_id or not other.holding or not other.branch:
            continue
        if shares_directory(mine, directories(other, state.checks.touched(other.id))):
            out.append(other)
    return sorted(out, key=lambda c: c.id)


def conflict_stands(state: RepoState, a: str, b: str) -> bool:
    """Does the newest merge check between claims ``a`` and ``b`` (either's, whichever
    merged with the other last) predict a conflict?"""
    newest: tuple[int, bool] | None = None
    for mine, theirs in ((a, b), (b, a)):
        found = state.checks.get(mine)
        merge = found.merge if found is not None else None
        if merge is None or theirs not in merge.checked:
            continue
        conflicted = any(c.against == theirs for c in merge.conflicts)
        if newest is None or merge.order > newest[0]:
            newest = (merge.order, conflicted)
    return newest is not None and newest[1]


def _symbols(
    claims: Sequence[Claim], files: Sequence[str], indexed: Sequence[str]
) -> tuple[str, ...]:
    """The claims' declared symbols in ``files`` and the ``indexed`` ones git changed."""
    wanted = set(files)
    declared = {s for c in claims for s in c.symbols if (split_symbol(s)[0] or "") in wanted}
    return tuple(sorted(declared | set(indexed)))


def _open_room(state: RepoState, members: Iterable[str], merge_only: bool) -> Meeting | None:
    """The newest open room holding every claim of ``members`` (a merge room only, when
    ``merge_only``)."""
    wanted = set(members)
    found = [
        m
        for m in state.meetings.values()
        if m.status is MeetingStatus.OPEN
        and wanted <= set(m.participants)
        and (m.merge_conflicts or not merge_only)
    ]
    return max(found, key=lambda m: (m.created_at, m.id)) if found else None


def decide_merge_check(
    state: RepoState, cmd: RecordMergeCheck, now: datetime, ids: IdSource, policy: Policy
) -> list[ev.Event]:
    """Record a merge check and open (or join) a room for each predicted conflict with
    another live claim (see the module docstring).

    Returns:
        ``claim.merge_checked``, preceded by a ``meeting.opened`` or ``meeting.joined`` per
        conflicting claim that shares no open room with this one yet.

    Raises:
        NotFoundError: ``not_found``: no such claim.
        InvalidTransition: ``invalid_transition``: the claim no longer holds (completed,
            abandoned, taken over): its branch is nobody's work in progress.
    """
    claim = get_claim(state, cmd.claim_id)
    if not claim.holding:
        raise InvalidTransition(
            claim.status.value,
            "merge-checked",
            f"claim {claim.id} is {claim.status.value}: only a live claim's branch is checked",
        )
    out: list[ev.Event] = []
    conflicts: list[PredictedConflict] = []
    checked: list[str] = []
    rooms: list[str] = []
    for finding in cmd.findings:
        other = state.claims.get(finding.against)
        if not finding.against.startswith("ref:") and (other is None or not other.holding):
            continue  # gone since git ran: nothing to negotiate with
        checked.append(finding.against)
        if finding.clean:
            continue
        parties = [claim] if other is None else [claim, other]
        symbols = _symbols(parties, finding.files, finding.symbols)
        conflict = PredictedConflict(finding.against, finding.files, symbols, finding.hunks)
        conflicts.append(conflict)
        if other is not None:
            room, events = _room_for(state, claim, other, conflict, now, ids, policy)
            out += events
            if room is not None:
                rooms.append(room)
    out.append(
        ev.stream_event(
            ids,
            checks_subject(claim.id),
            CLAIM_MERGE_CHECKED,
            claimId=claim.id,
            head=cmd.head,
            changed=list(cmd.changed),
            checked=checked,
            conflicts=[c.to_wire() for c in conflicts],
            meetingIds=list(dict.fromkeys(rooms)),
        )
    )
    return out


def _room_for(
    state: RepoState,
    claim: Claim,
    other: Claim,
    conflict: PredictedConflict,
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> tuple[str | None, list[ev.Event]]:
    """``(room id or None, events)``: the room the two share, none when a resolution
    already settled the pair (a ``serialize`` or a ``joint`` they agreed: the conflict is
    theirs to merge in that order), an open merge room one of them sits in (the other
    joins), or a new one."""
    shared = _open_room(state, (claim.id, other.id), merge_only=False)
    if shared is not None:
        return shared.id, []
    settled = state.meetings.resolved_pairs.get(frozenset({claim.id, other.id}))
    if settled is not None:
        return None, []
    pair = sorted((claim.id, other.id))
    contested = [
        {
            "target": path,
            "claimIds": pair,
            "reason": f"predicted merge conflict: git merge-tree of {claim.id}'s branch "
            f"{claim.branch} and {other.id}'s branch {other.branch} stops in {path!r}",
        }
        for path in conflict.files
    ]
    witness = {**conflict.to_wire(), "claimIds": pair}
    for member, joiner in ((other, claim), (claim, other)):
        room = _open_room(state, (member.id,), merge_only=True)
        if room is not None:
            return room.id, [
                ev.meeting_event(
                    ids,
                    room.id,
                    ev.MEETING_JOINED,
                    claimId=joiner.id,
                    contestedTargets=contested,
                    mergeConflicts=[witness],
                )
            ]
    meeting_id = ids("mtg")
    return meeting_id, [
        ev.meeting_event(
            ids,
            meeting_id,
            ev.MEETING_OPENED,
            participants=[other.id, claim.id],
            contestedTargets=contested,
            deadline=format_time(policy.meeting_deadline(now)),
            mergeConflicts=[witness],
        )
    ]
