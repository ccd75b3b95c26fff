"""Index routes: symbols a claim's work touches, reconcile two intents, search."""

from __future__ import annotations

from fastapi import APIRouter

from detente.api.routes.operations import declare
from detente.client import routes as op
from detente.client.calls import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()
    declare(
        r,
        calls,
        op.CLAIM_SYMBOLS,
        op.RECONCILE_INTENTS,
        op.SEARCH,
    )
    return r
