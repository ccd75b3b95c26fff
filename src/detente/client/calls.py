"""Every API operation as one call into the service layer: :class:`ServiceCalls`.

This is the one place where an API operation meets the service: one method per operation
(named like its :mod:`~detente.client.routes` entry), taking the validated request body
(:mod:`detente.client.body` models) and answering the operation's record
(:mod:`detente.client.wire`). The HTTP routers (:mod:`detente.api.routes`) call it after
FastAPI parsed the request (and FastAPI validates the answer against the record);
:class:`~detente.client.inprocess.InProcessClient` calls it after validating the same
camelCase body with the same model.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Unpack, cast

from detente import __version__
from detente.client.claim_pages import (
    ClaimQuery,
    check_limit,
    decode_cursor,
    page_of,
    parse_include,
)
from detente.client.index_calls import IndexCalls
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.claims.query import ClaimFilters
from detente.domain.claims.wire import claim_to_wire
from detente.domain.gates.model import patch_to_wire
from detente.domain.meetings.model import meeting_to_wire
from detente.errors import DetenteError, ValidationError
from detente.service import Service
from detente.vcs.repo import current_oid

if TYPE_CHECKING:
    from detente.client import bodies as b
    from detente.client import gate_bodies as g
    from detente.client import memory_bodies as mb
    from detente.client import wire
    from detente.client.agent_bodies import AgentIn, ReadinessIn

__all__ = ["MAX_EVENTS_PAGE", "MAX_SEQ", "ServiceCalls"]

#: Sequences are 64-bit signed integers in every store.
MAX_SEQ = 2**63 - 1
#: The largest page of ``events``.
MAX_EVENTS_PAGE = 1000


def _claim(claim: Any) -> wire.Claim:
    return cast("wire.Claim", claim_to_wire(claim))


def _claims(claims: Any) -> list[wire.Claim]:
    return [_claim(c) for c in claims]


def _meeting(meeting: Any) -> wire.Meeting:
    return cast("wire.Meeting", meeting_to_wire(meeting))


def _patch(patch: Any, *, with_mbox: bool = False) -> wire.Patch:
    return cast("wire.Patch", patch_to_wire(patch, with_mbox=with_mbox))


class ServiceCalls(IndexCalls):
    """Every API operation as one service call (see the module docstring).

    Args:
        service: the use cases.

    Each method raises what the service raises (:mod:`detente.errors`).
    """

    def __init__(self, service: Service) -> None:
        self.service = service

    # ------------------------------------------------------------------ system

    def health(self) -> wire.Health:
        return {"ok": True, "version": __version__, "head": self.service.head()}

    def repos(self) -> wire.RepoList:
        out: list[wire.Repo] = []
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

    def audit_verify(self) -> wire.Audit:
        return cast("wire.Audit", self.service.audit().to_wire())

    def events(self, since: int = 0, limit: int = 100, repo: str | None = None) -> wire.EventPage:
        events, next_since = self.service.events(since=since, limit=limit, repo=repo)
        return {
            "events": [cast("wire.Event", e.to_wire()) for e in events],
            "nextSince": next_since,
        }

    # ------------------------------------------------------------------ claims

    def open_claim(self, body: b.ClaimIn) -> wire.ClaimView:
        """Announce a claim; with ``takeoverOf``, take an expired/abandoned claim over."""
        if body.takeover_of is not None:
            view = self.service.takeover.take_over(body.to_command(), body.takeover_of.to_request())
        else:
            view = self.service.claims.open_claim(body.to_command())
        return cast("wire.ClaimView", view.to_wire())

    def takeover(self, claim_id: str, body: b.TakeoverIn) -> wire.ClaimView:
        """Alias of ``POST /v1/claims`` with ``takeoverOf`` (its claimId must be this id)."""
        if body.takeover_of.claim_id != claim_id:
            raise ValidationError(
                f"takeoverOf.claimId must be {claim_id}", field="takeoverOf.claimId"
            )
        return self.open_claim(body)

    def approve_takeover(self, claim_id: str, body: b.ApproveTakeoverIn) -> wire.ClaimView:
        """Approve the pending takeover made by successor ``claim_id``."""
        view = self.service.takeover.approve_takeover(
            claim_id, body.expected_claim_revision, body.approver, body.kind
        )
        return cast("wire.ClaimView", view.to_wire())

    def list_claims(self, **query: Unpack[ClaimQuery]) -> wire.ClaimList:
        page, next_cursor = self.claim_page(**query)
        return {"claims": _claims(page), "nextCursor": next_cursor}

    def claim_page(self, **query: Unpack[ClaimQuery]) -> tuple[list[Claim], str | None]:
        """The records of one page of :meth:`list_claims` and the next page's cursor (the
        HTTP listing converts them a chunk at a time, :mod:`detente.api.claim_listing`).

        Raises:
            ValidationError: a bad ``limit``, ``cursor``, ``status`` or ``path``.
        """
        limit, cursor = query.pop("limit", None), query.pop("cursor", None)
        check_limit(limit)
        if cursor is not None:
            decode_cursor(cursor)  # a bad cursor is refused before any work
        claims = self.service.claims.list_claims(**cast(ClaimFilters, query))
        return page_of(claims, limit=limit, cursor=cursor)

    def get_claim(self, claim_id: str, include: str | None = None) -> wire.ClaimView:
        """The claim now; ``include`` (comma-separated ``work``, ``semantic``; default
        ``semantic``, empty for neither) adds the claim's git work or semantic advisories."""
        parts = parse_include(include)
        view = self.service.claims.get_claim(
            claim_id, with_work="work" in parts, with_semantic="semantic" in parts
        )
        return cast("wire.ClaimView", view.to_wire())

    def renew(self, claim_id: str, body: b.RenewIn) -> wire.ClaimOut:
        return {"claim": _claim(self.service.claims.renew(body.to_command(claim_id)).claim)}

    def announce(self, claim_id: str, body: b.AnnounceIn) -> wire.ClaimView:
        """A draft starts its lease and activates (or negotiates) like a fresh claim."""
        view = self.service.claims.announce_draft(
            claim_id, body.expected_claim_revision, body.lease_ttl_seconds
        )
        return cast("wire.ClaimView", view.to_wire())

    def scope_change(self, claim_id: str, body: b.ScopeChangeIn) -> wire.ClaimView:
        view = self.service.claims.change_scope(body.to_command(claim_id))
        return cast("wire.ClaimView", view.to_wire())

    def change_objective(self, claim_id: str, body: b.ObjectiveChangeIn) -> wire.ClaimView:
        """Change the claim's objective; its semantic advisories are computed again.

        ``200 {claim, overlaps[], meetings[], semanticOverlaps[]}``; never blocks.
        ``422 validation_error`` for a blank or unchanged objective.
        """
        view = self.service.claims.change_objective(body.to_command(claim_id))
        return cast("wire.ClaimView", view.to_wire())

    def suspend(self, claim_id: str, body: b.StatusChangeIn) -> wire.ClaimOut:
        return self._set_status(body.to_command(claim_id, ClaimStatus.SUSPENDED))

    def resume(self, claim_id: str, body: b.StatusChangeIn) -> wire.ClaimOut:
        return self._set_status(body.to_command(claim_id, ClaimStatus.ACTIVE))

    def abandon(self, claim_id: str, body: b.AbandonIn) -> wire.ClaimOut:
        return self._set_status(body.to_command(claim_id))

    def _set_status(self, cmd: Any) -> wire.ClaimOut:
        return {"claim": _claim(self.service.claims.set_status(cmd).claim)}

    def complete(self, claim_id: str, body: b.CompleteIn) -> wire.ClaimOut:
        """Validate evidence, then advance ``expectedBaseRef.ref`` by CAS (fast-forward).

        ``200 {claim}`` (``integrated``/``completed``); ``409 evidence_rejected`` (every
        failure in ``failures``), ``stale_base`` (claim ``active`` again, ``actual`` = the
        ref's OID), ``stale_fencing_token``; ``422`` when ``expectedBaseRef``,
        ``evidence`` or ``fencingToken`` is missing.
        """
        view = self.service.gates.complete(claim_id, body.to_command(claim_id))
        return {"claim": _claim(view.claim)}

    def cleanup(self, claim_id: str) -> wire.ClaimView:
        """Remove a finished claim's worktree entry (only that one; rescue first)."""
        view = self.service.takeover.cleanup_worktree(claim_id)
        return cast("wire.ClaimView", view.to_wire())

    def check_writes(self, claim_id: str, body: b.WriteCheckIn) -> wire.WriteCheck:
        """May this claim write these paths (or ``path::Symbol``) now? 409
        overlap_blocking / out_of_scope if not; ``limitedTo`` names the symbols a file
        write is limited to."""
        answer = self.service.claims.check_targets(claim_id, body.paths, body.fencing_token)
        out: wire.WriteCheck = {"ok": True, "claimId": claim_id, "paths": list(answer.targets)}
        if answer.limits:
            out["limitedTo"] = {path: list(syms) for path, syms in answer.limits.items()}
        return out

    # ------------------------------------------------------------------ meetings

    def list_meetings(self, repo: str | None = None, status: str | None = None) -> wire.MeetingList:
        meetings = self.service.meetings.list_meetings(repo=repo, status=status)
        return {"meetings": [_meeting(m) for m in meetings]}

    def get_meeting(self, meeting_id: str) -> wire.MeetingOut:
        return {"meeting": _meeting(self.service.meetings.get_meeting(meeting_id))}

    def propose(self, meeting_id: str, body: b.ProposalIn) -> wire.MeetingView:
        """A participant proposes a typed resolution; it accepts its own proposal."""
        view = self.service.meetings.propose(body.to_command(meeting_id))
        return cast("wire.MeetingView", view.to_wire())

    def accept_proposal(
        self, meeting_id: str, proposal_id: str, body: b.AcceptIn
    ) -> wire.MeetingView:
        """An affected participant accepts; the last acceptance applies the resolution."""
        view = self.service.meetings.accept(body.to_accept(meeting_id, proposal_id))
        return cast("wire.MeetingView", view.to_wire())

    def resolve_meeting(self, meeting_id: str, body: b.ResolveIn) -> wire.MeetingView:
        """A human principal resolves (an arbitrator, once the meeting escalated)."""
        view = self.service.meetings.resolve(body.to_command(meeting_id))
        return cast("wire.MeetingView", view.to_wire())

    def accept_handoff(self, meeting_id: str, body: b.AcceptIn) -> wire.MeetingView:
        """The recipient of a human-resolved handoff accepts the transfer."""
        view = self.service.meetings.accept_handoff(body.to_handoff(meeting_id))
        return cast("wire.MeetingView", view.to_wire())

    # ------------------------------------------------------------------ agents

    def register_agent(self, body: AgentIn) -> wire.AgentOut:
        """Register a session or renew it (``expiresAt = now + ttlSeconds``): ``{agent}``."""
        view = self.service.agents.register_agent(body.to_command())
        return {"agent": cast("wire.AgentSession", view.to_wire())}

    def list_agents(self, repo: str | None = None, status: str | None = None) -> wire.AgentList:
        """Sessions with ``status`` active|departed computed from the server clock."""
        views = self.service.agents.list_agents(repo=repo, status=status)
        return {"agents": [cast("wire.AgentSession", a.to_wire()) for a in views]}

    def get_agent(self, session_id: str) -> wire.AgentOut:
        """One session: ``{agent}``; ``404 not_found`` when never registered."""
        view = self.service.agents.get_agent(session_id)
        return {"agent": cast("wire.AgentSession", view.to_wire())}

    def session_claims(self, session_id: str, repo: str | None = None) -> wire.ClaimList:
        """``{claims[]}``: the session's claims that still hold their targets, oldest first."""
        return {"claims": _claims(self.service.agents.session_claims(session_id, repo=repo))}

    def readiness(self, body: ReadinessIn) -> wire.Readiness:
        """``{readiness: ready|caution, overlappingClaims[]}``; never refuses on overlap."""
        answer = self.service.agents.readiness(body.session_id, body.paths, repo=body.repo)
        return cast("wire.Readiness", answer.to_wire())

    # ------------------------------------------------------------------ memory

    def register_document(self, body: mb.RegisterIn) -> wire.DocumentOut:
        """Register a memory document: path and class (generated, append_only,
        section_owned, private). ``409 revision_conflict`` if already registered."""
        view = self.service.memory.register_document(body.to_command())
        return {"document": cast("wire.Document", view.to_wire())}

    def list_documents(self, repo: str, path: str | None = None) -> wire.DocumentList:
        """Registered documents with sections (key, title, revision, hash, ownerClaimId)
        and ``onDisk {fileHash, inSync}``."""
        views = self.service.memory.list_documents(repo, path)
        return {"documents": [cast("wire.Document", v.to_wire()) for v in views]}

    def patch_section(self, body: mb.SectionPatchIn) -> wire.SectionPatchOut:
        """Patch one section; only that section's bytes change."""
        view = self.service.memory.patch_section(body.to_command())
        return {
            "document": cast("wire.Document", view.to_wire()),
            "section": cast("wire.Section", view.section(body.section_key)),
            "merged": bool(view.details.get("merged")),
        }

    def write_document(self, body: mb.WriteIn) -> wire.DocumentOut:
        """Replace a whole file; a stale write names the sections it would destroy."""
        view = self.service.memory.write_document(body.to_command())
        return {"document": cast("wire.Document", view.to_wire())}

    def append_entry(self, body: mb.AppendIn) -> wire.AppendOut:
        """Append an entry to an append-only document (serialized, never interleaved)."""
        view = self.service.memory.append_entry(body.to_command())
        return {
            "document": cast("wire.Document", view.to_wire()),
            "entry": cast("wire.Entry", view.details["entry"]),
        }

    def render(self, body: mb.RenderIn) -> wire.RenderOut:
        """Re-render generated regions; user edits stay and open reconciliations."""
        results = self.service.memory.render(body.to_command())
        return {"results": cast("list[wire.RenderResult]", results)}

    def reconcile(self, body: mb.ReconcileIn) -> wire.DocumentOut:
        """Resolve a reconciliation: ``upstream`` or ``overlay``; region re-rendered."""
        view = self.service.memory.reconcile(body.to_command())
        return {"document": cast("wire.Document", view.to_wire())}

    # ------------------------------------------------------------------ gates

    def publish_patch(self, body: g.PatchIn) -> wire.PatchOut:
        patch, created = self.service.patches.publish_patch(body.to_command())
        return {"patch": _patch(patch), "created": created}

    def list_patches(self, repo: str | None = None, status: str | None = None) -> wire.PatchList:
        patches = self.service.patches.list_patches(repo=repo, status=status)
        return {"patches": [_patch(p) for p in patches]}

    def get_patch(self, patch_id: str) -> wire.PatchOut:
        return {"patch": _patch(self.service.patches.get_patch(patch_id), with_mbox=True)}

    def discard_patch(self, patch_id: str, body: g.DiscardIn) -> wire.PatchOut:
        return {"patch": _patch(self.service.patches.discard_patch(body.to_command(patch_id)))}

    def deploy(self, env: str, body: g.DeployIn) -> wire.DeploymentView:
        view = self.service.deployments.deploy(body.to_command(env))
        return cast("wire.DeploymentView", view.to_wire())

    def get_deployment(self, env: str, repo: str | None = None) -> wire.DeploymentView:
        view = self.service.deployments.get_deployment(env, repo)
        return cast("wire.DeploymentView", view.to_wire())

    def set_deploy_policy(self, env: str, body: g.PolicyIn) -> wire.DeploymentView:
        view = self.service.deployments.set_deploy_policy(body.to_command(env))
        return cast("wire.DeploymentView", view.to_wire())

    def pre_receive(self, body: g.PreReceiveIn) -> wire.PushChecked:
        pushed = body.pushed()
        count = self.service.gates.check_push(
            body.repo, body.ref, pushed, fast_forward=body.fast_forward
        )
        return {"ok": True, "ref": body.ref, "commits": count}

    def post_receive(self, body: g.PostReceiveIn) -> wire.PushRecorded:
        landed = (body.repo, body.ref, body.old_oid, body.new_oid, body.claim_ids)
        return {"integrated": self.service.gates.record_push(*landed)}

    def pre_commit(self, body: g.PreCommitIn) -> wire.CommitCheck:
        check = self.service.gates.check_commit(
            body.repo, body.claim_id, body.paths, edits=body.staged_edits()
        )
        return cast("wire.CommitCheck", check.to_wire())
