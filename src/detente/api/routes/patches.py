"""Patch queue routes (API.md "Deployments and patches").

- ``POST /v1/patches`` ``{claimId, baseCommit, format: mbox, mbox}``: ``201 {patch {id,
  sha256, files[], ...}}``; the same content again returns the same patch.
- ``GET /v1/patches?repo=&status=``: ``{patches[]}`` (the queue: ``published`` unless
  ``status`` is ``integrated``, ``discarded`` or ``all``), without the mbox.
- ``GET /v1/patches/{id}``: ``{patch}`` with ``mbox``.
- ``POST /v1/patches/{id}/discard`` ``{expectedRevision, reason}``: ``{patch}``.
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
        op.PUBLISH_PATCH,
        op.LIST_PATCHES,
        op.GET_PATCH,
        op.DISCARD_PATCH,
    )
    return r
