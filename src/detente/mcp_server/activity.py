"""The recent tool calls of each session, for ``detente://activity/current``.

An in-memory ring buffer per MCP server process: the last ``per_session`` calls of at
most ``max_sessions`` sessions (least recently active dropped first). Nothing is
persisted: the event log is the record; this is a live view of what agents are doing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from detente.clock import format_time

__all__ = ["Activity", "ToolCall"]


@dataclass(frozen=True)
class ToolCall:
    """One tool call: when, which tool, its file/symbol scope and how it ended.

    Attributes:
        at: when the call finished (UTC).
        tool: the tool's name.
        scope: the paths, globs or symbols the call was about (may be empty).
        outcome: ``ok``, ``caution``, or the error code it ended with.
    """

    at: datetime
    tool: str
    scope: tuple[str, ...]
    outcome: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "at": format_time(self.at),
            "tool": self.tool,
            "scope": list(self.scope),
            "outcome": self.outcome,
        }


class Activity:
    """Bounded per-session history of tool calls; thread-safe.

    Args:
        per_session: calls kept per session (oldest dropped first).
        max_sessions: sessions kept (the least recently active dropped first).
        max_scope: scope entries kept per call.
    """

    def __init__(self, per_session: int = 20, max_sessions: int = 200, max_scope: int = 20):
        self.per_session = per_session
        self.max_sessions = max_sessions
        self.max_scope = max_scope
        self._calls: OrderedDict[str, deque[ToolCall]] = OrderedDict()
        self._lock = threading.Lock()

    def record(
        self, session_id: str, tool: str, scope: Sequence[str], outcome: str, at: datetime
    ) -> None:
        """Remember one call of ``session_id``."""
        call = ToolCall(at, tool, tuple(scope[: self.max_scope]), outcome)
        with self._lock:
            calls = self._calls.pop(session_id, None)
            if calls is None:
                calls = deque(maxlen=self.per_session)
            calls.append(call)
            self._calls[session_id] = calls
            while len(self._calls) > self.max_sessions:
                self._calls.popitem(last=False)

    def sessions(self) -> dict[str, list[ToolCall]]:
        """Every remembered session's calls, oldest first (most recently active last)."""
        with self._lock:
            return {sid: list(calls) for sid, calls in self._calls.items()}
