"""THE answer to "may claim C write target T now?" (every caller asks it).

``claim check``, the ``pre-commit`` guard, the server-side ``pre-receive`` check,
integration evidence, memory writes and MCP readiness all reach this module (through
the service), so they cannot disagree. The rule (DESIGN principle 1):

1. **Granted targets carry authority.** A claim's path patterns block others only once
   granted (the claim has been ``active``) and while the claim holds (live, or expired);
   the pending part of a scope change waits like a newcomer.
2. **A negotiating claim never blocks a holder.** A newcomer contesting a target waits
   in its meeting; the holder keeps writing until a resolution says otherwise.
3. **An expired claim blocks others but cannot write**: its authority is frozen until it
   is taken over or abandoned (``lease_expired`` for its own writes).
4. **An append-only document is never exclusive**: appenders serialize through the
   repository's command transaction; they do not lock each other out, so an expired
   appender blocks nobody.
5. **A generated artifact is rebuilt, not merged** (``linguist-generated`` in
   ``.gitattributes``, ``[generated]`` in ``detente.toml``, at the writer's base commit):
   a change that regenerates one is neither held off nor outside the claim, and it
   neither extends the claim's scope nor creates an overlap
   (:mod:`detente.domain.overlap.trees`).

A pattern covers what it matches minus its carve-outs (the targets a split assigned to
another claim, :mod:`detente.domain.overlap.carveouts`), for the writer and the holders
alike. A recorded meeting resolution lets two claims share what both hold: ``joint`` (all
members), ``serialize`` (the ``first``), a pending ``handoff`` (the sender). Advisory
claims (MCP file leases) never block. A claim that was taken over is fenced off:
every late write is ``stale_fencing_token`` with ``expected``/``actual``.

Writes to concrete paths (:func:`writable`, :func:`owns`, :func:`path_refusals`) and to
memory sections (:mod:`detente.domain.memory.authority`) share :func:`blocks`. A write
*question* (``claim check``, MCP ``claim_check``, ``POST .../writes/check``) is answered
from the same rule by :mod:`detente.domain.write_check`, files and ``path::Symbol``
targets alike.
"""

from __future__ import annotations

from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.generated_authority import artifact_at, artifact_writable
from detente.domain.named_authority import Edit, named_owned, named_refusals
from detente.domain.overlap.carveouts import carved_covers
from detente.domain.overlap.model import Overlap, OverlapKind, Severity
from detente.domain.overlap.paths import escape
from detente.domain.overlap.trees import Judge, Verdict
from detente.domain.state import RepoState
from detente.errors import InvalidTransition, OverlapBlocking

__all__ = [
    "blocks",
    "carries_authority",
    "check_writer_status",
    "holds_off",
    "literal_pattern",
    "may_share",
    "owns",
    "path_refusals",
    "writable",
    "writes_granted_scope",
]


def literal_pattern(path: str) -> str:
    """A pattern that matches exactly ``path`` (see :func:`~detente.domain.overlap.escape`)."""
    return escape(path)


def carries_authority(other: Claim, pattern: str | None = None) -> bool:
    """Does ``other`` (its ``pattern``, when given) carry write authority over others?

    Only the granted targets of a holding, non-advisory claim do (rules 1-3).
    """
    if other.advisory or not other.holding or not other.granted:
        return False
    return pattern is None or pattern not in other.pending_paths


def may_share(state: RepoState, claim_id: str | None, other: Claim) -> bool:
    """True when a recorded resolution (or ``other`` being advisory) lets ``claim_id`` write
    what ``other`` holds: ``joint`` members, the ``serialize`` ``first``, the sender of a
    pending ``handoff``."""
    if other.advisory:
        return True
    if claim_id is None:
        return False
    if not state.has_meetings():  # no room ever settled anything
        return False
    settled = state.meetings.resolved_pairs.get(frozenset({claim_id, other.id}))
    return settled is not None and settled.resolution.lets_write(claim_id)


def blocks(
    state: RepoState, claim_id: str | None, other: Claim, pattern: str | None = None
) -> bool:
    """Does ``other`` (through ``pattern``) keep ``claim_id`` (or nobody) from writing?"""
    return (
        other.id != claim_id
        and carries_authority(other, pattern)
        and not may_share(state, claim_id, other)
    )


def holds_off(state: RepoState, claim: Claim, overlap: Overlap) -> bool:
    """Does the other claim of ``overlap`` (one of ``claim``'s overlaps) keep ``claim``
    waiting for what they share? The status rule, read from the authority rule.

    A ``blocking`` overlap does. So does an overlap a recorded resolution settled when
    that resolution does not let ``claim`` write what the other holds
    (:func:`may_share`: the ``serialize`` ``then`` while its ``first`` holds with
    authority), over a target a write can touch (a contract area alone is not written).
    Every status decision (activation, a serialized claim's resumption, the settling of
    rooms) and the invariants ask this, so a claim never reads ``active`` over a target
    :func:`writable` refuses it.
    """
    if overlap.severity is Severity.BLOCKING:
        return True
    if overlap.severity is not Severity.ADVISORY or claim.advisory:
        return False
    other = state.claims.get(overlap.claim_id)
    if other is None or not carries_authority(other) or may_share(state, claim.id, other):
        return False
    if not state.has_meetings():
        return False
    settled = state.meetings.resolved_pairs.get(frozenset({claim.id, other.id}))
    return settled is not None and any(k is not OverlapKind.CONTRACT for k in overlap.kinds)


def path_refusals(
    state: RepoState, claim_id: str | None, path: str, edit: Edit | None = None
) -> list[Claim]:
    """The claims whose authority over the concrete ``path`` refuses ``claim_id``, by id.

    The path is read literally (``app/[id]/page.tsx`` is that file) by the one matcher
    every guard shares (:meth:`~detente.domain.overlap.PatternIndex.matching`). Where the
    writer's own granted pattern and the holder's meet at ``path`` only as a ``generated``
    overlap, the holder does not refuse it (:func:`_advisory_at`). Two globs that met only
    in paths that did not exist (``potential``: both claims ``active``) do refuse a write of
    one such path: the write makes it a file two claims cover. Symbols and modules
    held by others refuse it by the overlap engine's containment rule, judged on ``edit``
    (the symbols the change touches; None: the whole file), see
    :mod:`detente.domain.named_authority`.
    """
    found: dict[str, Claim] = {}
    me = state.claims.get(claim_id) if claim_id is not None else None
    judge = Judge(state.trees, me.base_commit) if me is not None else None
    for key, theirs in state.claims.path_index.matching(path, exclude=claim_id):
        other = state.claims.get(key)
        if other is None or not blocks(state, claim_id, other, theirs):
            continue
        if me is not None and judge is not None and _advisory_at(judge, me, other, theirs, path):
            continue
        found[other.id] = other
    named = named_refusals(state, path, edit, lambda other: blocks(state, claim_id, other))
    found.update(named)
    return [found[k] for k in sorted(found)]


def _advisory_at(judge: Judge, me: Claim, other: Claim, theirs: str, path: str) -> bool:
    """Do ``me``'s granted patterns covering ``path`` meet ``theirs`` only as generated files?

    The same tree verdict as claim opening (:mod:`detente.domain.overlap.trees`), per
    pattern pair: only ``generated`` is advisory for a write. Any other verdict, or no
    pattern of mine covering ``path`` (their territory), keeps the refusal.
    """
    mine = [
        p for p in me.paths if p not in me.pending_paths and carved_covers(p, me.carved(p), path)
    ]
    if not mine:
        return False
    # Writing ``path`` makes it concrete: a ``potential`` meeting of two globs is now two
    # claims writing one file, so only a generated artifact stays advisory here.
    return all(
        judge(other.base_commit, (p,), (theirs,), path)[0] is Verdict.GENERATED for p in mine
    )


def writable(
    state: RepoState, claim: Claim | None, path: str, edit: Edit | None = None
) -> tuple[list[Claim], bool]:
    """``(refusing claims, outside)`` for one concrete normalised path.

    ``outside`` is True when no granted target of ``claim`` covers the write (a path
    pattern matching it, a module holding the file, or its symbols holding everything
    ``edit`` touches) and nobody refuses it (a refused path is reported once, as
    refused). ``claim`` None: a write nobody claimed, refused only by holders. A
    first-class generated artifact is judged on its generator inputs instead
    (:mod:`detente.domain.generated_authority`); any other generated artifact at the
    claim's base commit is neither refused nor outside (rule 5).
    """
    artifact = artifact_at(state, claim, path)
    if claim is not None and artifact is not None:
        return artifact_writable(state, claim, artifact, lambda o: blocks(state, claim.id, o))
    refusing = path_refusals(state, claim.id if claim is not None else None, path, edit)
    owned = claim is None or owns(claim, path, edit)
    # The base tree is read only for a path that would be refused: the common write (its
    # own, unheld path) costs no tree lookup.
    if (refusing or not owned) and claim is not None and _generated(state, claim, path):
        return [], False
    return refusing, (not refusing and not owned)


def owns(claim: Claim, path: str, edit: Edit | None = None) -> bool:
    """Do ``claim``'s granted targets cover this change to the concrete ``path``?

    A granted path pattern matching ``path`` (minus its carve-outs), a module holding the
    file, or its symbols of ``path`` holding everything ``edit`` touches (None: the whole
    file, which symbols never cover). Who else holds ``path`` is :func:`path_refusals`'s
    question; :func:`writable` asks both.
    """
    granted = (p for p in claim.paths if p not in claim.pending_paths)
    if any(carved_covers(p, claim.carved(p), path) for p in granted):
        return True
    return named_owned(claim, path, edit)


def _generated(state: RepoState, claim: Claim, path: str) -> bool:
    """Is ``path`` a generated artifact at ``claim``'s base commit (rule 5)?"""
    view = state.trees.view(claim.base_commit) if state.trees is not None else None
    return view is not None and view.is_generated(path)


def writes_granted_scope(claim: Claim) -> bool:
    """May ``claim`` write its granted targets in its current status?

    An ``active`` claim may. So may a claim that was granted and is now ``negotiating``
    (its own scope change waits in ``pendingPaths``) or ``blocked`` (a meeting it holds
    targets in was escalated): waiting for more, or for an arbitrator, never freezes
    what it already holds (rule 2); the pending targets stay unwritable.
    """
    if claim.status is ClaimStatus.ACTIVE:
        return True
    return claim.granted and claim.status in (ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED)


def check_writer_status(claim: Claim, state: RepoState | None = None) -> None:
    """The writer itself: an ``active`` claim writes, and a granted one that waits
    (:func:`writes_granted_scope`) writes its granted targets.

    Args:
        claim: the writer.
        state: the projection; when given, a refusal names only the meetings still
            unresolved (open or escalated), not the rooms the claim has left behind.

    Raises:
        OverlapBlocking: it is negotiating or blocked (its writes wait for the meeting;
            ``meetingIds`` lists the unresolved ones).
        InvalidTransition: any other status.
    """
    if writes_granted_scope(claim):
        return
    if claim.status in (ClaimStatus.NEGOTIATING, ClaimStatus.BLOCKED):
        from detente.domain.meetings.model import MeetingStatus

        unresolved = (MeetingStatus.OPEN, MeetingStatus.ESCALATED)
        waiting = [
            m
            for m in claim.meeting_ids
            if state is None or (m in state.meetings and state.meetings[m].status in unresolved)
        ]
        raise OverlapBlocking(
            f"claim {claim.id} is {claim.status.value}: its writes wait for the meeting's "
            f"resolution ({', '.join(waiting) or 'no meeting'})",
            claimId=claim.id,
            meetingIds=waiting,
        )
    if claim.status is not ClaimStatus.ACTIVE:
        raise InvalidTransition(
            claim.status.value,
            "write",
            f"claim {claim.id} is {claim.status.value}: it cannot write",
        )
