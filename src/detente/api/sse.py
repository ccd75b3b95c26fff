"""``GET /v1/events/stream``: the live event stream as Server-Sent Events.

Each SSE message has ``id:`` = the event's global sequence, ``event:`` = its type and
``data:`` = the event's JSON envelope. The stream starts after ``Last-Event-ID`` (a
reconnecting ``EventSource`` sends it), else after ``since``, else at the current head
(only new events). Delivery re-reads the log from the last sequence sent, so each event
arrives once and in order however wake-ups interleave. A position beyond the log's head
cannot be served (the store was reset or the client confused servers): the stream then
sends ``event: resync`` with ``{"position": head}`` and continues from there. Comment
pings every 15 s keep proxies from closing an idle stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Request
from sse_starlette.sse import EventSourceResponse

from detente.service import Service

_BATCH = 500
_POLL_SECONDS = 1.0


def _start_position(
    head: int, since: int | None, last_event_id: str | None
) -> tuple[int, str | None]:
    """Where to start, and the reason for a resync (None when the position is served)."""
    if last_event_id is not None and last_event_id.strip():
        try:
            position = int(last_event_id.strip())
        except ValueError:
            return head, f"Last-Event-ID {last_event_id!r} is not a sequence number"
        if position < 0:
            return head, f"Last-Event-ID {position} is negative"
    elif since is not None:
        position = since
    else:
        return head, None
    if position > head:
        return head, f"position {position} is beyond the log's head {head}"
    return position, None


async def event_stream(
    request: Request,
    service: Service,
    *,
    repo: str | None,
    since: int | None,
    last_event_id: str | None,
) -> EventSourceResponse:
    """Build the SSE response (see the module docstring)."""
    if repo is not None:
        service.events(since=0, limit=1, repo=repo)  # validates the repo name
    head = await asyncio.to_thread(service.head)
    position, resync_reason = _start_position(head, since, last_event_id)

    async def messages() -> AsyncIterator[dict[str, Any]]:
        nonlocal position
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        def wake_up(_seq: int) -> None:
            loop.call_soon_threadsafe(wake.set)

        unlisten = service.broadcaster.listen(wake_up)
        try:
            if resync_reason is not None:
                yield {
                    "event": "resync",
                    "id": str(position),
                    "data": json.dumps({"position": position, "reason": resync_reason}),
                }
            while True:
                wake.clear()
                batch = await asyncio.to_thread(
                    service.store.read, since=position, limit=_BATCH, repo=repo
                )
                for event in batch:
                    yield {
                        "id": str(event.seq),
                        "event": event.type,
                        "data": json.dumps(event.to_wire(), separators=(",", ":")),
                    }
                    position = event.seq
                if len(batch) == _BATCH:
                    continue
                if await request.is_disconnected():
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), timeout=_POLL_SECONDS)
        finally:
            unlisten()

    return EventSourceResponse(messages(), ping=15)
