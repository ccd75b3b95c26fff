"""The connection of the etcd store: a private event loop and endpoint failover.

aetcd is asyncio-only; :class:`EtcdConnection` runs it on a private event loop thread
(:meth:`~EtcdConnection.run` is the synchronous bridge the store's facade is built on) and
keeps one aetcd client per cluster member.

Failover: requests go to one endpoint; on ``UNAVAILABLE``/deadline errors (member down,
no leader) the next endpoint is tried until the caller's failover budget passes (the
store's is :data:`FAILOVER_SECONDS`), then the request fails with ``store_unavailable``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

import aetcd
import grpc

from detente.errors import StoreError

T = TypeVar("T")

#: Seconds a request keeps failing over across endpoints before ``store_unavailable``
#: (long enough for a leader election, short enough that a client hears of an
#: unreachable cluster within 5 s).
FAILOVER_SECONDS = 4.0
#: Seconds one RPC may take (gRPC deadline; an attempt never outlives the failover budget).
RPC_TIMEOUT = 3.0
_RETRYABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}


def _reason(exc: BaseException) -> str:
    """One line saying why an etcd call failed (never a raw gRPC dump)."""
    if isinstance(exc, grpc.aio.AioRpcError):
        return f"{exc.code().name}: {exc.details() or 'no details'}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    return " ".join(str(exc).split()) or type(exc).__name__


class EtcdConnection:
    """The members of one etcd cluster, reached from a private event loop thread.

    Args:
        endpoints: ``(host, port)`` of each member's client URL.

    Clients are created on first use; nothing is contacted until a request is made.
    """

    def __init__(self, endpoints: Sequence[tuple[str, int]]) -> None:
        self._endpoints = list(endpoints)
        self._current = 0
        self._clients: dict[int, aetcd.Client] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="detente-etcd", daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------------ sync bridge

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = FAILOVER_SECONDS + 10) -> T:
        """Run ``coro`` on the private loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``coro`` on the private loop without waiting for it."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    # ------------------------------------------------------------------ endpoints

    @property
    def current(self) -> int:
        """The index of the endpoint requests go to."""
        return self._current

    def skip(self, index: int) -> None:
        """Move on to the endpoint after ``index`` (unless another request already did)."""
        if self._current == index:
            self._current = (index + 1) % len(self._endpoints)

    def client(self, index: int) -> aetcd.Client:
        """The aetcd client of endpoint ``index`` (created, unconnected, on first use)."""
        client = self._clients.get(index)
        if client is None:
            host, port = self._endpoints[index]
            client = aetcd.Client(
                host=host,
                port=port,
                timeout=RPC_TIMEOUT,
                options={"grpc.max_receive_message_length": 64 * 1024 * 1024},
            )
            self._clients[index] = client
        return client

    async def call(
        self, op: Callable[[aetcd.Client], Awaitable[T]], *, failover_seconds: float
    ) -> T:
        """Run ``op`` on the current endpoint, failing over on unavailability.

        Raises:
            StoreError: ``store_unavailable`` when ``op`` fails for another reason, or
                no endpoint answered within ``failover_seconds``.
        """
        deadline = time.monotonic() + failover_seconds
        attempt = 0
        while True:
            index = self._current
            client = self.client(index)
            try:
                left = max(deadline - time.monotonic(), 0.05)
                return await asyncio.wait_for(self._attempt(client, op), left)
            except (grpc.aio.AioRpcError, aetcd.ClientError, TimeoutError) as exc:
                retryable = isinstance(
                    exc, aetcd.ConnectionFailedError | aetcd.ConnectionTimeoutError | TimeoutError
                ) or (isinstance(exc, grpc.aio.AioRpcError) and exc.code() in _RETRYABLE)
                if not retryable:
                    raise StoreError(f"{self.name}: request failed: {_reason(exc)}") from exc
                if time.monotonic() >= deadline:
                    raise StoreError(
                        f"{self.name}: no member answered within {failover_seconds:g} s "
                        f"(last: {_reason(exc)})"
                    ) from exc
            attempt += 1
            self.skip(index)
            await asyncio.sleep(min(0.05 * attempt, 0.5))

    @staticmethod
    async def _attempt(client: aetcd.Client, op: Callable[[aetcd.Client], Awaitable[T]]) -> T:
        await client.connect()
        return await op(client)

    @property
    def name(self) -> str:
        """``etcd at host:port,host:port`` (for messages)."""
        return "etcd at " + ",".join(f"{h}:{p}" for h, p in self._endpoints)

    # ------------------------------------------------------------------ shutdown

    async def close_clients(self) -> None:
        """Close every client (on the loop; a dead member's channel is given up on)."""
        for client in self._clients.values():
            try:
                await asyncio.wait_for(client.close(), 2)
            except Exception:  # closing a channel to a dead member
                continue

    def stop(self) -> None:
        """Stop the private loop and its thread."""
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
