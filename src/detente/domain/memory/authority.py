"""Who may write a memory section: coverage, owners and fencing tokens (pure).

A claim *covers* ``path#key`` when one of its path patterns matches the file (the whole
file), or one of its ``memoryImpacts`` matches the file and lists no sections (the whole
file), the key, or a section containing it. Split-ownership resolutions narrow a claim's
impacts to its assigned ``path#section`` targets, so they decide coverage too.

The *owners* of a section are the holding claims whose impacts name the section (or a
section containing it) explicitly; the record's ``ownerClaimId`` is the first active one
by fencing token. A write by claim ``C`` (:func:`check_writer`) requires, in order:

0. ``C`` was not taken over (``stale_fencing_token`` with ``expected``/``actual``);
1. ``C`` is live (``lease_expired``) and ``active`` (``overlap_blocking`` while it
   negotiates or is blocked, ``invalid_transition`` otherwise);
2. the presented fencing token is ``C``'s (older: ``stale_fencing_token``; unknown:
   ``validation_error``);
3. ``C`` covers every target (``forbidden`` naming them);
4. no other claim's *authority* covers a target (``overlap_blocking`` naming the targets
   and holders): granted targets of holding claims only, so a negotiating newcomer never
   blocks the holder (:func:`detente.domain.authority.blocks`, the one rule);
5. the token is not older than the one the section was last written with, while that
   writer's claim still holds (``stale_fencing_token``: a late write from an older grant).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from detente.domain.authority import blocks, check_writer_status
from detente.domain.claims.guards import check_alive, check_fencing, get_claim
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.memory.model import MemoryDocument
from detente.domain.overlap.carveouts import carved_matches
from detente.domain.overlap.globs import matches
from detente.domain.state import RepoState
from detente.errors import (
    ForbiddenError,
    OverlapBlocking,
    StaleFencingToken,
    ValidationError,
)

__all__ = ["check_writer", "covers", "owners", "section_scope"]


def section_scope(doc: MemoryDocument, key: str) -> tuple[str, ...]:
    """``key`` and the keys of the recorded sections containing it, innermost first."""
    by_key = {s.key: s for s in doc.sections}
    out = [key]
    parent = by_key[key].parent if key in by_key else None
    while parent is not None and parent not in out:
        out.append(parent)
        parent = by_key[parent].parent if parent in by_key else None
    return tuple(out)


def covers(claim: Claim, path: str, scope: Sequence[str] | None) -> bool:
    """Whether ``claim`` covers ``path`` (``scope`` None) or ``path#scope[0]``.

    Path patterns count as :func:`detente.domain.authority.owns` counts them: granted
    ones only (not ``pendingPaths``), minus their carve-outs.
    """
    granted = (p for p in claim.paths if p not in claim.pending_paths)
    if any(carved_matches(p, claim.carved(p), path) for p in granted):
        return True
    for impact in claim.memory_impacts:
        if not matches(impact.path, path):
            continue
        if not impact.sections or (scope is not None and set(impact.sections) & set(scope)):
            return True
    return False


def _named(claim: Claim, path: str, scope: Sequence[str]) -> bool:
    return any(matches(i.path, path) and set(i.sections) & set(scope) for i in claim.memory_impacts)


def owners(state: RepoState, doc: MemoryDocument, key: str) -> list[Claim]:
    """Holding claims naming section ``key`` (or a section containing it), active first."""
    scope = section_scope(doc, key)
    found = [
        state.claims[c]
        for c in sorted(state.claims.memory_holders)
        if c in state.claims and _named(state.claims[c], doc.path, scope)
    ]
    return sorted(found, key=lambda c: (c.status is not ClaimStatus.ACTIVE, c.fencing_token, c.id))


def _holders(state: RepoState, path: str, scope: Sequence[str] | None, me: str) -> list[Claim]:
    """Claims whose authority over ``path`` (``#scope``) refuses ``me`` (the one rule of
    :func:`detente.domain.authority.blocks`: granted targets of holding claims only)."""
    ids = set(state.claims.memory_holders)
    ids.update(cid for cid, _ in state.claims.path_index.matching(path, exclude=me))
    out = []
    for cid in sorted(ids - {me}):
        other = state.claims.get(cid)
        if other is not None and blocks(state, me, other) and covers(other, path, scope):
            out.append(other)
    return out


def check_writer(
    state: RepoState,
    doc: MemoryDocument,
    claim_id: str,
    fencing_token: int,
    keys: Iterable[str | None],
    now: datetime,
) -> Claim:
    """Authorize a write of ``doc`` by ``claim_id`` (see the module docstring).

    Args:
        state: the repository's projection.
        doc: the document written.
        claim_id: the writing claim.
        fencing_token: the token the writer presents.
        keys: the section keys written (None for the whole file).
        now: the server's time.

    Returns:
        The writing claim.

    Raises:
        NotFoundError, LeaseExpired, OverlapBlocking, InvalidTransition,
        StaleFencingToken, ValidationError, ForbiddenError.
    """
    claim = get_claim(state, claim_id)
    check_fencing(state, claim, None)
    check_alive(claim, now)
    check_writer_status(claim, state)
    if fencing_token < claim.fencing_token:
        raise StaleFencingToken(
            f"fencing token {fencing_token} is older than claim {claim.id}'s "
            f"({claim.fencing_token})",
            expected=claim.fencing_token,
            actual=fencing_token,
            presented=fencing_token,
            currentToken=claim.fencing_token,
        )
    if fencing_token != claim.fencing_token:
        raise ValidationError(
            f"fencing token {fencing_token} was never granted to claim {claim.id}",
            field="fencingToken",
        )
    outside: list[str] = []
    blockers: list[dict[str, str]] = []
    for key in keys:
        scope = section_scope(doc, key) if key is not None else None
        target = f"{doc.path}#{key}" if key is not None else doc.path
        if not covers(claim, doc.path, scope):
            outside.append(target)
            continue
        for other in _holders(state, doc.path, scope, claim.id):
            blockers.append({"target": target, "claimId": other.id, "agent": other.agent.name})
    if outside:
        raise ForbiddenError(
            f"claim {claim.id} does not cover {', '.join(outside)}: add a memory impact "
            "(or a path) for it with a new claim",
            claimId=claim.id,
            targets=outside,
        )
    if blockers:
        names = "; ".join(
            f"{b['target']} is held by {b['claimId']} ({b['agent']})" for b in blockers
        )
        raise OverlapBlocking(f"refused: {names}", claimId=claim.id, blockers=blockers)
    for key in keys:
        _check_fence(state, doc, claim, key)
    return claim


def _check_fence(state: RepoState, doc: MemoryDocument, claim: Claim, key: str | None) -> None:
    records = doc.sections if key is None else [s for s in doc.sections if s.key == key]
    for record in records:
        if record.last_writer in (None, claim.id) or claim.fencing_token >= record.fencing_token:
            continue
        writer = state.claims.get(record.last_writer or "")
        if writer is not None and writer.holding:
            raise StaleFencingToken(
                f"section {doc.path}#{record.key} was last written with fencing token "
                f"{record.fencing_token} by claim {writer.id}, which still holds it; "
                f"claim {claim.id}'s token {claim.fencing_token} is older",
                expected=record.fencing_token,
                actual=claim.fencing_token,
                presented=claim.fencing_token,
                currentToken=record.fencing_token,
                holder=writer.id,
            )
