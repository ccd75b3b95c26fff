"""What a claim listing asks for: :class:`ClaimFilters`, spelled once for every layer.

The service (``ClaimsService.list_claims``), the in-process and HTTP clients and the
``GET /v1/claims`` route all take these keywords (the clients add the page keywords of
:class:`detente.operations.claim_pages.ClaimQuery`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # the filters are a client's too, which needs no claim model
    from detente.domain.claims.model import Claim

__all__ = ["ClaimFilters", "selects"]


class ClaimFilters(TypedDict, total=False):
    """The filters of a claim listing; a missing key or None matches every claim.

    Keys:
        repo: the repository's name.
        status: a :class:`~detente.domain.claims.model.ClaimStatus` value.
        path: a path (or pattern) the claim must cover.
        agent: the agent's id or name.
        session: the agent session's id.
    """

    repo: str | None
    status: str | None
    path: str | None
    agent: str | None
    session: str | None


def selects(claim: Claim, filters: ClaimFilters) -> bool:
    """Whether ``claim`` passes the ``status``, ``agent`` and ``session`` filters.

    ``repo`` and ``path`` need the repository (its state and case rule): the service
    applies them.
    """
    status, agent = filters.get("status"), filters.get("agent")
    session = filters.get("session")
    return (
        (status is None or claim.status.value == status)
        and (agent is None or agent in (claim.agent.id, claim.agent.name))
        and (session is None or claim.agent.session_id == session)
    )
