"""``Idempotency-Key`` on every ``POST /v1/...``: a client's retry gets the original answer.

Follows the IETF HTTPAPI draft "The Idempotency-Key HTTP Header Field"
(draft-ietf-httpapi-idempotency-key-header):

* the first request with a key runs; its response (status, headers, body) is kept when
  it is not a 5xx (a 5xx is transient: a retry runs again);
* a retry with the same key and the same request (method, path, query and body bytes,
  compared by SHA-256) gets the kept response again, marked ``Idempotent-Replayed: true``;
  nothing runs twice;
* the same key with another request is ``422 validation_error`` (field
  ``Idempotency-Key``), and changes nothing;
* a retry arriving while the first request still runs waits for it, then replays it.

Where the responses live: in the store's replay ledger (:mod:`detente.storage.ledger`)
for :data:`RETENTION_SECONDS` (bodies up to :data:`MAX_PERSISTED_BYTES`), so a retry
after a server restart, or sent to another server on the same store, still gets the
original answer; and, as a cache, in the server process's memory (the most recent
:data:`MAX_KEYS` keys, at most :data:`MAX_BYTES` of bodies). Two servers receiving the
same key at the same instant may both run it; the expected-revision check of every
write then answers the second (``409 revision_conflict``) rather than doing the work
twice.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import anyio.to_thread
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from detente.api.body_replay import read_body, replaying
from detente.api.edges import http_problem
from detente.errors import StoreError
from detente.storage.ledger import ReplayLedger

__all__ = [
    "MAX_BYTES",
    "MAX_KEYS",
    "MAX_PERSISTED_BYTES",
    "RETENTION_SECONDS",
    "IdempotencyMiddleware",
]

#: Most keys remembered per server process (least recently used go first).
MAX_KEYS: Final = 10_000
#: Most bytes of kept response bodies per server process.
MAX_BYTES: Final = 64 << 20
#: Seconds a kept answer is replayed (the draft leaves the expiry to the server).
RETENTION_SECONDS: Final = 24 * 3600
#: The largest body kept in the store (a larger one is kept in memory only).
MAX_PERSISTED_BYTES: Final = 1 << 20

_log = logging.getLogger("detente.api.idempotency")

_HEADER: Final = b"idempotency-key"
_VALID_KEY: Final = re.compile(r"[\x21-\x7e]{1,255}")


@dataclass(frozen=True)
class _Kept:
    fingerprint: str
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def to_bytes(self) -> bytes:
        return json.dumps(
            {
                "fingerprint": self.fingerprint,
                "status": self.status,
                "headers": [[_b64(k), _b64(v)] for k, v in self.headers],
                "body": _b64(self.body),
            }
        ).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> _Kept | None:
        try:
            doc = json.loads(data)
            return cls(
                str(doc["fingerprint"]),
                int(doc["status"]),
                [(base64.b64decode(k), base64.b64decode(v)) for k, v in doc["headers"]],
                base64.b64decode(doc["body"]),
            )
        except (ValueError, KeyError, TypeError):
            return None  # unreadable: as if never kept (the request runs)


def _ledger_key(key: str) -> str:
    """The ledger key of a (principal-scoped) idempotency key: bounded, no NUL bytes."""
    return "idem:" + hashlib.sha256(key.encode()).hexdigest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class IdempotencyMiddleware:
    """ASGI middleware keeping the responses of keyed ``POST /v1/...`` requests.

    Sits inside :class:`~detente.api.edges.BodyLimitMiddleware`, which bounds the body
    it reads.

    Args:
        app: the application.
        ledger: the store's replay ledger (answers outlive the process); None: memory only.
        now: the server's clock in POSIX seconds (the service clock).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        ledger: ReplayLedger | None = None,
        now: Callable[[], float] | None = None,
    ) -> None:
        self.app = app
        self.ledger = ledger
        self.now = now
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._bytes = 0
        self._running: dict[str, asyncio.Event] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        if not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        raw = dict(scope["headers"]).get(_HEADER)
        if raw is None:
            await self.app(scope, receive, send)
            return
        key = raw.decode("latin-1")
        if not _VALID_KEY.fullmatch(key):
            response = http_problem(
                422,
                "Idempotency-Key must be 1 to 255 visible ASCII characters",
                code="validation_error",
                field="Idempotency-Key",
            )
            await response(scope, receive, send)
            return
        # Keys are per principal: another caller's key never replays an answer to you.
        principal = scope.get("state", {}).get("principal")
        if principal is not None:
            key = f"{principal.name}\0{key}"
        body = await read_body(receive)
        digest = hashlib.sha256()
        for part in (scope["method"], scope["path"], scope.get("query_string", b"").decode()):
            digest.update(part.encode() + b"\0")
        digest.update(body)
        fingerprint = digest.hexdigest()
        while (running := self._running.get(key)) is not None:
            await running.wait()
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            await self._answer(kept, fingerprint, scope, receive, send)
            return
        # Hold the key before the first await, so a concurrent retry waits for this one.
        done = self._running[key] = asyncio.Event()
        try:
            try:
                kept = await self._stored(key)
            except StoreError as exc:  # nothing ran: the client may retry
                await http_problem(503, exc.detail, code=exc.code)(scope, receive, send)
                return
            if kept is not None:
                await self._answer(kept, fingerprint, scope, receive, send)
                return
            await self._run(key, fingerprint, body, scope, receive, send)
        finally:
            del self._running[key]
            done.set()

    async def _answer(
        self, kept: _Kept, fingerprint: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if kept.fingerprint != fingerprint:
            response = http_problem(
                422,
                "this Idempotency-Key was used for a different request (method, path or "
                "body); use a new key for a new request",
                code="validation_error",
                field="Idempotency-Key",
            )
            await response(scope, receive, send)
            return
        headers = [*kept.headers, (b"idempotent-replayed", b"true")]
        await send({"type": "http.response.start", "status": kept.status, "headers": headers})
        await send({"type": "http.response.body", "body": kept.body, "more_body": False})

    async def _run(
        self, key: str, fingerprint: str, body: bytes, scope: Scope, receive: Receive, send: Send
    ) -> None:
        start: Message | None = None
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        await self.app(scope, replaying(body, receive), capture)
        if start is None or int(start["status"]) >= 500:
            return
        kept = _Kept(fingerprint, int(start["status"]), list(start["headers"]), b"".join(chunks))
        self._keep(key, kept)
        if self.ledger is not None and self.now is not None:
            await self._store(key, kept, self.ledger, self.now() + RETENTION_SECONDS)

    async def _store(self, key: str, kept: _Kept, ledger: ReplayLedger, until: float) -> None:
        """Keep ``kept`` in the store (a body over :data:`MAX_PERSISTED_BYTES` is not)."""
        if len(kept.body) > MAX_PERSISTED_BYTES:
            return
        data = kept.to_bytes()
        await anyio.to_thread.run_sync(lambda: ledger.put(_ledger_key(key), data, expires_at=until))

    async def _stored(self, key: str) -> _Kept | None:
        """The answer another process (or this one before a restart) kept for ``key``."""
        if self.ledger is None or self.now is None:
            return None
        ledger, now = self.ledger, self.now()
        data = await anyio.to_thread.run_sync(lambda: ledger.get(_ledger_key(key), now=now))
        if data is None:
            return None
        kept = _Kept.from_bytes(data)
        if kept is not None:
            self._keep(key, kept)
        return kept

    def _keep(self, key: str, kept: _Kept) -> None:
        if len(kept.body) > MAX_BYTES:
            return
        self._kept[key] = kept
        self._bytes += len(kept.body)
        while len(self._kept) > MAX_KEYS or self._bytes > MAX_BYTES:
            _, dropped = self._kept.popitem(last=False)
            self._bytes -= len(dropped.body)
