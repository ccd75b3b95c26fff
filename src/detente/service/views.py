"""The claim view every claim use case answers with, and the command path that ends in one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from detente.domain.checks.model import ClaimChecks, checks_to_wire
from detente.domain.claims.model import Claim
from detente.domain.claims.record import claim_to_wire
from detente.domain.events import Event
from detente.domain.meetings.model import Meeting, meeting_to_wire
from detente.domain.overlap.model import Overlap, overlap_to_wire
from detente.domain.overlap.remembered import claim_overlaps
from detente.domain.state import RepoState
from detente.service.core import ServiceCore


@dataclass(frozen=True)
class ClaimView:
    """A claim with its live overlap report and its meetings."""

    claim: Claim
    overlaps: list[Overlap]
    meetings: list[Meeting] = field(default_factory=list)
    work: dict[str, Any] | None = None
    semantic: list[Overlap] = field(default_factory=list)
    #: Its newest merge check and drift (:mod:`detente.domain.checks`); None: never checked.
    checks: ClaimChecks | None = None
    receipts: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """``{claim, overlaps[], meeting, meetings[], work, semanticOverlaps[], receipts}``
        (``meeting``: the newest open one; ``semanticOverlaps``: advisory ``kind: semantic``
        entries beside the symbolic ``overlaps``, see :mod:`detente.service.search`;
        ``receipts``: ``{sessionId, deliveredUpTo, seenUpTo}`` of the claim's registered
        agent session, how far its notices went, else None), and ``checks`` once the
        claim's work was checked (:mod:`detente.domain.checks`)."""
        open_meetings = [m for m in self.meetings if m.status.value == "open"]
        checks = {} if self.checks is None else {"checks": checks_to_wire(self.checks)}
        # Each room once (the newest open one is also in ``meetings``): a crowded room's
        # record is long, and read-only once built.
        wires = [meeting_to_wire(m) for m in self.meetings]
        newest = open_meetings[-1] if open_meetings else None
        return {
            "receipts": self.receipts,
            "claim": claim_to_wire(self.claim),
            "overlaps": [overlap_to_wire(o) for o in self.overlaps],
            "meeting": next(
                (w for m, w in zip(self.meetings, wires, strict=True) if m is newest), None
            ),
            "meetings": wires,
            "work": self.work,
            "semanticOverlaps": [overlap_to_wire(o) for o in self.semantic],
            **checks,
        }


def claim_view(state: RepoState, claim: Claim) -> ClaimView:
    """``claim`` with its overlaps recomputed on ``state`` and every room it sits in.

    Call it holding the repository's lock (:meth:`ServiceCore.lock`).
    """
    overlaps = claim_overlaps(state, claim) if claim.holding else []
    # The holder a newcomer contests is a participant too, though its own record never
    # changed: show it every room it sits in.
    meetings = [state.meetings[m] for m in state.meetings.rooms_of_claim.get(claim.id, ())]
    session = state.agents.get(claim.agent.session_id) if claim.agent.session_id else None
    receipts = (
        {
            "sessionId": session.session_id,
            "deliveredUpTo": session.delivered_up_to,
            "seenUpTo": session.seen_up_to,
        }
        if session is not None
        else None
    )
    return ClaimView(
        claim=claim,
        overlaps=overlaps,
        meetings=meetings,
        checks=state.checks.get(claim.id),
        receipts=receipts,
    )


def claim_command(
    core: ServiceCore, claim_id: str, decide_fn: Callable[[RepoState], list[Event]]
) -> ClaimView:
    """Run ``decide_fn`` in the repository of ``claim_id``; answer the claim's view after it.

    Raises:
        NotFoundError: no such claim; else what ``decide_fn`` raises.
    """
    repo = core.repo_of_claim(claim_id)
    # The view is built inside the command's batch (group commit), right after it.
    return core.run(repo, decide_fn, lambda state, _: claim_view(state, state.claims[claim_id]))
