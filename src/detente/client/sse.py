"""One message of the event stream (``GET /v1/events/stream``), whoever delivered it."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["SseMessage"]


class SseMessage(NamedTuple):
    """One Server-Sent Events message (or one polled event shaped like it).

    Attributes:
        id: the ``id:`` field (the event's global sequence), or None.
        event: the ``event:`` field (the event type, or ``resync``); ``message`` if absent.
        data: the ``data:`` lines joined by newlines (an event's JSON envelope).
    """

    id: str | None
    event: str
    data: str
