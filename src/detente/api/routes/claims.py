"""Claim routes (API.md "Claims"): FastAPI parses, :class:`ServiceCalls` answers.

Every claim operation is declared by its route (:mod:`detente.api.routes.operations`) but
the listing, whose filters and page arrive as one query model.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from detente.api.claim_listing import claim_list_response
from detente.api.routes.operations import declare
from detente.client import routes as op
from detente.client import wire
from detente.client.bodies import ClaimsQueryIn
from detente.client.calls import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()
    declare(r, calls, op.OPEN_CLAIM, op.TAKEOVER, op.APPROVE_TAKEOVER)

    @r.get(op.LIST_CLAIMS.path, operation_id=op.LIST_CLAIMS.name, response_model=wire.ClaimList)
    def list_claims(query: Annotated[ClaimsQueryIn, Query()]) -> Response:
        """Claims in ``(createdAt, id)`` order; ``limit`` (1..1000) and ``cursor`` (the
        previous page's ``nextCursor``) page through them."""
        return claim_list_response(*calls.claim_page(**query.to_query()))

    declare(
        r,
        calls,
        op.GET_CLAIM,
        op.ANNOUNCE,
        op.RENEW,
        op.SCOPE_CHANGE,
        op.CHANGE_OBJECTIVE,
        op.SUSPEND,
        op.RESUME,
        op.ABANDON,
        op.COMPLETE,
        op.CLEANUP,
        op.CHECK_WRITES,
    )
    return r
