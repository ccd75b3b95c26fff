"""Evidence-gated completion: ``active -> ready_for_review -> integrated -> completed``.

The decisions here are pure; the service reads the git facts before, and performs the
compare-and-swap of the protected ref (``git update-ref <ref> <new> <old>``) between
:func:`decide_ready` and :func:`integrated_events` / :func:`stale_events`, all inside the
repository's serialized command:

1. :func:`check_completion`: the claim exists, presents its fencing token (an older one
   than the claim's: ``stale_fencing_token``; a claim taken over is fenced off), its
   lease is alive, ``expectedClaimRevision`` is current, and its status allows it;
2. :func:`decide_ready`: the evidence passes :func:`~detente.domain.gates.evidence.
   evidence_failures` (else ``evidence_rejected`` listing every failure) and the claim
   moves to ``ready_for_review`` with the evidence recorded;
3. the CAS wins: :func:`integrated_events` (``integrated``; the claim's published patches
   leave the queue; ``completed`` too when no memory or deployment evidence is pending) —
   or it loses: :func:`stale_events` (back to ``active``, evidence marked stale; the caller
   then answers ``stale_base`` with the ref's current OID).

An ``integrated`` claim completes later: :func:`decide_finish` (memory updates presented)
or a deployment to its ``deploymentResponsibility`` environment
(:mod:`detente.domain.gates.deployments`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from detente.domain import events as ev
from detente.domain.claims.guards import check_alive, check_claim_revision, check_fencing, get_claim
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.transitions import require
from detente.domain.gates.evidence import (
    BaseRef,
    Evidence,
    GitFacts,
    evidence_failures,
    evidence_to_wire,
    memory_update_path,
)
from detente.domain.gates.patches import patch_subject
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.errors import EvidenceRejected, InvalidTransition, ValidationError

__all__ = [
    "CompleteClaim",
    "check_completion",
    "completion_events",
    "decide_finish",
    "decide_landed",
    "decide_pushed",
    "decide_ready",
    "integrated_events",
    "pending_completion",
    "stale_events",
]


@dataclass(frozen=True)
class CompleteClaim:
    """``POST /v1/claims/{id}/complete``.

    Attributes:
        claim_id: the claim.
        expected_claim_revision: its revision as the caller read it.
        fencing_token: the token granted to the claim (required).
        expected_base_ref: the ref to advance and its OID as read by the caller (required
            unless the claim is already ``integrated``; never defaulted to the tip).
        evidence: the completion evidence (required unless ``integrated``).
        integrate: False stops at ``ready_for_review`` (the push flow: the server-side hook
            then accepts a push of these commits to the protected ref).
    """

    claim_id: str
    expected_claim_revision: int
    fencing_token: int | None
    expected_base_ref: BaseRef | None
    evidence: Evidence | None
    integrate: bool = True


def check_completion(state: RepoState, cmd: CompleteClaim, now: datetime) -> Claim:
    """The checks every completion starts with (step 1 of the module docstring).

    Returns:
        The claim.

    Raises:
        NotFoundError, StaleFencingToken (taken over, or a token not the claim's),
        LeaseExpired, RevisionConflict, InvalidTransition.
    """
    claim = get_claim(state, cmd.claim_id)
    # expectedClaimRevision already pins the holder: without a token the claim's own
    # is used (a taken-over claim is still fenced off: it has a successor).
    check_fencing(state, claim, cmd.fencing_token)
    check_alive(claim, now)
    check_claim_revision(claim, cmd.expected_claim_revision)
    allowed = (ClaimStatus.ACTIVE, ClaimStatus.READY_FOR_REVIEW, ClaimStatus.INTEGRATED)
    if claim.status not in allowed:
        raise InvalidTransition(
            claim.status.value,
            ClaimStatus.READY_FOR_REVIEW.value,
            f"claim {claim.id} is {claim.status.value}: only an active (or ready_for_review) "
            "claim presents completion evidence",
            claimId=claim.id,
        )
    return claim


def decide_ready(
    state: RepoState, claim: Claim, cmd: CompleteClaim, facts: GitFacts, ids: IdSource
) -> list[ev.Event]:
    """Validate the evidence; ``ready_for_review`` with it recorded.

    Raises:
        ValidationError: ``expectedBaseRef`` or ``evidence`` missing.
        EvidenceRejected: ``evidence_rejected``; ``failures`` lists every reason.
    """
    if cmd.expected_base_ref is None:
        raise ValidationError(
            "expectedBaseRef {ref, oid} is required: name the OID you read the protected ref "
            "at (it is never defaulted to the current tip)",
            field="expectedBaseRef",
        )
    if cmd.evidence is None:
        raise ValidationError("evidence is required", field="evidence")
    failures = evidence_failures(state, claim, cmd.evidence, cmd.expected_base_ref, facts)
    if failures:
        raise EvidenceRejected(failures, claimId=claim.id)
    if claim.status is not ClaimStatus.READY_FOR_REVIEW:
        require(claim.status, ClaimStatus.READY_FOR_REVIEW, claim_id=claim.id)
    evidence = evidence_to_wire(cmd.evidence, cmd.expected_base_ref)
    evidence["headCommit"] = facts.head_oid
    evidence["memoryUpdates"] = [by_revision(state, u) for u in evidence["memoryUpdates"]]
    return [
        ev.claim_event(
            ids,
            claim.id,
            ev.CLAIM_READY_FOR_REVIEW,
            status=ClaimStatus.READY_FOR_REVIEW.value,
            evidence=evidence,
            reason="completion evidence accepted",
        )
    ]


def by_revision(state: RepoState, entry: str) -> str:
    """A ``memoryUpdates`` entry by document revision: ``PATH`` of a registered document
    becomes ``PATH@<its revision now>`` (the claim's writes are in it); others stay."""
    doc = state.memory.get(entry) if memory_update_path(entry) == entry else None
    return f"{entry}@{doc.revision}" if doc is not None else entry


def pending_completion(
    claim: Claim, memory_updates: tuple[str, ...] = (), *, deployed: bool = False
) -> list[str]:
    """What still keeps an ``integrated`` claim from ``completed`` (sentences).

    Memory: every memory file the claim declared must appear in the accepted evidence's
    ``memoryUpdates`` (or in ``memory_updates``), by revision (``PATH@N``) or by path.
    Deployment: a claim with a ``deploymentResponsibility`` completes when it is deployed
    to that environment (``deployed``: the command being decided is that deployment).
    """
    recorded = tuple((claim.evidence or {}).get("memoryUpdates") or ())
    done = {memory_update_path(u) for u in (*recorded, *memory_updates)}
    pending = [
        f"memory update of {m.path} not recorded (list it in evidence.memoryUpdates)"
        for m in claim.memory_impacts
        if m.path not in done
    ]
    if claim.declared.deployment_responsibility and not deployed:
        pending.append(
            f"deployment to {claim.declared.deployment_responsibility} not recorded "
            f"(POST /v1/deployments/{claim.declared.deployment_responsibility})"
        )
    return pending


def completion_events(
    claim: Claim,
    ids: IdSource,
    *,
    via: str,
    memory_updates: tuple[str, ...] = (),
    deployed: bool = False,
) -> list[ev.Event]:
    """``claim.completed`` when nothing is pending, else nothing."""
    if pending_completion(claim, memory_updates, deployed=deployed):
        return []
    data: dict[str, Any] = {"status": ClaimStatus.COMPLETED.value, "reason": via}
    if memory_updates:
        recorded = list((claim.evidence or {}).get("memoryUpdates") or ())
        known = {memory_update_path(u) for u in recorded}
        data["evidence"] = {
            "memoryUpdates": sorted(
                set(recorded) | {u for u in memory_updates if memory_update_path(u) not in known}
            )
        }
    return [ev.claim_event(ids, claim.id, ev.CLAIM_COMPLETED, **data)]


def integrated_events(
    state: RepoState,
    claim: Claim,
    base_ref: BaseRef,
    new_oid: str,
    ids: IdSource,
    *,
    recovered: bool = False,
    memory_updates: tuple[str, ...] = (),
) -> list[ev.Event]:
    """The CAS won: ``integrated`` (and ``completed`` when nothing is pending).

    Args:
        state: the projection (for the claim's published patches).
        claim: the claim as it was before this command (``active`` or ``ready_for_review``).
        base_ref: the ref and the OID it moved from.
        new_oid: the head commit it points to now.
        ids: event id source.
        recovered: the ref already pointed at ``new_oid`` (a retried command).
        memory_updates: memory files the accepted evidence lists as updated.
    """
    out = [
        ev.claim_event(
            ids,
            claim.id,
            ev.CLAIM_INTEGRATED,
            status=ClaimStatus.INTEGRATED.value,
            ref=base_ref.ref,
            oldOid=base_ref.oid,
            newOid=new_oid,
            fencingToken=claim.fencing_token,
            recovered=recovered,
            reason=f"{base_ref.ref} advanced to {new_oid[:12]} by compare-and-swap",
        )
    ]
    for patch in sorted(state.gates.patches.values(), key=lambda p: p.id):
        if patch.claim_id == claim.id and patch.status == "published":
            out.append(
                ev.stream_event(
                    ids,
                    patch_subject(patch.id),
                    ev.PATCH_INTEGRATED,
                    patchId=patch.id,
                    claimId=claim.id,
                    reason="claim integrated",
                )
            )
    done = completion_events(
        claim,
        ids,
        via="integrated; nothing else pending",
        memory_updates=tuple(by_revision(state, u) for u in memory_updates),
    )
    return out + done


def stale_events(
    claim: Claim, base_ref: BaseRef, actual: str | None, ids: IdSource
) -> list[ev.Event]:
    """The CAS lost: back to ``active``; the accepted evidence is stale for the new base."""
    return [
        ev.claim_event(
            ids,
            claim.id,
            ev.CLAIM_INTEGRATION_STALE,
            status=ClaimStatus.ACTIVE.value,
            ref=base_ref.ref,
            expectedOid=base_ref.oid,
            actualOid=actual,
            reason=(
                f"stale base: {base_ref.ref} is at {actual[:12] if actual else 'nothing'}, "
                f"not {base_ref.oid[:12]}; rebase and re-collect the evidence"
            ),
        )
    ]


def decide_finish(claim: Claim, cmd: CompleteClaim, ids: IdSource) -> list[ev.Event]:
    """Complete an ``integrated`` claim whose pending evidence is now presented.

    Raises:
        EvidenceRejected: something is still pending (each item listed).
    """
    updates = cmd.evidence.memory_updates if cmd.evidence is not None else ()
    pending = pending_completion(claim, updates)
    if pending:
        raise EvidenceRejected(pending, claimId=claim.id)
    return completion_events(claim, ids, via="pending evidence presented", memory_updates=updates)


def decide_pushed(
    state: RepoState, ref: str, old: str, new: str, claim_ids: list[str], ids: IdSource
) -> list[ev.Event]:
    """A push the ``pre-receive`` check accepted has landed (reported by ``post-receive``):
    each named ``ready_for_review`` claim is ``integrated`` (and ``completed`` when nothing
    is pending); claims in any other status are left alone.
    """
    out: list[ev.Event] = []
    for claim_id in dict.fromkeys(claim_ids):
        claim = state.claims.get(claim_id)
        if claim is None or claim.status is not ClaimStatus.READY_FOR_REVIEW:
            continue
        out += integrated_events(state, claim, BaseRef(ref, old), new, ids)
    return out


def decide_landed(
    state: RepoState, ref: str, landings: Mapping[str, tuple[str, str]], ids: IdSource
) -> list[ev.Event]:
    """Landings the log lost, found on ``ref``: the compare-and-swap moved the ref, then
    the process died (or the store failed) before the command's events were stored.

    Args:
        state: the projection.
        ref: the protected ref the commits are on.
        landings: ``claim id -> (commit, its first parent)``: the commits on ``ref`` that
            name the claim in a ``Detente-Claim`` trailer (the newest one per claim).
        ids: event id source.

    Returns:
        For each named claim still ``active`` or ``ready_for_review``: ``integrated``
        (``recovered: true``; ``completed`` too when nothing is pending), after a
        ``ready_for_review`` whose evidence is the landed commit alone when the accepted
        evidence was lost with the landing. Claims in any other status are left alone
        (``audit verify`` still names them).
    """
    out: list[ev.Event] = []
    for claim_id, (commit, parent) in sorted(landings.items()):
        claim = state.claims.get(claim_id)
        if claim is None or claim.status not in (ClaimStatus.ACTIVE, ClaimStatus.READY_FOR_REVIEW):
            continue
        if claim.status is ClaimStatus.ACTIVE:
            out.append(
                ev.claim_event(
                    ids,
                    claim.id,
                    ev.CLAIM_READY_FOR_REVIEW,
                    status=ClaimStatus.READY_FOR_REVIEW.value,
                    evidence=evidence_to_wire(Evidence(head_commit=commit)),
                    reason=(
                        f"landed on {ref} as {commit[:12]}, which the log had lost: the "
                        "evidence accepted then was not stored"
                    ),
                )
            )
        out += integrated_events(state, claim, BaseRef(ref, parent), commit, ids, recovered=True)
    return out
