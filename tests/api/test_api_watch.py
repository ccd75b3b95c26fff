"""The hardened watch stream over real HTTP: slow consumers, retention, heartbeats, filters."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from detente.api import sse
from detente.api.sse import StreamSettings
from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeScope
from detente.eventlog.envelope import StoredEvent
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore
from storage.live import parse_sse, serving, wait_until

from support import counting_ids, seed


def _service(store: MemoryStore | None = None, **settings: float) -> Service:
    service = Service(store or MemoryStore(), FakeClock(), [RepoConfig("demo")], ids=counting_ids())
    sse.configure(service, StreamSettings(**settings))  # type: ignore[arg-type]
    return service


def _dechunk(raw: bytes) -> str:
    """The body of a raw HTTP/1.1 response (chunked or not) as text."""
    head, _, body = raw.partition(b"\r\n\r\n")
    if b"chunked" not in head.lower():
        return body.decode()
    out = bytearray()
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2 :]
    return out.decode()


def _messages(text: str) -> list[dict[str, str]]:
    return [m for m in parse_sse(iter(text.replace("\r\n", "\n").split("\n"))) if ":" not in m]


@pytest.mark.slow
def test_a_slow_consumer_is_cut_off_with_a_resync_hint_while_100_fast_ones_get_everything() -> None:
    service = _service(buffer_events=16, send_timeout_seconds=60)
    fast_count, extra_claims = 100, 3
    progress = [0] * fast_count
    received: list[list[int]] = [[] for _ in range(fast_count)]
    final: list[int] = []
    connected = threading.Event()

    with serving(service) as base:

        async def consume(i: int, client: httpx.AsyncClient) -> None:
            async with client.stream("GET", "/v1/events/stream", params={"since": 0}) as r:
                lines = r.aiter_lines()
                message: dict[str, str] = {}
                async for line in lines:
                    if line:
                        key, _, value = line.partition(":")
                        message[key] = value.strip()
                        continue
                    if "id" in message:
                        received[i].append(int(message["id"]))
                        progress[i] = received[i][-1]
                        if final and progress[i] >= final[0]:
                            return
                    message = {}

        async def fast_consumers() -> None:
            limits = httpx.Limits(max_connections=fast_count + 5)
            async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
                tasks = [asyncio.create_task(consume(i, client)) for i in range(fast_count)]
                connected.set()
                await asyncio.wait_for(asyncio.gather(*tasks), timeout=120)

        fast = threading.Thread(target=asyncio.run, args=(fast_consumers(),))
        fast.start()
        assert connected.wait(timeout=10)
        wait_until(lambda: sse.stats(service)["subscribers"] == fast_count, 20, "fast ones join")

        url = urlsplit(base)
        slow = socket.socket()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.connect((url.hostname, url.port))
        slow.sendall(b"GET /v1/events/stream?since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        wait_until(lambda: sse.stats(service)["subscribers"] == fast_count + 1, 20, "slow joins")

        def write_claim(n: int) -> None:
            service.claims.open_claim(seed(f"f{n}.py", objective=f"{n} " + "x" * 3900))
            head = service.head()
            wait_until(lambda: min(progress) >= head, 30, f"fast consumers reach {head}")

        n = 0
        while sse.stats(service)["cutOff"] == 0:  # the slow one's buffers fill up
            assert n < 3000, "the slow consumer was never cut off"
            write_claim(n)
            n += 1
        final.append(service.head() + 2 * extra_claims)
        for _ in range(extra_claims):
            write_claim(n)
            n += 1
        fast.join(timeout=120)

        slow.settimeout(30)
        raw = bytearray()
        while chunk := slow.recv(65536):
            raw += chunk
        slow.close()
        slow_messages = _messages(_dechunk(bytes(raw)))

        head = service.head()
        assert head == final[0]
        for i in range(fast_count):
            assert received[i] == list(range(1, head + 1)), f"fast consumer {i}"
        *events, hint = slow_messages
        got = [int(m["id"]) for m in events]
        assert got == list(range(1, len(got) + 1)) and len(got) < head
        assert hint["event"] == "resync"
        body = json.loads(hint["data"])
        assert body["code"] == "slow_consumer" and body["position"] == got[-1]
        assert sse.stats(service)["cutOff"] == 1

        # Reconnecting with the hinted position replays exactly what it missed.
        with (
            httpx.Client(base_url=base, timeout=30) as client,
            client.stream(
                "GET", "/v1/events/stream", headers={"Last-Event-ID": str(body["position"])}
            ) as r,
        ):
            rest: list[int] = []
            for message in parse_sse(r.iter_lines()):
                if "id" in message:
                    rest.append(int(message["id"]))
                    if rest[-1] == head:
                        break
        assert rest == list(range(body["position"] + 1, head + 1))


class _RetainingStore(MemoryStore):
    """A memory store that no longer serves events before ``first``."""

    def __init__(self, first: int) -> None:
        super().__init__()
        self.first = first

    def first_seq(self) -> int:
        return self.first

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]:
        return super().read(since=max(since, self.first - 1), limit=limit, repo=repo)


def _first_messages(base: str, count: int, **kw: object) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    with (
        httpx.Client(base_url=base, timeout=10) as client,
        client.stream("GET", "/v1/events/stream", **kw) as r,  # type: ignore[arg-type]
    ):
        for message in parse_sse(r.iter_lines()):
            if ":" not in message:
                out.append(message)
            if len(out) == count:
                return out
    return out


def test_a_position_older_than_the_retained_log_gets_a_resync_never_a_silent_gap() -> None:
    service = _service(_RetainingStore(first=11))
    for n in range(8):
        service.claims.open_claim(seed(f"r{n}.py"))
    with serving(service) as base:
        resync, first = _first_messages(base, 2, headers={"Last-Event-ID": "3"})
        assert resync["event"] == "resync"
        body = json.loads(resync["data"])
        assert (body["code"], body["position"]) == ("position_unavailable", 10)
        assert first["id"] == "11"
        # A retained position is served without a resync.
        [served] = _first_messages(base, 1, params={"since": 12})
        assert served["id"] == "13"


def test_an_idle_stream_carries_heartbeat_comments() -> None:
    service = _service(heartbeat_seconds=0.1)
    with (
        serving(service) as base,
        httpx.Client(base_url=base, timeout=10) as client,
        client.stream("GET", "/v1/events/stream") as r,
    ):
        comments = 0
        for message in parse_sse(r.iter_lines()):
            assert ":" in message, "an empty log sends no event, only comments"
            comments += 1
            if comments == 3:
                break
    assert comments == 3


def _ids(base: str, count: int, params: dict[str, str]) -> Iterator[tuple[str, str]]:
    for message in _first_messages(base, count, params={"since": 0, **params}):
        yield message["event"], json.loads(message["data"])["subject"]


def test_filters_by_claim_path_prefix_and_event_type_deliver_only_matching_events() -> None:
    service = _service()
    # Objectives with no word in common: a claim announced as similar to b would name b
    # in its payload, and the claim filter delivers every event that names the claim.
    a = service.claims.open_claim(seed("src/api/**", agent="alice", objective="alpha")).claim
    b = service.claims.open_claim(seed("docs/guide.md", agent="bob", objective="bravo")).claim
    c = service.claims.open_claim(  # overlaps a
        seed("src/api/routes.py", agent="carol", objective="charlie")
    ).claim
    service.claims.change_scope(
        ChangeScope(b.id, expected_claim_revision=b.revision, add_paths=("docs/faq.md",))
    )
    with serving(service) as base:
        by_claim = list(_ids(base, 3, {"claim": b.id}))
        assert by_claim == [
            ("claim.announced", f"claim/{b.id}"),
            ("claim.activated", f"claim/{b.id}"),
            ("claim.scope_changed", f"claim/{b.id}"),
        ]
        by_path = list(_ids(base, 3, {"path": "docs/"}))
        assert [t for t, _ in by_path][-1] == "claim.scope_changed"
        assert {s for _, s in by_path} == {f"claim/{b.id}"}
        # A prefix inside a recursive glob matches that claim, not the file claim beside it.
        by_prefix = list(_ids(base, 2, {"path": "src/api/x/"}))
        assert by_prefix == [
            ("claim.announced", f"claim/{a.id}"),
            ("claim.activated", f"claim/{a.id}"),
        ]
        types = [t for t, _ in _ids(base, 3, {"type": "claim.activated,meeting.*"})]
        assert types == ["claim.activated", "claim.activated", "meeting.opened"]
        [(kind, subject)] = _ids(base, 1, {"claim": c.id, "type": "meeting.*"})
        assert kind == "meeting.opened" and subject.startswith("meeting/")
        bad = httpx.get(f"{base}/v1/events/stream", params={"path": "../x"})
        assert bad.status_code == 422 and bad.json()["code"] == "validation_error"
