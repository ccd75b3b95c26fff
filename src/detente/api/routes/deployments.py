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

from fastapi import APIRouter

from detente.client import routes as op
from detente.client import wire
from detente.client.calls import ServiceCalls
from detente.client.gate_bodies import DeployIn, PolicyIn


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.post(op.DEPLOY.path, operation_id=op.DEPLOY.name)
    def deploy(env: str, body: DeployIn) -> wire.DeploymentView:
        return calls.deploy(env, body)

    @r.get(op.GET_DEPLOYMENT.path, operation_id=op.GET_DEPLOYMENT.name)
    def get_deployment(env: str, repo: str | None = None) -> wire.DeploymentView:
        return calls.get_deployment(env, repo)

    @r.put(op.SET_DEPLOY_POLICY.path, operation_id=op.SET_DEPLOY_POLICY.name)
    def set_policy(env: str, body: PolicyIn) -> wire.DeploymentView:
        return calls.set_deploy_policy(env, body)

    return r
