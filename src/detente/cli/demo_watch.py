"""The demo's event-stream watcher: follows ``GET /v1/events/stream`` in a thread and
lets the story wait, bounded, for what it expects to see."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from detente.client import Client, SseMessage
from detente.errors import DetenteError

__all__ = ["DemoFailed", "Watcher"]


class DemoFailed(DetenteError):
    """A step of the demo did not behave as documented."""

    code = "demo_failed"


class Watcher:
    """Follows the event stream in a thread; the demo waits on what it has seen."""

    def __init__(self, client: Client, say: Callable[[str], None]) -> None:
        self.client = client
        self.events: list[dict[str, Any]] = []
        self._say = say
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="detente-demo-watch", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        from detente.cli.views import event_line

        def reconnecting(position: int, reason: str) -> None:
            if self._stop.is_set():
                raise _Stopped
            if not reason.startswith("ReadTimeout"):
                self._say(f"  [stream] reconnecting after #{position}: {reason}")

        try:
            # A short read timeout makes the watcher notice stop() within half a second
            # (a quiet stream then simply resumes from its Last-Event-ID).
            messages = self.client.watch(
                since=0, on_reconnect=reconnecting, give_up_after=10, read_timeout=0.5
            )
            for message in messages:
                self._take(message, event_line)
                if self._stop.is_set():
                    return
        except _Stopped:
            return
        except BaseException as exc:  # surfaced by wait_for
            if not self._stop.is_set():
                self.error = exc
        finally:
            with self._cond:
                self._cond.notify_all()

    def _take(self, message: SseMessage, line: Callable[[dict[str, Any]], str]) -> None:
        if message.event == "resync":
            return
        event = json.loads(message.data)
        self._say(f"  [stream] {line(event)}")
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def wait_for(
        self, what: str, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float
    ) -> float:
        """Block until ``predicate(events)`` holds; return the seconds waited."""
        start = time.monotonic()
        with self._cond:
            while not predicate(self.events):
                left = timeout - (time.monotonic() - start)
                if self.error is not None:
                    raise DemoFailed(
                        f"the event stream failed while waiting for {what}: {self.error}"
                    )
                if left <= 0:
                    raise DemoFailed(f"timed out after {timeout:.0f} s waiting for {what}")
                self._cond.wait(min(left, 0.5))
        return time.monotonic() - start

    def stop(self) -> None:
        """Stop following (a no-op for the thread when :meth:`start` never ran)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.client.close()


class _Stopped(Exception):
    pass
