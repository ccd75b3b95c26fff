"""Background tasks that never die silently: restart with backoff, logged, reported.

The server runs a few long-lived tasks on its event loop: the lease sweeper and the SSE
fan-out (which itself wakes on the store's watch). A task that raises is logged on
``detente.tasks`` (WARNING, with the traceback), marked ``backing_off`` and restarted
after a delay that doubles from :attr:`Supervisor.initial_backoff` up to
:attr:`Supervisor.max_backoff` (reset once a run lasted longer than the maximum).
``GET /healthz`` lists every task with its state, restart count and last error.

A task that returns, or is cancelled for good, is ``stopped``; one its owner put to rest
because nothing needs it now (the fan-out once the last stream closed; it starts again
with the next one) is ``idle``. Neither is a fault.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Supervisor", "TaskHealth", "supervisor_for"]

_log = logging.getLogger("detente.tasks")


@dataclass
class TaskHealth:
    """What ``/healthz`` says about one task.

    Attributes:
        name: the task's name (``sweeper``, ``sse-fanout``).
        state: ``running``, ``backing_off`` (failed, waiting to restart), ``idle`` (put to
            rest until it is needed again) or ``stopped``.
        restarts: how many times it failed and was restarted.
        last_error: ``"Type: message"`` of the last failure, or None.
    """

    name: str
    state: Literal["running", "backing_off", "idle", "stopped"] = "running"
    restarts: int = 0
    last_error: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {"state": self.state, "restarts": self.restarts, "lastError": self.last_error}


class Supervisor:
    """Starts named tasks and keeps them running (see the module docstring).

    Args:
        initial_backoff: seconds before the first restart.
        max_backoff: the longest wait between restarts, in seconds.
    """

    def __init__(self, *, initial_backoff: float = 0.5, max_backoff: float = 30.0) -> None:
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.tasks: dict[str, TaskHealth] = {}
        self._resting: set[str] = set()

    def start(self, name: str, body: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
        """Run ``body()`` as task ``name`` on the running loop, restarting it on failure.

        Returns:
            The asyncio task; cancel it to stop the task for good.
        """
        health = self.tasks[name] = TaskHealth(name)
        self._resting.discard(name)
        return asyncio.create_task(self._supervise(health, body), name=f"detente:{name}")

    def rest(self, name: str, task: asyncio.Task[None]) -> None:
        """Cancel task ``name`` because nothing needs it now: ``/healthz`` reads ``idle``
        (not ``stopped``) until it is started again."""
        self._resting.add(name)
        task.cancel()

    def report(self) -> dict[str, dict[str, Any]]:
        """Every task's health, by name (``/healthz``'s ``tasks``)."""
        return {name: health.to_wire() for name, health in sorted(self.tasks.items())}

    def healthy(self) -> bool:
        """False while any task is waiting to restart after a failure."""
        return all(h.state != "backing_off" for h in self.tasks.values())

    async def _supervise(self, health: TaskHealth, body: Callable[[], Awaitable[None]]) -> None:
        loop = asyncio.get_running_loop()
        delay = self.initial_backoff
        while True:
            health.state = "running"
            began = loop.time()
            try:
                await body()
            except asyncio.CancelledError:
                health.state = "idle" if health.name in self._resting else "stopped"
                raise
            except Exception as exc:
                if loop.time() - began > self.max_backoff:
                    delay = self.initial_backoff  # it ran well for a while: start over
                health.restarts += 1
                health.last_error = f"{type(exc).__name__}: {exc}"
                health.state = "backing_off"
                _log.warning(
                    "task %s failed; restarting in %.1f s",
                    health.name,
                    delay,
                    exc_info=exc,
                    extra={"task": health.name, "restarts": health.restarts, "backoff_s": delay},
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.max_backoff)
            else:
                health.state = "stopped"
                return


_supervisors: weakref.WeakKeyDictionary[Any, Supervisor] = weakref.WeakKeyDictionary()


def supervisor_for(owner: Any) -> Supervisor:
    """The supervisor of ``owner`` (one per service: the app and the SSE hub share it)."""
    found = _supervisors.get(owner)
    if found is None:
        found = _supervisors[owner] = Supervisor()
    return found
