"""Server-Sent Events, parsed line by line (the client side of ``GET /v1/events/stream``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["SseMessage", "iter_sse"]


@dataclass(frozen=True)
class SseMessage:
    """One Server-Sent Events message.

    Attributes:
        id: the ``id:`` field (the event's global sequence), or None.
        event: the ``event:`` field (the event type, or ``resync``); ``message`` if absent.
        data: the ``data:`` lines joined by newlines.
    """

    id: str | None
    event: str
    data: str


def iter_sse(lines: Iterator[str]) -> Iterator[SseMessage]:
    """Parse an ``text/event-stream`` line by line (comments and retry fields skipped).

    Args:
        lines: decoded lines without their line terminators.

    Yields:
        One :class:`SseMessage` per dispatched message (a blank line ends a message).
    """
    msg_id: str | None = None
    event = ""
    data: list[str] = []
    for line in lines:
        if not line:
            if data or event:
                yield SseMessage(msg_id, event or "message", "\n".join(data))
            msg_id, event, data = None, "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "id":
            msg_id = value
        elif name == "event":
            event = value
        elif name == "data":
            data.append(value)
