"""The HTTP API (API.md v1): claims, events (JSON and SSE), audit, repositories.

Routes are thin: parse the body (pydantic at the edge), call :class:`Service`, render the
records' wire shape. Errors become problem+json through ``problems.py``. Service calls
are synchronous; FastAPI runs plain ``def`` routes in its threadpool.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError

from detente import __version__
from detente.api.problems import detente_error_handler, validation_error_handler
from detente.api.schemas import (
    AbandonIn,
    ClaimIn,
    CompleteIn,
    RenewIn,
    ScopeChangeIn,
    StatusChangeIn,
)
from detente.api.sse import event_stream
from detente.domain.model import ClaimStatus
from detente.domain.wire import claim_to_wire, meeting_to_wire
from detente.errors import DetenteError, ValidationError
from detente.service import Service
from detente.vcs.repo import current_oid


def create_app(service: Service, *, sweep_interval: float | None = None) -> FastAPI:
    """Build the ASGI app around ``service``.

    Args:
        service: the use cases.
        sweep_interval: seconds between background lease sweeps; None disables the
            sweeper (expiry still happens lazily on every read and write).
    """

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()
        task: asyncio.Task[None] | None = None
        if sweep_interval is not None:

            async def sweeper() -> None:
                while not stop.is_set():
                    with contextlib.suppress(DetenteError):
                        await asyncio.to_thread(service.sweep)
                    await asyncio.sleep(sweep_interval)

            task = asyncio.create_task(sweeper())
        yield
        stop.set()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    app = FastAPI(
        title="detente",
        version=__version__,
        summary="Coordination plane for AI coding agents: claims, leases, revisions, evidence.",
        lifespan=lifespan,
    )
    app.state.service = service
    app.add_exception_handler(DetenteError, detente_error_handler)
    app.add_exception_handler(RequestValidationError, validation_error_handler)

    @app.get("/v1/repos")
    def list_repos() -> dict[str, Any]:
        repos = []
        for r in service.list_repos():
            head = None
            if r.path is not None:
                with contextlib.suppress(DetenteError):
                    head = current_oid(r.path, "HEAD")
            repos.append(
                {
                    "name": r.name,
                    "path": str(r.path) if r.path else None,
                    "defaultBranch": r.default_branch,
                    "caseInsensitive": r.case_insensitive,
                    "headOid": head,
                }
            )
        return {"repos": repos}

    @app.post("/v1/claims", status_code=201)
    def open_claim(body: ClaimIn) -> dict[str, Any]:
        if body.takeover_of is not None:
            raise ValidationError("takeover is not available in this version", field="takeoverOf")
        return service.open_claim(body.to_command()).to_wire()

    @app.post("/v1/claims/{claim_id}/takeover", status_code=201)
    def takeover(claim_id: str, body: ClaimIn) -> dict[str, Any]:
        raise ValidationError("takeover is not available in this version", field="takeoverOf")

    @app.get("/v1/claims")
    def list_claims(
        repo: str | None = None,
        status: str | None = None,
        path: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        claims = service.list_claims(repo=repo, status=status, path=path, agent=agent)
        return {"claims": [claim_to_wire(c) for c in claims]}

    @app.get("/v1/claims/{claim_id}")
    def get_claim(claim_id: str) -> dict[str, Any]:
        return service.get_claim(claim_id).to_wire()

    @app.post("/v1/claims/{claim_id}/renew")
    def renew(claim_id: str, body: RenewIn) -> dict[str, Any]:
        view = service.renew(body.to_command(claim_id))
        return {"claim": claim_to_wire(view.claim)}

    @app.post("/v1/claims/{claim_id}/scope-change")
    def scope_change(claim_id: str, body: ScopeChangeIn) -> dict[str, Any]:
        return service.change_scope(body.to_command(claim_id)).to_wire()

    @app.post("/v1/claims/{claim_id}/suspend")
    def suspend(claim_id: str, body: StatusChangeIn) -> dict[str, Any]:
        view = service.set_status(body.to_command(claim_id, ClaimStatus.SUSPENDED))
        return {"claim": claim_to_wire(view.claim)}

    @app.post("/v1/claims/{claim_id}/resume")
    def resume(claim_id: str, body: StatusChangeIn) -> dict[str, Any]:
        view = service.set_status(body.to_command(claim_id, ClaimStatus.ACTIVE))
        return {"claim": claim_to_wire(view.claim)}

    @app.post("/v1/claims/{claim_id}/abandon")
    def abandon(claim_id: str, body: AbandonIn) -> dict[str, Any]:
        view = service.set_status(body.to_command(claim_id))
        return {"claim": claim_to_wire(view.claim)}

    @app.post("/v1/claims/{claim_id}/complete")
    def complete(claim_id: str, body: CompleteIn) -> dict[str, Any]:
        view = service.complete(claim_id)
        return {"claim": claim_to_wire(view.claim)}

    @app.get("/v1/meetings")
    def list_meetings(repo: str | None = None, status: str | None = None) -> dict[str, Any]:
        return {
            "meetings": [
                meeting_to_wire(m) for m in service.list_meetings(repo=repo, status=status)
            ]
        }

    @app.get("/v1/meetings/{meeting_id}")
    def get_meeting(meeting_id: str) -> dict[str, Any]:
        return {"meeting": meeting_to_wire(service.get_meeting(meeting_id))}

    @app.get("/v1/events")
    def list_events(
        repo: str | None = None,
        since: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        events, next_since = service.events(since=since, limit=limit, repo=repo)
        return {"events": [e.to_wire() for e in events], "nextSince": next_since}

    @app.get("/v1/events/stream")
    async def stream(
        request: Request,
        repo: str | None = None,
        since: Annotated[int | None, Query(ge=0)] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Any:
        return await event_stream(
            request, service, repo=repo, since=since, last_event_id=last_event_id
        )

    @app.get("/v1/audit/verify")
    def audit_verify() -> dict[str, Any]:
        return service.audit().to_wire()

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "version": __version__, "head": service.head()}

    return app
