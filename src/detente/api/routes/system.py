"""Repositories, audit and health."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from detente.client import routes as op
from detente.client.inprocess import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.get(op.REPOS.path)
    def list_repos() -> dict[str, Any]:
        return calls.repos()

    @r.get(op.AUDIT_VERIFY.path)
    def audit_verify() -> dict[str, Any]:
        return calls.audit_verify()

    @r.get(op.HEALTH.path)
    def healthz() -> dict[str, Any]:
        return calls.health()

    return r
