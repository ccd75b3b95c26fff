"""Patch queue routes (API.md "Deployments and patches").

- ``POST /v1/patches`` ``{claimId, baseCommit, format: mbox, mbox}``: ``201 {patch {id,
  sha256, files[], ...}}``; the same content again returns the same patch.
- ``GET /v1/patches?repo=&status=``: ``{patches[]}`` (the queue: ``published`` unless
  ``status`` is ``integrated``, ``discarded`` or ``all``), without the mbox.
- ``GET /v1/patches/{id}``: ``{patch}`` with ``mbox``.
- ``POST /v1/patches/{id}/discard`` ``{expectedRevision, reason}``: ``{patch}``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from detente.api.schemas import Body
from detente.domain.gates.model import patch_to_wire
from detente.domain.gates.patches import DiscardPatch, PublishPatch
from detente.service import Service


class PatchIn(Body):
    claim_id: str = Field(min_length=1)
    base_commit: str = Field(min_length=4, max_length=64)
    format: str = "mbox"
    mbox: str = Field(min_length=1)


class DiscardIn(Body):
    expected_revision: int = Field(strict=True)
    reason: str | None = Field(default=None, max_length=4000)


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.post("/v1/patches", status_code=201)
    def publish(body: PatchIn) -> dict[str, Any]:
        cmd = PublishPatch(body.claim_id, body.base_commit, body.mbox, body.format)
        patch, created = service.publish_patch(cmd)
        return {"patch": patch_to_wire(patch), "created": created}

    @r.get("/v1/patches")
    def list_patches(repo: str | None = None, status: str | None = None) -> dict[str, Any]:
        patches = service.list_patches(repo=repo, status=status)
        return {"patches": [patch_to_wire(p) for p in patches]}

    @r.get("/v1/patches/{patch_id}")
    def get_patch(patch_id: str) -> dict[str, Any]:
        return {"patch": patch_to_wire(service.get_patch(patch_id), with_mbox=True)}

    @r.post("/v1/patches/{patch_id}/discard")
    def discard(patch_id: str, body: DiscardIn) -> dict[str, Any]:
        patch = service.discard_patch(DiscardPatch(patch_id, body.expected_revision, body.reason))
        return {"patch": patch_to_wire(patch)}

    return r
