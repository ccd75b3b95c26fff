"""Event routes: JSON pages and the SSE stream (API.md "Events")."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request

from detente.api.sse import event_stream
from detente.service import Service

_MAX_SEQ = 2**63 - 1  # sequences are 64-bit signed integers in every store


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.get("/v1/events")
    def list_events(
        repo: str | None = None,
        since: Annotated[int, Query(ge=0, le=_MAX_SEQ)] = 0,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        events, next_since = service.events(since=since, limit=limit, repo=repo)
        return {"events": [e.to_wire() for e in events], "nextSince": next_since}

    @r.get("/v1/events/stream")
    async def stream(
        request: Request,
        repo: str | None = None,
        since: Annotated[int | None, Query(ge=0, le=_MAX_SEQ)] = None,
        claim: Annotated[str | None, Query(description="only events of this claim")] = None,
        path: Annotated[
            str | None, Query(description="only claim events touching paths under this prefix")
        ] = None,
        type: Annotated[
            list[str] | None, Query(description="event types; `claim.*` matches a family")
        ] = None,
        last_event_id: Annotated[str | None, Header()] = None,
    ) -> Any:
        """Server-Sent Events: ``id:`` is the global sequence; resumes after
        ``Last-Event-ID``; ``event: resync`` when a position cannot be served; a slow
        consumer is cut off with a resync hint. Filters (``claim``, ``path``, ``type``) are
        read by the stream itself from the query string."""
        del claim, path, type  # parsed by detente.api.sse.parse_filter from the query string
        return await event_stream(
            request, service, repo=repo, since=since, last_event_id=last_event_id
        )

    return r
