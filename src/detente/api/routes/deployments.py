"""Deployment routes (API.md "Deployments and patches").

- ``POST /v1/deployments/{env}`` ``{repo?, claimId, commitOid, expectedPrevCommitOid,
  migrations[{id, status}], unresolvedRisks[]}``: ``200 {deployment, history[],
  environment, policy}``; ``409 stale_base`` (``actual`` = the environment's commit,
  nothing recorded); ``409 evidence_rejected`` (policy failures listed).
  ``expectedPrevCommitOid`` is required (``null`` before the first deployment).
- ``GET /v1/deployments/{env}?repo=``: ``200 {deployment, history[], environment, policy}``.
- ``PUT /v1/deployments/{env}/policy`` ``{repo?, expectedRevision, maxUnresolvedRisks,
  requireMigrationsApplied, requireIntegrated}``: the same shape; ``409
  revision_conflict`` when the environment moved.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from detente.api.schemas import Body
from detente.domain.gates.deployments import Deploy, DeployPolicy, Migration, SetPolicy
from detente.service import Service


class MigrationIn(Body):
    id: str = Field(min_length=1, max_length=500)
    status: str = Field(min_length=1, max_length=100)


class DeployIn(Body):
    repo: str | None = None
    claim_id: str = Field(min_length=1)
    commit_oid: str = Field(min_length=4, max_length=64)
    expected_prev_commit_oid: str | None = Field(max_length=64)
    migrations: list[MigrationIn] = []
    unresolved_risks: list[str] = []


class PolicyIn(Body):
    repo: str | None = None
    expected_revision: int = Field(strict=True)
    max_unresolved_risks: int | None = Field(default=None, strict=True)
    require_migrations_applied: bool = True
    require_integrated: bool = False


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.post("/v1/deployments/{env}")
    def deploy(env: str, body: DeployIn) -> dict[str, Any]:
        cmd = Deploy(
            repo=body.repo or "",
            environment=env,
            claim_id=body.claim_id,
            commit_oid=body.commit_oid,
            expected_prev_commit_oid=body.expected_prev_commit_oid,
            migrations=tuple(Migration(m.id, m.status) for m in body.migrations),
            unresolved_risks=tuple(body.unresolved_risks),
        )
        return service.deploy(cmd).to_wire()

    @r.get("/v1/deployments/{env}")
    def get_deployment(env: str, repo: str | None = None) -> dict[str, Any]:
        return service.get_deployment(env, repo).to_wire()

    @r.put("/v1/deployments/{env}/policy")
    def set_policy(env: str, body: PolicyIn) -> dict[str, Any]:
        policy = DeployPolicy(
            max_unresolved_risks=body.max_unresolved_risks,
            require_migrations_applied=body.require_migrations_applied,
            require_integrated=body.require_integrated,
        )
        cmd = SetPolicy(body.repo or "", env, policy, body.expected_revision)
        return service.set_deploy_policy(cmd).to_wire()

    return r
