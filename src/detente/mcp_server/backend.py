"""Where the MCP tools send their calls: the service in-process, or a server over HTTP.

One code path: every tool builds the API's camelCase request body and reads the API's
response shape (API.md), whichever :class:`Backend` carries it.

- :class:`ServiceBackend` calls a :class:`~detente.service.Service` in this process: the
  embedded store of ``detente mcp`` (local mode), or the server's own service when MCP is
  mounted at ``/mcp`` by ``detente serve``. Bodies are validated by the same pydantic
  schemas as the HTTP routes and answered in the same wire shapes.
- :class:`HttpBackend` sends the same bodies to a detente server (``detente mcp
  --server URL``) through :class:`detente.cli.client.Client`, whose problem decoding
  turns every error back into the :mod:`detente.errors` exception of its ``code``.

Every method raises :class:`~detente.errors.DetenteError` subclasses only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

import pydantic

from detente.api.agent_schemas import AgentIn, ReadinessIn
from detente.api.schemas import (
    AbandonIn,
    AcceptIn,
    Body,
    ClaimIn,
    CompleteIn,
    ProposalIn,
    RenewIn,
    ScopeChangeIn,
)
from detente.cli.client import Client
from detente.domain.claims.wire import claim_to_wire
from detente.domain.meetings.commands import Accept, Propose
from detente.domain.meetings.model import meeting_to_wire
from detente.errors import DetenteError, InvalidTransition, ValidationError
from detente.service import Service
from detente.vcs.repo import current_oid

__all__ = ["Backend", "HttpBackend", "ServiceBackend", "memory_unavailable"]

_B = TypeVar("_B", bound=Body)


def memory_unavailable() -> InvalidTransition:
    """The error of the memory tools on a server that does not serve memory documents."""
    return InvalidTransition(
        "unavailable",
        "patched",
        "this detente server does not serve memory documents (an older version): edit the "
        "section in your worktree under your claim and list it in your evidence",
    )


class Backend(Protocol):
    """The API calls the tools make; bodies and results are API.md's JSON objects."""

    @property
    def default_repo(self) -> str | None:
        """The repository tools work on when none is named (None: must be named)."""
        ...

    def repos(self) -> dict[str, Any]: ...
    def register_agent(self, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def list_agents(self, *, repo: str | None) -> dict[str, Any]: ...
    def readiness(self, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def open_claim(self, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def get_claim(self, claim_id: str) -> dict[str, Any]: ...
    def list_claims(self, *, repo: str | None) -> dict[str, Any]: ...
    def renew(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def scope_change(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def abandon(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def complete(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def list_meetings(self, *, repo: str | None, status: str | None) -> dict[str, Any]: ...
    def propose(self, meeting_id: str, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def accept(self, meeting_id: str, proposal_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/meetings/{id}/proposals/{proposalId}/accept``: ``{meeting, claims[]}``."""
        ...

    def list_documents(self, *, repo: str, path: str | None) -> dict[str, Any]: ...
    def patch_memory_section(self, body: Mapping[str, Any]) -> dict[str, Any]: ...
    def events(self, *, since: int, limit: int, repo: str | None) -> dict[str, Any]: ...
    def close(self) -> None: ...


def _parse(model: type[_B], body: Mapping[str, Any]) -> _B:
    """Validate ``body`` like the HTTP edge does (``validation_error`` naming the field)."""
    try:
        return model.model_validate(dict(body))
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or None
        message = str(first.get("msg", "invalid request"))
        raise ValidationError(f"{field}: {message}" if field else message, field=field) from None


class ServiceBackend:
    """The tools' calls answered by a service in this process.

    Args:
        service: the use cases (its store stays open; the owner closes it).
        repo: the default repository; None means the only one served, if exactly one.
        owns_store: close the service's store in :meth:`close`.
    """

    def __init__(self, service: Service, repo: str | None = None, *, owns_store: bool = False):
        self.service = service
        self._repo = repo
        self._owns_store = owns_store

    @property
    def default_repo(self) -> str | None:
        if self._repo is not None:
            return self._repo
        names = [r.name for r in self.service.list_repos()]
        return names[0] if len(names) == 1 else None

    def close(self) -> None:
        if self._owns_store:
            self.service.store.close()

    def repos(self) -> dict[str, Any]:
        out = []
        for repo in self.service.list_repos():
            head = None
            if repo.path is not None:
                try:
                    head = current_oid(repo.path, "HEAD")
                except DetenteError:
                    head = None
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

    def register_agent(self, body: Mapping[str, Any]) -> dict[str, Any]:
        cmd = _parse(AgentIn, body).to_command()
        return {"agent": self.service.register_agent(cmd).to_wire()}

    def list_agents(self, *, repo: str | None) -> dict[str, Any]:
        return {"agents": [a.to_wire() for a in self.service.list_agents(repo=repo)]}

    def readiness(self, body: Mapping[str, Any]) -> dict[str, Any]:
        parsed = _parse(ReadinessIn, body)
        return self.service.readiness(parsed.session_id, parsed.paths, repo=parsed.repo).to_wire()

    def open_claim(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.service.open_claim(_parse(ClaimIn, body).to_command()).to_wire()

    def get_claim(self, claim_id: str) -> dict[str, Any]:
        return self.service.get_claim(claim_id).to_wire()

    def list_claims(self, *, repo: str | None) -> dict[str, Any]:
        return {"claims": [claim_to_wire(c) for c in self.service.list_claims(repo=repo)]}

    def renew(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        view = self.service.renew(_parse(RenewIn, body).to_command(claim_id))
        return {"claim": claim_to_wire(view.claim)}

    def scope_change(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.service.change_scope(_parse(ScopeChangeIn, body).to_command(claim_id)).to_wire()

    def abandon(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        view = self.service.set_status(_parse(AbandonIn, body).to_command(claim_id))
        return {"claim": claim_to_wire(view.claim)}

    def complete(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        view = self.service.complete(claim_id, _parse(CompleteIn, body).to_command(claim_id))
        return {"claim": claim_to_wire(view.claim)}

    def list_meetings(self, *, repo: str | None, status: str | None) -> dict[str, Any]:
        meetings = self.service.list_meetings(repo=repo, status=status)
        return {"meetings": [meeting_to_wire(x) for x in meetings]}

    def propose(self, meeting_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        parsed = _parse(ProposalIn, body)
        cmd = Propose(
            meeting_id, parsed.expected_meeting_revision, parsed.claim_id, parsed.resolution
        )
        return self.service.propose(cmd).to_wire()

    def accept(self, meeting_id: str, proposal_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        parsed = _parse(AcceptIn, body)
        cmd = Accept(meeting_id, parsed.expected_meeting_revision, parsed.claim_id, proposal_id)
        return self.service.accept(cmd).to_wire()

    def list_documents(self, *, repo: str, path: str | None) -> dict[str, Any]:
        return {"documents": [v.to_wire() for v in self.service.list_documents(repo, path)]}

    def patch_memory_section(self, body: Mapping[str, Any]) -> dict[str, Any]:
        # Imported here: the route module pulls in FastAPI, which stdio start-up avoids.
        from detente.api.routes.memory import SectionPatchIn
        from detente.domain.memory import commands as mc

        parsed = _parse(SectionPatchIn, body)
        view = self.service.patch_section(
            mc.PatchSection(
                repo=parsed.repo,
                path=parsed.path,
                section_key=parsed.section_key,
                expected_section_revision=parsed.expected_section_revision,
                expected_file_hash=parsed.expected_file_hash,
                claim_id=parsed.claim_id,
                fencing_token=parsed.fencing_token,
                body=parsed.patch.body,
                diff=parsed.patch.diff,
                worktree=parsed.worktree,
            )
        )
        return {
            "document": view.to_wire(),
            "section": view.section(parsed.section_key),
            "merged": bool(view.details.get("merged")),
        }

    def events(self, *, since: int, limit: int, repo: str | None) -> dict[str, Any]:
        batch, next_since = self.service.events(since=since, limit=limit, repo=repo)
        return {"events": [e.to_wire() for e in batch], "nextSince": next_since}


class _ApiClient(Client):
    """The CLI's client, plus a generic call for endpoints it has no method for."""

    def call(
        self,
        method: str,
        path: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        return self._request(method, path, json=json, params=params)


class HttpBackend:
    """The tools' calls sent to a detente server.

    Args:
        client: a connected client (see :func:`detente.cli.client.connect`); its
            ``repo_name`` is the default repository. Closed by :meth:`close`.
    """

    def __init__(self, client: Client) -> None:
        self.client = client
        self._api = _ApiClient(client.http, mode=client.mode, repo_name=client.repo_name)

    @property
    def default_repo(self) -> str | None:
        return self.client.repo_name

    def close(self) -> None:
        self.client.close()

    def _call(
        self,
        method: str,
        path: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        return self._api.call(method, path, json=json, params=params)

    def repos(self) -> dict[str, Any]:
        return self._call("GET", "/v1/repos")

    def register_agent(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/v1/agents", json=body)

    def list_agents(self, *, repo: str | None) -> dict[str, Any]:
        return self._call("GET", "/v1/agents", params={"repo": repo})

    def readiness(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/v1/readiness", json=body)

    def open_claim(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", "/v1/claims", json=body)

    def get_claim(self, claim_id: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/claims/{claim_id}")

    def list_claims(self, *, repo: str | None) -> dict[str, Any]:
        return self._call("GET", "/v1/claims", params={"repo": repo})

    def renew(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", f"/v1/claims/{claim_id}/renew", json=body)

    def scope_change(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", f"/v1/claims/{claim_id}/scope-change", json=body)

    def abandon(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", f"/v1/claims/{claim_id}/abandon", json=body)

    def complete(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", f"/v1/claims/{claim_id}/complete", json=body)

    def list_meetings(self, *, repo: str | None, status: str | None) -> dict[str, Any]:
        return self._call("GET", "/v1/meetings", params={"repo": repo, "status": status})

    def propose(self, meeting_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", f"/v1/meetings/{meeting_id}/proposals", json=body)

    def accept(self, meeting_id: str, proposal_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        path = f"/v1/meetings/{meeting_id}/proposals/{proposal_id}/accept"
        return self._call("POST", path, json=body)

    def list_documents(self, *, repo: str, path: str | None) -> dict[str, Any]:
        try:
            return self._call("GET", "/v1/memory/documents", params={"repo": repo, "path": path})
        except DetenteError as exc:
            if getattr(exc, "status", None) in (404, 405) and not exc.extra:
                raise memory_unavailable() from None
            raise

    def patch_memory_section(self, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return self._call("POST", "/v1/memory/sections/patch", json=body)
        except DetenteError as exc:
            # A server without the route answers a bare 404/405, not a problem document.
            if getattr(exc, "status", None) in (404, 405) and not exc.extra:
                raise memory_unavailable() from None
            raise

    def events(self, *, since: int, limit: int, repo: str | None) -> dict[str, Any]:
        return self._call(
            "GET", "/v1/events", params={"since": since, "limit": limit, "repo": repo}
        )
