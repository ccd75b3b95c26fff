"""The in-process implementation of the client, and every call it makes into the service.

:class:`ServiceCalls` is the one place where an API operation meets the service layer:
one method per operation (named like its :mod:`~detente.client.routes` entry), taking the
validated request body (:mod:`detente.client.body` models) and answering the API.md
wire shape. The HTTP routers (:mod:`detente.api.routes`) call it after FastAPI parsed the
request; :class:`InProcessClient` calls it after validating the same camelCase body with
the same model. No ASGI app, no JSON encoding: records go straight to their wire dicts.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from datetime import date, datetime
from enum import Enum
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from detente import __version__
from detente.client.base import Call, Follow, Wire
from detente.client.claim_pages import check_limit, decode_cursor, page_of, parse_include
from detente.client.index_calls import IndexCalls
from detente.client.protocol import Client
from detente.client.sse import SseMessage
from detente.domain.claims.model import ClaimStatus
from detente.domain.claims.wire import claim_to_wire
from detente.domain.gates.model import patch_to_wire
from detente.domain.meetings.model import meeting_to_wire
from detente.errors import DetenteError, ValidationError
from detente.service import Service
from detente.vcs.repo import current_oid

if TYPE_CHECKING:
    from pydantic import BaseModel

    from detente.client import bodies as b
    from detente.client import gate_bodies as g
    from detente.client import memory_bodies as mb
    from detente.client.agent_bodies import AgentIn, ReadinessIn

__all__ = ["InProcessClient", "ServiceCalls"]

#: Sequences are 64-bit signed integers in every store.
MAX_SEQ = 2**63 - 1
#: The largest page of ``events``.
MAX_EVENTS_PAGE = 1000


class ServiceCalls(IndexCalls):
    """Every API operation as one service call (see the module docstring).

    Args:
        service: the use cases.

    Each method raises what the service raises (:mod:`detente.errors`).
    """

    def __init__(self, service: Service) -> None:
        self.service = service

    # ------------------------------------------------------------------ system

    def health(self) -> Wire:
        return {"ok": True, "version": __version__, "head": self.service.head()}

    def repos(self) -> Wire:
        out = []
        for repo in self.service.list_repos():
            head = None
            if repo.path is not None:
                with contextlib.suppress(DetenteError):
                    head = current_oid(repo.path, "HEAD")
            out.append(
                {
                    "name": repo.name,
                    "path": str(repo.path) if repo.path else None,
                    "defaultBranch": repo.default_branch,
                    "caseInsensitive": repo.case_insensitive,
                    "headOid": head,
                }
            )
        return {"repos": out}

    def audit_verify(self) -> Wire:
        return self.service.audit().to_wire()

    def events(self, since: int = 0, limit: int = 100, repo: str | None = None) -> Wire:
        events, next_since = self.service.events(since=since, limit=limit, repo=repo)
        return {"events": [e.to_wire() for e in events], "nextSince": next_since}

    # ------------------------------------------------------------------ claims

    def open_claim(self, body: b.ClaimIn) -> Wire:
        if body.takeover_of is not None:
            return self.service.takeover.take_over(
                body.to_command(), body.takeover_of.to_request()
            ).to_wire()
        return self.service.claims.open_claim(body.to_command()).to_wire()

    def takeover(self, claim_id: str, body: b.ClaimIn) -> Wire:
        if body.takeover_of is None:
            raise ValidationError("takeoverOf is required", field="takeoverOf")
        if body.takeover_of.claim_id != claim_id:
            raise ValidationError(
                f"takeoverOf.claimId must be {claim_id}", field="takeoverOf.claimId"
            )
        return self.open_claim(body)

    def approve_takeover(self, claim_id: str, body: b.ApproveTakeoverIn) -> Wire:
        view = self.service.takeover.approve_takeover(
            claim_id, body.expected_claim_revision, body.approver, body.kind
        )
        return view.to_wire()

    def list_claims(
        self,
        repo: str | None = None,
        status: str | None = None,
        path: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Wire:
        check_limit(limit)
        if cursor is not None:
            decode_cursor(cursor)  # a bad cursor is refused before any work
        claims = self.service.claims.list_claims(
            repo=repo, status=status, path=path, agent=agent, session=session
        )
        page, next_cursor = page_of(claims, limit=limit, cursor=cursor)
        return {"claims": [claim_to_wire(c) for c in page], "nextCursor": next_cursor}

    def get_claim(self, claim_id: str, include: str | None = None) -> Wire:
        parts = parse_include(include)
        view = self.service.claims.get_claim(
            claim_id, with_work="work" in parts, with_semantic="semantic" in parts
        )
        return view.to_wire()

    def renew(self, claim_id: str, body: b.RenewIn) -> Wire:
        return {"claim": claim_to_wire(self.service.claims.renew(body.to_command(claim_id)).claim)}

    def announce(self, claim_id: str, body: b.AnnounceIn) -> Wire:
        view = self.service.claims.announce_draft(
            claim_id, body.expected_claim_revision, body.lease_ttl_seconds
        )
        return view.to_wire()

    def scope_change(self, claim_id: str, body: b.ScopeChangeIn) -> Wire:
        return self.service.claims.change_scope(body.to_command(claim_id)).to_wire()

    def suspend(self, claim_id: str, body: b.StatusChangeIn) -> Wire:
        return self._set_status(body.to_command(claim_id, ClaimStatus.SUSPENDED))

    def resume(self, claim_id: str, body: b.StatusChangeIn) -> Wire:
        return self._set_status(body.to_command(claim_id, ClaimStatus.ACTIVE))

    def abandon(self, claim_id: str, body: b.AbandonIn) -> Wire:
        return self._set_status(body.to_command(claim_id))

    def _set_status(self, cmd: Any) -> Wire:
        return {"claim": claim_to_wire(self.service.claims.set_status(cmd).claim)}

    def complete(self, claim_id: str, body: b.CompleteIn) -> Wire:
        view = self.service.gates.complete(claim_id, body.to_command(claim_id))
        return {"claim": claim_to_wire(view.claim)}

    def cleanup(self, claim_id: str) -> Wire:
        return self.service.takeover.cleanup_worktree(claim_id).to_wire()

    def check_writes(self, claim_id: str, body: b.WriteCheckIn) -> Wire:
        paths = self.service.claims.check_write(claim_id, body.paths, body.fencing_token)
        return {"ok": True, "claimId": claim_id, "paths": paths}

    # ------------------------------------------------------------------ meetings

    def list_meetings(self, repo: str | None = None, status: str | None = None) -> Wire:
        meetings = self.service.meetings.list_meetings(repo=repo, status=status)
        return {"meetings": [meeting_to_wire(x) for x in meetings]}

    def get_meeting(self, meeting_id: str) -> Wire:
        return {"meeting": meeting_to_wire(self.service.meetings.get_meeting(meeting_id))}

    def propose(self, meeting_id: str, body: b.ProposalIn) -> Wire:
        return self.service.meetings.propose(body.to_command(meeting_id)).to_wire()

    def accept_proposal(self, meeting_id: str, proposal_id: str, body: b.AcceptIn) -> Wire:
        return self.service.meetings.accept(body.to_accept(meeting_id, proposal_id)).to_wire()

    def resolve_meeting(self, meeting_id: str, body: b.ResolveIn) -> Wire:
        return self.service.meetings.resolve(body.to_command(meeting_id)).to_wire()

    def accept_handoff(self, meeting_id: str, body: b.AcceptIn) -> Wire:
        return self.service.meetings.accept_handoff(body.to_handoff(meeting_id)).to_wire()

    # ------------------------------------------------------------------ agents

    def register_agent(self, body: AgentIn) -> Wire:
        return {"agent": self.service.agents.register_agent(body.to_command()).to_wire()}

    def list_agents(self, repo: str | None = None, status: str | None = None) -> Wire:
        return {
            "agents": [
                a.to_wire() for a in self.service.agents.list_agents(repo=repo, status=status)
            ]
        }

    def get_agent(self, session_id: str) -> Wire:
        return {"agent": self.service.agents.get_agent(session_id).to_wire()}

    def session_claims(self, session_id: str, repo: str | None = None) -> Wire:
        claims = self.service.agents.session_claims(session_id, repo=repo)
        return {"claims": [claim_to_wire(c) for c in claims]}

    def readiness(self, body: ReadinessIn) -> Wire:
        return self.service.agents.readiness(body.session_id, body.paths, repo=body.repo).to_wire()

    # ------------------------------------------------------------------ memory

    def register_document(self, body: mb.RegisterIn) -> Wire:
        return {"document": self.service.memory.register_document(body.to_command()).to_wire()}

    def list_documents(self, repo: str, path: str | None = None) -> Wire:
        return {"documents": [v.to_wire() for v in self.service.memory.list_documents(repo, path)]}

    def patch_section(self, body: mb.SectionPatchIn) -> Wire:
        view = self.service.memory.patch_section(body.to_command())
        return {
            "document": view.to_wire(),
            "section": view.section(body.section_key),
            "merged": bool(view.details.get("merged")),
        }

    def write_document(self, body: mb.WriteIn) -> Wire:
        return {"document": self.service.memory.write_document(body.to_command()).to_wire()}

    def append_entry(self, body: mb.AppendIn) -> Wire:
        view = self.service.memory.append_entry(body.to_command())
        return {"document": view.to_wire(), "entry": view.details.get("entry")}

    def render(self, body: mb.RenderIn) -> Wire:
        return {"results": self.service.memory.render(body.to_command())}

    def reconcile(self, body: mb.ReconcileIn) -> Wire:
        return {"document": self.service.memory.reconcile(body.to_command()).to_wire()}

    # ------------------------------------------------------------------ gates

    def publish_patch(self, body: g.PatchIn) -> Wire:
        patch, created = self.service.patches.publish_patch(body.to_command())
        return {"patch": patch_to_wire(patch), "created": created}

    def list_patches(self, repo: str | None = None, status: str | None = None) -> Wire:
        patches = self.service.patches.list_patches(repo=repo, status=status)
        return {"patches": [patch_to_wire(p) for p in patches]}

    def get_patch(self, patch_id: str) -> Wire:
        return {"patch": patch_to_wire(self.service.patches.get_patch(patch_id), with_mbox=True)}

    def discard_patch(self, patch_id: str, body: g.DiscardIn) -> Wire:
        return {
            "patch": patch_to_wire(self.service.patches.discard_patch(body.to_command(patch_id)))
        }

    def deploy(self, env: str, body: g.DeployIn) -> Wire:
        return self.service.deployments.deploy(body.to_command(env)).to_wire()

    def get_deployment(self, env: str, repo: str | None = None) -> Wire:
        return self.service.deployments.get_deployment(env, repo).to_wire()

    def set_deploy_policy(self, env: str, body: g.PolicyIn) -> Wire:
        return self.service.deployments.set_deploy_policy(body.to_command(env)).to_wire()

    def pre_receive(self, body: g.PreReceiveIn) -> Wire:
        pushed = body.pushed()
        count = self.service.gates.check_push(
            body.repo, body.ref, pushed, fast_forward=body.fast_forward
        )
        return {"ok": True, "ref": body.ref, "commits": count}

    def post_receive(self, body: g.PostReceiveIn) -> Wire:
        landed = (body.repo, body.ref, body.old_oid, body.new_oid, body.claim_ids)
        return {"integrated": self.service.gates.record_push(*landed)}

    def pre_commit(self, body: g.PreCommitIn) -> Wire:
        return self.service.gates.check_commit(body.repo, body.claim_id, body.paths).to_wire()


@functools.cache
def body_models() -> dict[str, type[BaseModel]]:
    """The body model of every operation that takes one, by operation name (loaded on
    first use: a read-only command never imports pydantic)."""
    from detente.client import bodies as b
    from detente.client import gate_bodies as g
    from detente.client import memory_bodies as mb
    from detente.client.agent_bodies import AgentIn, ReadinessIn
    from detente.client.index_bodies import ReconcileIntentsIn

    return {
        "open_claim": b.ClaimIn,
        "takeover": b.ClaimIn,
        "approve_takeover": b.ApproveTakeoverIn,
        "renew": b.RenewIn,
        "announce": b.AnnounceIn,
        "scope_change": b.ScopeChangeIn,
        "suspend": b.StatusChangeIn,
        "resume": b.StatusChangeIn,
        "abandon": b.AbandonIn,
        "complete": b.CompleteIn,
        "check_writes": b.WriteCheckIn,
        "propose": b.ProposalIn,
        "accept_proposal": b.AcceptIn,
        "resolve_meeting": b.ResolveIn,
        "accept_handoff": b.AcceptIn,
        "register_agent": AgentIn,
        "readiness": ReadinessIn,
        "register_document": mb.RegisterIn,
        "patch_section": mb.SectionPatchIn,
        "write_document": mb.WriteIn,
        "append_entry": mb.AppendIn,
        "render": mb.RenderIn,
        "reconcile": mb.ReconcileIn,
        "reconcile_intents": ReconcileIntentsIn,
        "publish_patch": g.PatchIn,
        "discard_patch": g.DiscardIn,
        "deploy": g.DeployIn,
        "set_deploy_policy": g.PolicyIn,
        "pre_receive": g.PreReceiveIn,
        "post_receive": g.PostReceiveIn,
        "pre_commit": g.PreCommitIn,
    }


def check_page(since: object, limit: object) -> tuple[int, int]:
    """``since`` and ``limit`` of an events page, checked like the HTTP edge checks them.

    Raises:
        ValidationError: ``validation_error`` naming ``since`` or ``limit``.
    """
    errors = []
    if not isinstance(since, int) or not 0 <= since <= MAX_SEQ:
        errors.append({"loc": ("query", "since"), "msg": f"must be between 0 and {MAX_SEQ}"})
    if not isinstance(limit, int) or not 1 <= limit <= MAX_EVENTS_PAGE:
        errors.append({"loc": ("query", "limit"), "msg": f"must be 1 to {MAX_EVENTS_PAGE}"})
    if errors or not isinstance(since, int) or not isinstance(limit, int):
        from detente.client.body import invalid

        raise invalid(errors)
    return since, limit


def plain(value: Any) -> Any:
    """A private copy of a wire value with JSON's types (tuples and sets as lists, enums
    by value, times in ISO 8601, paths as strings), as an HTTP response would decode:
    the caller may keep or change it without touching the service's records."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in value]
    if isinstance(value, Enum):
        return plain(value.value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    return value


class InProcessClient(Client):
    """The client of a service in this process.

    Args:
        service: the use cases (its store stays open unless ``owns_store``).
        repo_name: the current repository's name; None means the only one served, if one.
        repo_path: top level of the current repository's working tree, if any.
        owns_store: close the service's store in :meth:`close`.
    """

    def __init__(
        self,
        service: Service,
        *,
        repo_name: str | None = None,
        repo_path: Path | None = None,
        owns_store: bool = False,
    ) -> None:
        if repo_name is None:
            names = [r.name for r in service.list_repos()]
            repo_name = names[0] if len(names) == 1 else None

        def close_store() -> None:
            with contextlib.suppress(Exception):
                service.store.close()

        super().__init__(
            mode="local",
            repo_name=repo_name,
            repo_path=repo_path,
            on_close=close_store if owns_store else None,
        )
        self.calls = ServiceCalls(service)
        self.clock = service.clock

    @property
    def url(self) -> str:
        """A placeholder: nothing travels over a network."""
        return "inprocess://detente"

    def _send(self, call: Call) -> Wire:
        handler: Callable[..., Wire] = getattr(self.calls, call.route.name)
        kwargs: dict[str, Any] = dict(call.params)
        if call.route.name == "events":
            kwargs["since"], kwargs["limit"] = check_page(
                kwargs.get("since", 0), kwargs.get("limit", 100)
            )
        # A read never takes a body: it never imports pydantic.
        model = body_models().get(call.route.name) if call.route.method != "GET" else None
        if model is not None:
            from detente.client.body import parse

            kwargs["body"] = parse(model, call.body)
        result: Wire = plain(handler(**call.path, **kwargs))
        return result

    def _follow(self, position: int, repo: str | None, options: Follow) -> Iterator[SseMessage]:
        """Poll the log every ``poll_interval`` seconds (other processes may write to the
        same store)."""
        import json

        while True:
            page = self.events(since=position, limit=500, repo=repo)
            for event in page["events"]:
                position = int(event["seq"])
                yield SseMessage(str(position), str(event["type"]), json.dumps(event))
            if not page["events"]:
                time.sleep(options.poll_interval)
