"""Hook check routes: the server-side ``pre-receive`` and the local ``pre-commit`` guard.

Both are asked by the git hooks :mod:`detente.hooks` installs; the hooks compute what
only git knows (commits of a push, their trailers and files; staged paths) and the
server decides with the claims it holds.

- ``POST /v1/hooks/pre-receive`` ``{repo, ref, oldOid, newOid, fastForward,
  commits[{oid, claimIds[], files[]}]}``: ``200 {ok: true, commits}`` when the update is
  the integration of valid claims, else ``409 evidence_rejected`` listing each failure.
- ``POST /v1/hooks/post-receive`` ``{repo, ref, oldOid, newOid, claimIds[]}``: the checked
  push landed; ``200 {integrated[]}``, the ``ready_for_review`` claims now integrated.
- ``POST /v1/hooks/pre-commit`` ``{repo, claimId?, paths[]}``: ``200 {ok, claimId,
  problems[], findings[{path, kind, claimId, agent}], reasons[]}`` (never refuses: the
  hook decides, or only warns).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import Field

from detente.api.schemas import Body
from detente.domain.gates.findings import PushedCommit
from detente.service import Service


class PushedCommitIn(Body):
    oid: str = Field(min_length=4, max_length=64)
    claim_ids: list[str] = []
    files: list[str] = []


class PreReceiveIn(Body):
    repo: str = Field(min_length=1)
    ref: str = Field(min_length=1)
    old_oid: str = Field(min_length=4, max_length=64)
    new_oid: str = Field(min_length=4, max_length=64)
    fast_forward: bool
    commits: list[PushedCommitIn] = []


class PostReceiveIn(Body):
    repo: str = Field(min_length=1)
    ref: str = Field(min_length=1)
    old_oid: str = Field(min_length=4, max_length=64)
    new_oid: str = Field(min_length=4, max_length=64)
    claim_ids: list[str] = []


class PreCommitIn(Body):
    repo: str = Field(min_length=1)
    claim_id: str | None = None
    paths: list[str] = Field(min_length=1)


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.post("/v1/hooks/pre-receive")
    def pre_receive(body: PreReceiveIn) -> dict[str, Any]:
        commits = [PushedCommit(c.oid, tuple(c.claim_ids), tuple(c.files)) for c in body.commits]
        count = service.check_push(body.repo, body.ref, commits, fast_forward=body.fast_forward)
        return {"ok": True, "ref": body.ref, "commits": count}

    @r.post("/v1/hooks/post-receive")
    def post_receive(body: PostReceiveIn) -> dict[str, Any]:
        done = service.record_push(body.repo, body.ref, body.old_oid, body.new_oid, body.claim_ids)
        return {"integrated": done}

    @r.post("/v1/hooks/pre-commit")
    def pre_commit(body: PreCommitIn) -> dict[str, Any]:
        return service.check_commit(body.repo, body.claim_id, body.paths).to_wire()

    return r
