"""Agent registry and readiness routes (API.md "Agents and readiness").

``repo`` is optional in the bodies: it defaults to the repository the session is
registered in, else to the only repository served (``validation_error`` otherwise).
"""

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
        op.REGISTER_AGENT,
        op.LIST_AGENTS,
        op.GET_AGENT,
        op.SESSION_CLAIMS,
        op.READINESS,
    )
    return r
