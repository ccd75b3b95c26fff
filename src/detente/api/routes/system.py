"""The health probe's route: it answers on the event loop, whatever the store does."""

from __future__ import annotations

import asyncio
from typing import Literal

from fastapi import APIRouter

from detente import __version__
from detente.api.supervision import supervisor_for
from detente.errors import DetenteError
from detente.operations import system as op
from detente.operations import wire
from detente.operations.door import Operations

#: Seconds ``/healthz`` waits for the store's head before answering without it.
HEALTH_STORE_TIMEOUT = 2.0


def health_route(r: APIRouter, operations: Operations) -> None:
    """``GET /healthz``."""

    @r.get(op.HEALTH.path, operation_id=op.HEALTH.name)
    async def healthz() -> wire.Health:
        """Liveness and what the background tasks are doing.

        Runs on the event loop and never waits on the store for more than
        ``HEALTH_STORE_TIMEOUT`` seconds, so it answers while requests keep every worker
        thread busy or the store is stuck: ``head`` is then null and ``store`` says
        ``slow`` (or ``unavailable``). ``ok`` is false while a background task is
        restarting after a failure (``tasks`` says which and why); ``storeWatch`` is the
        etcd or PostgreSQL change watch.
        """
        service = operations.service
        supervisor = supervisor_for(service)
        head: int | None = None
        store: Literal["ok", "slow", "unavailable"]
        try:
            head = await asyncio.wait_for(asyncio.to_thread(service.head), HEALTH_STORE_TIMEOUT)
            store = "ok"
        except TimeoutError:
            store = "slow"
        except DetenteError:
            store = "unavailable"
        body: wire.Health = {
            "ok": supervisor.healthy() and store == "ok",
            "version": __version__,
            "head": head,
            "store": store,
            "tasks": supervisor.report(),
        }
        watch = getattr(service.store, "watch_health", None)  # etcd and PostgreSQL
        if watch is not None:
            body["storeWatch"] = watch.to_wire()
        return body
