"""Every operation of the HTTP API (API.md v1), named once: method, path template, name.

The path templates are the only spelling of the API's URLs: the HTTP routers register
them (:mod:`detente.api.routes`), :class:`~detente.client.http.HttpClient` fills them in,
and :class:`~detente.client.inprocess.InProcessClient` dispatches on the ``name`` (the
method of :class:`~detente.client.inprocess.ServiceCalls` that answers it). Template
parameters are named like the routers' path parameters (``{claim_id}``...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # the records type the routes; importing them costs a CLI call ~10%
    from detente.client import wire

__all__ = ["Route"]

#: The record an operation answers (:mod:`detente.client.wire`).
R = TypeVar("R")


@dataclass(frozen=True)
class Route(Generic[R]):
    """One operation, typed by the record it answers (``Route[wire.ClaimView]``...).

    Attributes:
        name: the operation's name (a method of ``ServiceCalls``).
        method: the HTTP method.
        path: the path template, e.g. ``/v1/claims/{claim_id}/renew``.
        read_timeout: seconds to wait for the answer of an operation that may run long
            (the audit replays the whole log); None: the client's default.
        status_code: the HTTP status of success (201 where the operation creates).
    """

    name: str
    method: str
    path: str
    read_timeout: float | None = None
    status_code: int = 200


# ---------------------------------------------------------------------------- system
HEALTH: Route[wire.Health] = Route("health", "GET", "/healthz")
REPOS: Route[wire.RepoList] = Route("repos", "GET", "/v1/repos")
AUDIT_VERIFY: Route[wire.Audit] = Route(
    "audit_verify", "GET", "/v1/audit/verify", read_timeout=600.0
)
EVENTS: Route[wire.EventPage] = Route("events", "GET", "/v1/events")
EVENT_STREAM: Route[dict[str, Any]] = Route("event_stream", "GET", "/v1/events/stream")

# ---------------------------------------------------------------------------- claims
OPEN_CLAIM: Route[wire.ClaimView] = Route("open_claim", "POST", "/v1/claims", status_code=201)
LIST_CLAIMS: Route[wire.ClaimList] = Route("list_claims", "GET", "/v1/claims")
GET_CLAIM: Route[wire.ClaimView] = Route("get_claim", "GET", "/v1/claims/{claim_id}")
TAKEOVER: Route[wire.ClaimView] = Route(
    "takeover", "POST", "/v1/claims/{claim_id}/takeover", status_code=201
)
APPROVE_TAKEOVER: Route[wire.ClaimView] = Route(
    "approve_takeover", "POST", "/v1/claims/{claim_id}/takeover/approve"
)
RENEW: Route[wire.ClaimOut] = Route("renew", "POST", "/v1/claims/{claim_id}/renew")
ANNOUNCE: Route[wire.ClaimView] = Route("announce", "POST", "/v1/claims/{claim_id}/announce")
SCOPE_CHANGE: Route[wire.ClaimView] = Route(
    "scope_change", "POST", "/v1/claims/{claim_id}/scope-change"
)
CHANGE_OBJECTIVE: Route[wire.ClaimView] = Route(
    "change_objective", "POST", "/v1/claims/{claim_id}/objective"
)
SUSPEND: Route[wire.ClaimOut] = Route("suspend", "POST", "/v1/claims/{claim_id}/suspend")
RESUME: Route[wire.ClaimOut] = Route("resume", "POST", "/v1/claims/{claim_id}/resume")
ABANDON: Route[wire.ClaimOut] = Route("abandon", "POST", "/v1/claims/{claim_id}/abandon")
COMPLETE: Route[wire.ClaimOut] = Route("complete", "POST", "/v1/claims/{claim_id}/complete")
CLEANUP: Route[wire.ClaimView] = Route("cleanup", "POST", "/v1/claims/{claim_id}/cleanup")
CHECK_WRITES: Route[wire.WriteCheck] = Route(
    "check_writes", "POST", "/v1/claims/{claim_id}/writes/check"
)

# ---------------------------------------------------------------------------- meetings
LIST_MEETINGS: Route[wire.MeetingList] = Route("list_meetings", "GET", "/v1/meetings")
GET_MEETING: Route[wire.MeetingOut] = Route("get_meeting", "GET", "/v1/meetings/{meeting_id}")
PROPOSE: Route[wire.MeetingView] = Route("propose", "POST", "/v1/meetings/{meeting_id}/proposals")
ACCEPT_PROPOSAL: Route[wire.MeetingView] = Route(
    "accept_proposal", "POST", "/v1/meetings/{meeting_id}/proposals/{proposal_id}/accept"
)
RESOLVE_MEETING: Route[wire.MeetingView] = Route(
    "resolve_meeting", "POST", "/v1/meetings/{meeting_id}/resolve"
)
ACCEPT_HANDOFF: Route[wire.MeetingView] = Route(
    "accept_handoff", "POST", "/v1/meetings/{meeting_id}/handoff/accept"
)

# ---------------------------------------------------------------------------- agents
REGISTER_AGENT: Route[wire.AgentOut] = Route(
    "register_agent", "POST", "/v1/agents", status_code=201
)
LIST_AGENTS: Route[wire.AgentList] = Route("list_agents", "GET", "/v1/agents")
GET_AGENT: Route[wire.AgentOut] = Route("get_agent", "GET", "/v1/agents/{session_id}")
SESSION_CLAIMS: Route[wire.ClaimList] = Route(
    "session_claims", "GET", "/v1/agents/{session_id}/claims"
)
READINESS: Route[wire.Readiness] = Route("readiness", "POST", "/v1/readiness")

# ---------------------------------------------------------------------------- memory
REGISTER_DOCUMENT: Route[wire.DocumentOut] = Route(
    "register_document", "POST", "/v1/memory/documents", status_code=201
)
LIST_DOCUMENTS: Route[wire.DocumentList] = Route("list_documents", "GET", "/v1/memory/documents")
PATCH_SECTION: Route[wire.SectionPatchOut] = Route(
    "patch_section", "POST", "/v1/memory/sections/patch"
)
WRITE_DOCUMENT: Route[wire.DocumentOut] = Route(
    "write_document", "POST", "/v1/memory/documents/write"
)
APPEND_ENTRY: Route[wire.AppendOut] = Route("append_entry", "POST", "/v1/memory/append")
RENDER: Route[wire.RenderOut] = Route("render", "POST", "/v1/memory/render")
RECONCILE: Route[wire.DocumentOut] = Route("reconcile", "POST", "/v1/memory/reconcile")

# ---------------------------------------------------------------------------- gates
PUBLISH_PATCH: Route[wire.PatchOut] = Route("publish_patch", "POST", "/v1/patches", status_code=201)
LIST_PATCHES: Route[wire.PatchList] = Route("list_patches", "GET", "/v1/patches")
GET_PATCH: Route[wire.PatchOut] = Route("get_patch", "GET", "/v1/patches/{patch_id}")
DISCARD_PATCH: Route[wire.PatchOut] = Route(
    "discard_patch", "POST", "/v1/patches/{patch_id}/discard"
)
DEPLOY: Route[wire.DeploymentView] = Route("deploy", "POST", "/v1/deployments/{env}")
GET_DEPLOYMENT: Route[wire.DeploymentView] = Route("get_deployment", "GET", "/v1/deployments/{env}")
SET_DEPLOY_POLICY: Route[wire.DeploymentView] = Route(
    "set_deploy_policy", "PUT", "/v1/deployments/{env}/policy"
)
PRE_RECEIVE: Route[wire.PushChecked] = Route("pre_receive", "POST", "/v1/hooks/pre-receive")
POST_RECEIVE: Route[wire.PushRecorded] = Route("post_receive", "POST", "/v1/hooks/post-receive")
PRE_COMMIT: Route[wire.CommitCheck] = Route("pre_commit", "POST", "/v1/hooks/pre-commit")

# ---------------------------------------------------------------------------- index
CLAIM_SYMBOLS: Route[wire.ClaimSymbols] = Route(
    "claim_symbols", "GET", "/v1/claims/{claim_id}/symbols"
)
RECONCILE_INTENTS: Route[wire.IntentsReconciled] = Route(
    "reconcile_intents", "POST", "/v1/reconcile"
)
SEARCH: Route[wire.SearchOut] = Route("search", "GET", "/v1/search")
