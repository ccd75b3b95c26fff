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

from detente.client import routes as op
from detente.client import wire
from detente.client.calls import ServiceCalls
from detente.client.gate_bodies import DiscardIn, PatchIn


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.post(op.PUBLISH_PATCH.path, operation_id=op.PUBLISH_PATCH.name, status_code=201)
    def publish(body: PatchIn) -> wire.PatchOut:
        return calls.publish_patch(body)

    @r.get(op.LIST_PATCHES.path, operation_id=op.LIST_PATCHES.name)
    def list_patches(repo: str | None = None, status: str | None = None) -> wire.PatchList:
        return calls.list_patches(repo=repo, status=status)

    @r.get(op.GET_PATCH.path, operation_id=op.GET_PATCH.name)
    def get_patch(patch_id: str) -> wire.PatchOut:
        return calls.get_patch(patch_id)

    @r.post(op.DISCARD_PATCH.path, operation_id=op.DISCARD_PATCH.name)
    def discard(patch_id: str, body: DiscardIn) -> wire.PatchOut:
        return calls.discard_patch(patch_id, body)

    return r
