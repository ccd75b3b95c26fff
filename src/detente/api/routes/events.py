"""Event routes: JSON pages and the SSE stream (API.md "Events")."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request

from detente.api.sse import event_stream
from detente.operations import system as op
from detente.operations import wire
from detente.operations.door import Operations
from detente.operations.system import MAX_EVENTS_PAGE, MAX_SEQ
from detente.security.identity import current_principal


def events_route(r: APIRouter, operations: Operations) -> None:
    """``GET /v1/events``: a page of the log, its bounds checked by FastAPI."""

    @r.get(op.EVENTS.path, operation_id=op.EVENTS.name)
    def list_events(
        repo: str | None = None,
        since: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_EVENTS_PAGE)] = 100,
    ) -> wire.EventPage:
        return operations.invoke(op.EVENTS, since, limit, repo)


def stream_route(r: APIRouter, operations: Operations) -> None:
    """``GET /v1/events/stream``: the live log as Server-Sent Events."""
    service = operations.service

    @r.get(
        op.EVENT_STREAM.path,
        operation_id=op.EVENT_STREAM.name,
        responses={
            200: {
                "description": "Server-Sent Events: id = seq, event = type, data = envelope",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            }
        },
    )
    async def stream(
        request: Request,
        repo: str | None = None,
        since: Annotated[int | None, Query(ge=0, le=MAX_SEQ)] = None,
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
        operations.authorize(op.EVENT_STREAM)  # the read role, before the stream starts
        return await event_stream(
            request,
            service,
            repo=repo,
            since=since,
            last_event_id=last_event_id,
            expires_at=current_principal().expires_at,  # the stream ends with its token
        )
