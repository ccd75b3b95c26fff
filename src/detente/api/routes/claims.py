"""The claim listing's route (API.md "Claims"): its filters and page arrive as one query
model, and the page is written a chunk at a time (:mod:`detente.api.claim_listing`).
Every other claim operation's route is derived from its declaration
(:mod:`detente.api.routes.operations`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from detente.api.claim_listing import claim_list_response
from detente.operations import claims as op
from detente.operations import wire
from detente.operations.bodies import ClaimsQueryIn
from detente.operations.door import Operations


def list_claims_route(r: APIRouter, operations: Operations) -> None:
    """``GET /v1/claims``."""

    @r.get(op.LIST_CLAIMS.path, operation_id=op.LIST_CLAIMS.name, response_model=wire.ClaimList)
    def list_claims(query: Annotated[ClaimsQueryIn, Query()]) -> Response:
        """Claims in ``(createdAt, id)`` order; ``limit`` (1..1000) and ``cursor`` (the
        previous page's ``nextCursor``) page through them."""
        page = operations.run(op.LIST_CLAIMS, op.claim_page, **query.to_query())
        return claim_list_response(*page)
