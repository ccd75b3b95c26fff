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

from detente.api.routes.operations import declare
from detente.client import routes as op
from detente.client.calls import ServiceCalls


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()
    declare(
        r,
        calls,
        op.DEPLOY,
        op.GET_DEPLOYMENT,
        op.SET_DEPLOY_POLICY,
    )
    return r
