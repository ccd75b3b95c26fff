"""Repositories, audit and health."""

from __future__ import annotations

import contextlib
from typing import Any

from fastapi import APIRouter

from detente import __version__
from detente.errors import DetenteError
from detente.service import Service
from detente.vcs.repo import current_oid


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.get("/v1/repos")
    def list_repos() -> dict[str, Any]:
        repos = []
        for r in service.list_repos():
            head = None
            if r.path is not None:
                with contextlib.suppress(DetenteError):
                    head = current_oid(r.path, "HEAD")
            repos.append(
                {
                    "name": r.name,
                    "path": str(r.path) if r.path else None,
                    "defaultBranch": r.default_branch,
                    "caseInsensitive": r.case_insensitive,
                    "headOid": head,
                }
            )
        return {"repos": repos}

    @r.get("/v1/audit/verify")
    def audit_verify() -> dict[str, Any]:
        return service.audit().to_wire()

    @r.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "version": __version__, "head": service.head()}

    return r
