"""Event routes: JSON pages and the SSE stream (API.md "Events")."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request

from detente.api.sse import event_stream
from detente.service import Service


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.get("/v1/events")
    def list_events(
        repo: str | None = None,
        since: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        events, next_since = service.events(since=since, limit=limit, repo=repo)
        return {"events": [e.to_wire() for e in events], "nextSince": next_since}

    @r.get("/v1/events/stream")
    async def stream(
        request: Request,
        repo: str | None = None,
        since: Annotated[int | None, Query(ge=0)] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Any:
        return await event_stream(
            request, service, repo=repo, since=since, last_event_id=last_event_id
        )

    return r
