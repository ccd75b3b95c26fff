"""Every operation of the HTTP API (API.md v1), named once: method, path template, name.

The path templates are the only spelling of the API's URLs: the HTTP routers register
them (:mod:`detente.api.routes`), :class:`~detente.client.http.HttpClient` fills them in,
and :class:`~detente.client.inprocess.InProcessClient` dispatches on the ``name`` (the
method of :class:`~detente.client.inprocess.ServiceCalls` that answers it). Template
parameters are named like the routers' path parameters (``{claim_id}``...).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Route"]


@dataclass(frozen=True)
class Route:
    """One operation.

    Attributes:
        name: the operation's name (a method of ``ServiceCalls``).
        method: the HTTP method.
        path: the path template, e.g. ``/v1/claims/{claim_id}/renew``.
        read_timeout: seconds to wait for the answer of an operation that may run long
            (the audit replays the whole log); None: the client's default.
    """

    name: str
    method: str
    path: str
    read_timeout: float | None = None


# ---------------------------------------------------------------------------- system
HEALTH = Route("health", "GET", "/healthz")
REPOS = Route("repos", "GET", "/v1/repos")
AUDIT_VERIFY = Route("audit_verify", "GET", "/v1/audit/verify", read_timeout=600.0)
EVENTS = Route("events", "GET", "/v1/events")
EVENT_STREAM = Route("event_stream", "GET", "/v1/events/stream")

# ---------------------------------------------------------------------------- claims
OPEN_CLAIM = Route("open_claim", "POST", "/v1/claims")
LIST_CLAIMS = Route("list_claims", "GET", "/v1/claims")
GET_CLAIM = Route("get_claim", "GET", "/v1/claims/{claim_id}")
TAKEOVER = Route("takeover", "POST", "/v1/claims/{claim_id}/takeover")
APPROVE_TAKEOVER = Route("approve_takeover", "POST", "/v1/claims/{claim_id}/takeover/approve")
RENEW = Route("renew", "POST", "/v1/claims/{claim_id}/renew")
ANNOUNCE = Route("announce", "POST", "/v1/claims/{claim_id}/announce")
SCOPE_CHANGE = Route("scope_change", "POST", "/v1/claims/{claim_id}/scope-change")
SUSPEND = Route("suspend", "POST", "/v1/claims/{claim_id}/suspend")
RESUME = Route("resume", "POST", "/v1/claims/{claim_id}/resume")
ABANDON = Route("abandon", "POST", "/v1/claims/{claim_id}/abandon")
COMPLETE = Route("complete", "POST", "/v1/claims/{claim_id}/complete")
CLEANUP = Route("cleanup", "POST", "/v1/claims/{claim_id}/cleanup")
CHECK_WRITES = Route("check_writes", "POST", "/v1/claims/{claim_id}/writes/check")

# ---------------------------------------------------------------------------- meetings
LIST_MEETINGS = Route("list_meetings", "GET", "/v1/meetings")
GET_MEETING = Route("get_meeting", "GET", "/v1/meetings/{meeting_id}")
PROPOSE = Route("propose", "POST", "/v1/meetings/{meeting_id}/proposals")
ACCEPT_PROPOSAL = Route(
    "accept_proposal", "POST", "/v1/meetings/{meeting_id}/proposals/{proposal_id}/accept"
)
RESOLVE_MEETING = Route("resolve_meeting", "POST", "/v1/meetings/{meeting_id}/resolve")
ACCEPT_HANDOFF = Route("accept_handoff", "POST", "/v1/meetings/{meeting_id}/handoff/accept")

# ---------------------------------------------------------------------------- agents
REGISTER_AGENT = Route("register_agent", "POST", "/v1/agents")
LIST_AGENTS = Route("list_agents", "GET", "/v1/agents")
GET_AGENT = Route("get_agent", "GET", "/v1/agents/{session_id}")
SESSION_CLAIMS = Route("session_claims", "GET", "/v1/agents/{session_id}/claims")
READINESS = Route("readiness", "POST", "/v1/readiness")

# ---------------------------------------------------------------------------- memory
REGISTER_DOCUMENT = Route("register_document", "POST", "/v1/memory/documents")
LIST_DOCUMENTS = Route("list_documents", "GET", "/v1/memory/documents")
PATCH_SECTION = Route("patch_section", "POST", "/v1/memory/sections/patch")
WRITE_DOCUMENT = Route("write_document", "POST", "/v1/memory/documents/write")
APPEND_ENTRY = Route("append_entry", "POST", "/v1/memory/append")
RENDER = Route("render", "POST", "/v1/memory/render")
RECONCILE = Route("reconcile", "POST", "/v1/memory/reconcile")

# ---------------------------------------------------------------------------- gates
PUBLISH_PATCH = Route("publish_patch", "POST", "/v1/patches")
LIST_PATCHES = Route("list_patches", "GET", "/v1/patches")
GET_PATCH = Route("get_patch", "GET", "/v1/patches/{patch_id}")
DISCARD_PATCH = Route("discard_patch", "POST", "/v1/patches/{patch_id}/discard")
DEPLOY = Route("deploy", "POST", "/v1/deployments/{env}")
GET_DEPLOYMENT = Route("get_deployment", "GET", "/v1/deployments/{env}")
SET_DEPLOY_POLICY = Route("set_deploy_policy", "PUT", "/v1/deployments/{env}/policy")
PRE_RECEIVE = Route("pre_receive", "POST", "/v1/hooks/pre-receive")
POST_RECEIVE = Route("post_receive", "POST", "/v1/hooks/post-receive")
PRE_COMMIT = Route("pre_commit", "POST", "/v1/hooks/pre-commit")

# ---------------------------------------------------------------------------- index
CLAIM_SYMBOLS = Route("claim_symbols", "GET", "/v1/claims/{claim_id}/symbols")
RECONCILE_INTENTS = Route("reconcile_intents", "POST", "/v1/reconcile")
SEARCH = Route("search", "GET", "/v1/search")
