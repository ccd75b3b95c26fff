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

from fastapi import APIRouter

from detente.client import routes as op
from detente.client import wire
from detente.client.calls import ServiceCalls
from detente.client.gate_bodies import PostReceiveIn, PreCommitIn, PreReceiveIn


def router(calls: ServiceCalls) -> APIRouter:
    r = APIRouter()

    @r.post(op.PRE_RECEIVE.path, operation_id=op.PRE_RECEIVE.name)
    def pre_receive(body: PreReceiveIn) -> wire.PushChecked:
        return calls.pre_receive(body)

    @r.post(op.POST_RECEIVE.path, operation_id=op.POST_RECEIVE.name)
    def post_receive(body: PostReceiveIn) -> wire.PushRecorded:
        return calls.post_receive(body)

    @r.post(op.PRE_COMMIT.path, operation_id=op.PRE_COMMIT.name)
    def pre_commit(body: PreCommitIn) -> wire.CommitCheck:
        return calls.pre_commit(body)

    return r
