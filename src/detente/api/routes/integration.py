"""Hook check routes: the server-side ``pre-receive`` and the local ``pre-commit`` guard.

Both are asked by the git hooks :mod:`detente.hooks` installs; the hooks compute what
only git knows (commits of a push, their trailers and files; staged paths) and the
server decides with the claims it holds.

- ``POST /v1/hooks/pre-receive`` ``{repo, ref, oldOid, newOid, fastForward,
  commits[{oid, claimIds[], files[]}]}``: ``200 {ok: true, commits}`` when the update is
  the integration of valid claims, else ``409 evidence_rejected`` listing each failure.
- ``POST /v1/hooks/post-receive`` ``{repo, ref, oldOid, newOid, claimIds[]}``: the checked
  push landed; ``200 {integrated[]}``, the ``ready_for_review`` claims now integrated.
- ``POST /v1/hooks/pre-commit`` ``{repo, claimId?, paths[], edits?[{path, symbols[],
  outside}]}``: ``200 {ok, claimId, problems[], findings[{path, kind, claimId, agent}],
  reasons[]}`` (never refuses: the hook decides, or only warns). ``edits`` is what the
  staged diff does to symbols (the hook reads the index); without it the server judges
  symbol claims by the claim's worktree.
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
        op.PRE_RECEIVE,
        op.POST_RECEIVE,
        op.PRE_COMMIT,
    )
    return r
