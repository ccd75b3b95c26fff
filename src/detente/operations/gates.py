"""The gate operations: the patch queue, deployments and their policy, and the checks the
git hooks ask (pre-receive, post-receive, pre-commit).

The hooks compute what only git knows (commits of a push, their trailers and files;
staged paths) and these operations decide with the claims the service holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from detente.operations import authorize as who
from detente.operations.declaration import Operation
from detente.security.identity import current_principal

#: Reads need the ``read`` role (held by every principal holding a role, unless
#: ``[roles] read`` lists its holders; see :mod:`detente.security.authn`).
READ = who.role("read")

if TYPE_CHECKING:
    from detente.operations import gate_bodies as g
    from detente.operations import wire
    from detente.service import Service
    from detente.service.edit_check import EditQuery

__all__ = ["OPERATIONS"]


def _patch(patch: Any, *, with_mbox: bool = False) -> wire.Patch:
    from detente.domain.gates.model import patch_to_wire  # a remote client never needs it

    return cast("wire.Patch", patch_to_wire(patch, with_mbox=with_mbox))


def publish_patch(service: Service, body: g.PatchIn) -> wire.PatchOut:
    patch, created = service.patches.publish_patch(body.to_command())
    return {"patch": _patch(patch), "created": created}


def list_patches(
    service: Service, repo: str | None = None, status: str | None = None
) -> wire.PatchList:
    patches = service.patches.list_patches(repo=repo, status=status)
    return {"patches": [_patch(p) for p in patches]}


def get_patch(service: Service, patch_id: str) -> wire.PatchOut:
    return {"patch": _patch(service.patches.get_patch(patch_id), with_mbox=True)}


def discard_patch(service: Service, patch_id: str, body: g.DiscardIn) -> wire.PatchOut:
    return {"patch": _patch(service.patches.discard_patch(body.to_command(patch_id)))}


def deploy(service: Service, env: str, body: g.DeployIn) -> wire.DeploymentView:
    view = service.deployments.deploy(body.to_command(env))
    return cast("wire.DeploymentView", view.to_wire())


def get_deployment(service: Service, env: str, repo: str | None = None) -> wire.DeploymentView:
    view = service.deployments.get_deployment(env, repo)
    return cast("wire.DeploymentView", view.to_wire())


def set_deploy_policy(service: Service, env: str, body: g.PolicyIn) -> wire.DeploymentView:
    view = service.deployments.set_deploy_policy(body.to_command(env))
    return cast("wire.DeploymentView", view.to_wire())


def pre_receive(service: Service, body: g.PreReceiveIn) -> wire.PushChecked:
    pushed = body.pushed()
    count = service.gates.check_push(body.repo, body.ref, pushed, fast_forward=body.fast_forward)
    return {"ok": True, "ref": body.ref, "commits": count}


def post_receive(service: Service, body: g.PostReceiveIn) -> wire.PushRecorded:
    landed = (body.repo, body.ref, body.old_oid, body.new_oid, body.claim_ids)
    return {"integrated": service.gates.record_push(*landed)}


def pre_commit(service: Service, body: g.PreCommitIn) -> wire.CommitCheck:
    from detente.service.commit_check import check_commit

    check = check_commit(service, body.repo, body.claim_id, body.paths, edits=body.staged_edits())
    return cast("wire.CommitCheck", check.to_wire())


def pre_commit_paths(
    service: Service,
    repo: str,
    claim_id: str | None,
    paths: list[str],
    edits: dict[str, tuple[tuple[str, ...], bool]] | None = None,
) -> wire.CommitCheck:
    """:func:`pre_commit` from typed values (the in-process client's
    ``check_commit_typed``: the operation's rule without its body model): the same check
    and answer. The check itself (:func:`detente.service.commit_check.check_commit`), not
    through :attr:`Service.gates <detente.service.Service.gates>`: a hook asks it before
    every edit and needs none of the write gates' modules."""
    from detente.service.commit_check import check_commit

    check = check_commit(service, repo, claim_id, paths, edits=edits)
    return cast("wire.CommitCheck", check.to_wire())


def check_edit(service: Service, body: g.EditCheckIn) -> wire.EditCheck:
    """The whole judgement of an edit in one answer (:mod:`detente.service.edit_check`):
    ``{decision, claim, check, holders[], rooms[], unclaimed[], symbolsMatter,
    options[]}``. Read-only: refuses nothing but bad input (``validation_error``) and an
    unknown ``claimId`` (``not_found``)."""
    return check_edit_query(service, body.to_query())


def check_edit_query(service: Service, query: EditQuery) -> wire.EditCheck:
    """:func:`check_edit` from typed values (the in-process client's
    ``check_edit_typed``: the operation's rule without its body model; build the query
    with :func:`edit_query`)."""
    from detente.service.edit_check import check_edit as judge

    acting = current_principal().name
    answer = judge(service, query, acting).to_wire()
    if query.session_id:
        found = service.agents.notices(query.session_id, repo=query.repo, principal=acting)
        answer.update(found.to_wire())
    else:
        answer.update({"notices": [], "scannedUpTo": 0, "receipts": None})
    return cast("wire.EditCheck", answer)


def edit_query(
    repo: str,
    paths: list[str],
    *,
    session_id: str | None = None,
    claim_id: str | None = None,
    worktree: str | None = None,
    branch: str | None = None,
    edits: dict[str, tuple[tuple[str, ...], bool]] | None = None,
) -> EditQuery:
    """The question :func:`check_edit_query` answers, from typed values."""
    from detente.service.edit_check import EditQuery

    return EditQuery(repo, tuple(paths), session_id, claim_id, worktree, branch, edits or {})


PUBLISH_PATCH: Operation[wire.PatchOut] = Operation(
    "publish_patch",
    "POST",
    "/v1/patches",
    publish_patch,
    rule=who.own_body_claim,
    conflicts=("revision_conflict", "invalid_transition"),
    status_code=201,
)
LIST_PATCHES: Operation[wire.PatchList] = Operation(
    "list_patches", "GET", "/v1/patches", list_patches, rule=READ
)
GET_PATCH: Operation[wire.PatchOut] = Operation(
    "get_patch", "GET", "/v1/patches/{patch_id}", get_patch, rule=READ
)
DISCARD_PATCH: Operation[wire.PatchOut] = Operation(
    "discard_patch",
    "POST",
    "/v1/patches/{patch_id}/discard",
    discard_patch,
    rule=who.discard_patch,
    conflicts=("revision_conflict", "invalid_transition"),
)
DEPLOY: Operation[wire.DeploymentView] = Operation(
    "deploy",
    "POST",
    "/v1/deployments/{env}",
    deploy,
    rule=who.role("deploy"),
    conflicts=("stale_base", "evidence_rejected", "revision_conflict"),
)
GET_DEPLOYMENT: Operation[wire.DeploymentView] = Operation(
    "get_deployment", "GET", "/v1/deployments/{env}", get_deployment, rule=READ
)
SET_DEPLOY_POLICY: Operation[wire.DeploymentView] = Operation(
    "set_deploy_policy",
    "PUT",
    "/v1/deployments/{env}/policy",
    set_deploy_policy,
    rule=who.role("admin"),
    conflicts=("revision_conflict",),
)
PRE_RECEIVE: Operation[wire.PushChecked] = Operation(
    "pre_receive",
    "POST",
    "/v1/hooks/pre-receive",
    pre_receive,
    # The pusher is bound to each claim its commits name; its landing is recorded by
    # post-receive under the same rule: a push whose landing could not be recorded is
    # refused here (fail closed).
    rule=who.land_push,
    conflicts=("evidence_rejected",),
)
POST_RECEIVE: Operation[wire.PushRecorded] = Operation(
    "post_receive", "POST", "/v1/hooks/post-receive", post_receive, rule=who.land_push
)
PRE_COMMIT: Operation[wire.CommitCheck] = Operation(
    "pre_commit", "POST", "/v1/hooks/pre-commit", pre_commit, rule=who.role("claim")
)
CHECK_EDIT: Operation[wire.EditCheck] = Operation(
    "check_edit", "POST", "/v1/hooks/edit-check", check_edit, rule=who.check_edit
)

#: The hooks' checks, in the order the HTTP API registers them.
HOOKS: tuple[Operation[Any], ...] = (PRE_RECEIVE, POST_RECEIVE, PRE_COMMIT, CHECK_EDIT)
#: The patch queue, in the order the HTTP API registers them.
PATCHES: tuple[Operation[Any], ...] = (PUBLISH_PATCH, LIST_PATCHES, GET_PATCH, DISCARD_PATCH)
#: Deployments, in the order the HTTP API registers them.
DEPLOYMENTS: tuple[Operation[Any], ...] = (DEPLOY, GET_DEPLOYMENT, SET_DEPLOY_POLICY)
OPERATIONS: tuple[Operation[Any], ...] = (*HOOKS, *PATCHES, *DEPLOYMENTS)
