"""Changing a claim's objective (command in, events out).

The objective is what a claim says it is for: it names no target, so changing it never
blocks and never opens a meeting; only the advisory semantic record changes, and that is
computed by the service (outside the repository's transaction) and stored on the event.
"""

from __future__ import annotations

from datetime import datetime

from detente.domain import events as ev
from detente.domain.claims.commands import ChangeObjective
from detente.domain.claims.guards import check_alive, check_claim_revision, get_claim
from detente.domain.claims.model import DECLARABLE_STATUSES
from detente.domain.policy import DEFAULT_POLICY, IdSource, Policy
from detente.domain.state import RepoState
from detente.domain.validation import text_field
from detente.errors import InvalidTransition, ValidationError

__all__ = ["decide_objective_change"]


def decide_objective_change(
    state: RepoState,
    cmd: ChangeObjective,
    now: datetime,
    ids: IdSource,
    policy: Policy = DEFAULT_POLICY,
) -> list[ev.Event]:
    """Record a claim's new objective: one ``claim.objective_changed`` event with
    ``{claimId, objective, previousObjective, reason}``.

    Raises:
        NotFoundError: ``not_found``.
        LeaseExpired: ``lease_expired``.
        RevisionConflict: ``revision_conflict`` (with the current record).
        InvalidTransition: ``invalid_transition`` when the claim no longer holds
            (completed, abandoned, taken over, a draft).
        ValidationError: ``validation_error`` (``field: objective``) for a blank, too long
            or unchanged objective.
    """
    claim = get_claim(state, cmd.claim_id)
    check_alive(claim, now)
    check_claim_revision(claim, cmd.expected_claim_revision)
    if claim.status not in DECLARABLE_STATUSES:
        raise InvalidTransition(
            claim.status.value,
            claim.status.value,
            f"the objective of claim {claim.id} cannot change while it is {claim.status.value}",
        )
    objective = text_field(cmd.objective, "objective", policy)
    if objective == claim.objective:
        raise ValidationError("the objective is unchanged", field="objective")
    reason = text_field(cmd.reason or "", "reason", policy, required=False) or None
    return [
        ev.claim_event(
            ids,
            claim.id,
            ev.CLAIM_OBJECTIVE_CHANGED,
            objective=objective,
            previousObjective=claim.objective,
            reason=reason,
        )
    ]
