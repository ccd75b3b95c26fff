"""Takeover: a successor picks up an expired or abandoned claim's work, responsibly.

Rules (issue "Expiry, abandonment and takeover"):

- only a predecessor that is ``expired`` (and past ``Policy.takeover_grace_seconds`` after
  its lease deadline) or ``abandoned`` (an explicit release needs no grace) can be taken
  over; while it still heartbeats the takeover is ``invalid_transition``;
- the request names ``expectedClaimRevision`` of the predecessor and, for each of its
  path targets, a decision: ``continue`` (the successor keeps working on it),
  ``supersede`` (the successor takes it and will redo it) or ``discard`` (released);
  targets not listed continue;
- the successor's record references the predecessor's last known branch head, rescue
  ref, worktree state, memory impacts and fencing token; the successor gets a new,
  higher fencing token, so the predecessor's late writes are ``stale_fencing_token``;
- the predecessor becomes ``taken_over`` with ``successorId`` (its history is kept);
- a predecessor that touched contracts, migrations or memory makes the takeover wait
  (successor ``blocked``) until a human, or ``Policy.takeover_quorum`` CODEOWNERS owners,
  approve; each approval is an event.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.claims.commands import OpenClaim, TakeoverRequest
from detente.domain.claims.guards import check_alive, check_claim_revision, get_claim
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.opening import activate_or_negotiate, announce
from detente.domain.claims.transitions import require
from detente.domain.claims.wire import agent_to_wire, memory_impact_to_wire
from detente.domain.overlap.analysis import Targets
from detente.domain.overlap.globs import matches
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.policy import IdSource, Policy
from detente.domain.state import RepoState
from detente.domain.validation import text_field
from detente.errors import ForbiddenError, InvalidTransition, ValidationError

DECISIONS = ("continue", "supersede", "discard")
APPROVER_KINDS = ("human", "owner")


@dataclass(frozen=True)
class PredecessorFacts:
    """What the service found in git about the predecessor before deciding.

    Attributes:
        head_commit: its branch head now (None when unknown).
        rescue: ``{ref, oid, paths}`` when its uncommitted changes were saved.
        worktree: ``{path, exists, pruned}``.
        changed_files: files it changed (committed since base plus dirty).
        owners: CODEOWNERS owners of its targets (candidate approvers).
    """

    head_commit: str | None = None
    rescue: dict[str, Any] | None = None
    worktree: dict[str, Any] | None = None
    changed_files: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()


def check_takeover_allowed(
    state: RepoState, req: TakeoverRequest, now: datetime, policy: Policy
) -> Claim:
    """The predecessor, if it may be taken over now.

    Raises:
        NotFoundError, RevisionConflict, InvalidTransition (still live, already taken over,
        or inside the grace period).
    """
    pred = get_claim(state, req.claim_id)
    check_claim_revision(pred, req.expected_claim_revision)
    if pred.status not in (ClaimStatus.EXPIRED, ClaimStatus.ABANDONED):
        detail = f"claim {pred.id} is {pred.status.value}: "
        if pred.leased:
            detail += (
                f"its holder still heartbeats (lease until {format_time(pred.lease.expires_at)}); "
                "a takeover needs it expired or abandoned"
            )
        else:
            detail += "only an expired or abandoned claim can be taken over"
        raise InvalidTransition(pred.status.value, ClaimStatus.TAKEN_OVER.value, detail)
    if pred.status is ClaimStatus.EXPIRED:
        ready_at = pred.lease.expires_at + timedelta(seconds=policy.takeover_grace_seconds)
        if now < ready_at:
            raise InvalidTransition(
                pred.status.value,
                ClaimStatus.TAKEN_OVER.value,
                f"claim {pred.id} expired at {format_time(pred.lease.expires_at)}; its grace "
                f"period ends at {format_time(ready_at)}: take it over after that",
                readyAt=format_time(ready_at),
            )
    return pred


def _pieces(state: RepoState, pred: Claim, req: TakeoverRequest) -> dict[str, str]:
    decisions = {p: "continue" for p in pred.paths + pred.pending_paths}
    for i, (target, decision) in enumerate(req.pieces):
        fld = f"takeoverOf.pieces[{i}]"
        norm = normalize_pattern(
            target, case_insensitive=state.case_insensitive, field=f"{fld}.target"
        )
        if norm not in decisions:
            raise ValidationError(
                f"{fld}.target {target!r} is not one of claim {pred.id}'s targets "
                f"({', '.join(decisions) or 'none'})",
                field=f"{fld}.target",
            )
        if decision not in DECISIONS:
            raise ValidationError(
                f"{fld}.decision must be one of {', '.join(DECISIONS)}", field=f"{fld}.decision"
            )
        decisions[norm] = decision
    return decisions


def gate_reasons(pred: Claim, facts: PredecessorFacts, policy: Policy) -> list[str]:
    """Why this takeover needs approval (empty: it does not)."""
    reasons: list[str] = []
    gates = policy.approval_gates
    if "contracts" in gates and pred.expected_contract_changes:
        reasons.append("contract changes: " + ", ".join(pred.contract_areas))
    if "memory" in gates and pred.memory_impacts:
        reasons.append("memory impacts: " + ", ".join(m.path for m in pred.memory_impacts))
    files = list(facts.changed_files)
    if pred.abandonment is not None:
        files += [str(f) for f in pred.abandonment.diff_summary.get("files", []) or []]  # type: ignore[attr-defined]
    migrations = sorted({f for f in files for p in policy.migration_patterns if matches(p, f)})
    if "migrations" in gates and migrations:
        reasons.append("migrations: " + ", ".join(migrations))
    return reasons


def decide_takeover(
    state: RepoState,
    seed: OpenClaim,
    req: TakeoverRequest,
    facts: PredecessorFacts,
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> list[ev.Event]:
    """Announce the successor and take the predecessor over (or wait for approval).

    Raises:
        NotFoundError, RevisionConflict, InvalidTransition, ValidationError.
    """
    pred = check_takeover_allowed(state, req, now, policy)
    decisions = _pieces(state, pred, req)
    taken = [t for t, d in decisions.items() if d != "discard"]
    paths = tuple(dict.fromkeys([*seed.paths, *taken]))
    gate = gate_reasons(pred, facts, policy)
    info: dict[str, Any] = {
        "claimId": pred.id,
        "previousOwner": agent_to_wire(pred.agent),
        "objective": pred.objective,
        "branch": pred.branch,
        "worktree": pred.worktree,
        "headCommit": facts.head_commit
        or (pred.abandonment.head_commit if pred.abandonment else None),
        "baseCommit": pred.base_commit,
        "memoryImpacts": [memory_impact_to_wire(m) for m in pred.memory_impacts],
        "fencingToken": pred.fencing_token,
        "pieces": [{"target": t, "decision": d} for t, d in decisions.items()],
        "rescue": facts.rescue,
        "worktreeState": facts.worktree,
        "pending": bool(gate),
        "gateReasons": gate,
        "owners": list(facts.owners),
        "quorum": policy.takeover_quorum,
        "approvals": [],
    }
    # The successor keeps what a split cut out of the patterns it continues (issue #12).
    carved = {p: list(cuts) for p, cuts in pred.carve_outs if p in taken and cuts}
    extra: dict[str, Any] = {"takeoverOf": info}
    if carved:
        extra["carveOuts"] = carved
    claim_id, announced, targets = announce(
        state, replace(seed, paths=paths), now, ids, policy, extra=extra
    )
    targets = replace(targets, carve_outs=tuple((p, tuple(c)) for p, c in sorted(carved.items())))
    if gate:
        blocked = ev.status_event(
            ids,
            claim_id,
            ev.CLAIM_BLOCKED,
            to=ClaimStatus.BLOCKED.value,
            was=ClaimStatus.ANNOUNCED.value,
            reason=f"takeover of {pred.id} awaits approval ({'; '.join(gate)})",
        )
        return [announced, blocked]
    return [announced, *_finish(state, pred, claim_id, targets, info, now, ids, policy)]


def _finish(
    state: RepoState,
    pred: Claim,
    successor_id: str,
    targets: Targets,
    info: dict[str, Any],
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> list[ev.Event]:
    require(pred.status, ClaimStatus.TAKEN_OVER, claim_id=pred.id)
    taken_over = ev.status_event(
        ids,
        pred.id,
        ev.CLAIM_TAKEN_OVER,
        to=ClaimStatus.TAKEN_OVER.value,
        was=pred.status.value,
        reason=f"taken over by {successor_id}",
        successorId=successor_id,
        pieces=info["pieces"],
        rescue=info["rescue"],
    )
    return [
        taken_over,
        *activate_or_negotiate(
            state, successor_id, targets, now, ids, policy, ignore=frozenset({pred.id})
        ),
    ]


def decide_approve(
    state: RepoState,
    successor_id: str,
    expected_claim_revision: int,
    approver: str,
    kind: str,
    now: datetime,
    ids: IdSource,
    policy: Policy,
) -> list[ev.Event]:
    """Record one approval of a pending takeover; the deciding one completes it.

    A ``human`` approval suffices; ``owner`` approvals must come from the CODEOWNERS
    owners recorded on the takeover and count towards ``quorum``.

    Raises:
        NotFoundError, RevisionConflict, LeaseExpired, InvalidTransition (nothing pending,
        or the predecessor changed), ForbiddenError (not an owner), ValidationError.
    """
    succ = get_claim(state, successor_id)
    check_alive(succ, now)
    check_claim_revision(succ, expected_claim_revision)
    info: dict[str, Any] = dict(succ.takeover or {})
    if not info.get("pending"):
        raise InvalidTransition(
            succ.status.value, "active", f"claim {succ.id} has no takeover awaiting approval"
        )
    who = text_field(approver, "approver", policy, identifier=True)
    if kind not in APPROVER_KINDS:
        raise ValidationError(f"kind must be one of {', '.join(APPROVER_KINDS)}", field="kind")
    owners = [str(o) for o in info.get("owners", [])]
    if kind == "owner" and who not in owners:
        raise ForbiddenError(
            f"{who} is not a CODEOWNERS owner of claim {info['claimId']}'s targets "
            f"({', '.join(owners) or 'no owners: a human must approve'})",
            claimId=succ.id,
        )
    approvals = [dict(a) for a in info.get("approvals", [])]
    if any(a["approver"] == who for a in approvals):
        raise ValidationError(f"{who} already approved this takeover", field="approver")
    approvals.append({"approver": who, "kind": kind, "at": format_time(now)})
    owner_votes = sum(1 for a in approvals if a["kind"] == "owner")
    done = kind == "human" or owner_votes >= int(info.get("quorum", policy.takeover_quorum))
    info.update(approvals=approvals, pending=not done)
    out = [
        ev.claim_event(
            ids, succ.id, ev.CLAIM_TAKEOVER_APPROVED, approver=who, kind=kind, takeoverOf=info
        )
    ]
    if done:
        pred = get_claim(state, str(info["claimId"]))
        if pred.status not in (ClaimStatus.EXPIRED, ClaimStatus.ABANDONED):
            raise InvalidTransition(
                pred.status.value,
                ClaimStatus.TAKEN_OVER.value,
                f"claim {pred.id} is {pred.status.value} now: this takeover can no longer happen",
            )
        out += _finish(state, pred, succ.id, Targets.of(succ), info, now, ids, policy)
    return out
