"""Meeting routes (API.md "Meetings"): list, read, propose, accept, resolve, hand off."""

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
        op.LIST_MEETINGS,
        op.GET_MEETING,
        op.PROPOSE,
        op.ACCEPT_PROPOSAL,
        op.RESOLVE_MEETING,
        op.ACCEPT_HANDOFF,
    )
    return r
