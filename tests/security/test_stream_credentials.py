"""Event streams bound to credentials: a stream whose token expired (by the server's clock)
delivers nothing more, says why and ends; a reconnection with a fresh token and
``Last-Event-ID`` misses nothing. The fake clock moves time; every wait is bounded."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from httpx_sse import EventSource, ServerSentEvent

from api.conftest import running
from detente.client.credentials import credentials
from detente.client.http import HttpClient
from detente.clock import FakeClock, SystemClock
from detente.config import Roles
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from oidc_issuer import Issuer, running_issuer

from support import claim_body, counting_ids

AUD = "detente-test"
WAIT = 20.0  # seconds any one message may take to arrive


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Issuer, FakeClock]]:
    clock = FakeClock(SystemClock().now())  # tokens carry real times: start the clock there
    service = Service(
        SqliteStore(tmp_path / "d.db"), clock, [RepoConfig("demo")], ids=counting_ids()
    )
    with running_issuer("RS256") as issuer:
        gate = AuthGate(
            oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)),
            roles=Roles({"claim": ("alice",)}),
        )
        with running(service, auth=gate) as base:
            yield base, issuer, clock
    service.store.close()


def _reader(
    base: str, token: str, last_event_id: int
) -> tuple[queue.Queue[ServerSentEvent | None], threading.Thread]:
    """Read the stream in a thread: each message into the queue, None when it ends."""
    messages: queue.Queue[ServerSentEvent | None] = queue.Queue()
    headers = {"Authorization": f"Bearer {token}", "Last-Event-ID": str(last_event_id)}

    def read() -> None:
        with (
            httpx.Client(timeout=httpx.Timeout(30.0)) as http,
            http.stream("GET", f"{base}/v1/events/stream", headers=headers) as response,
        ):
            for sse in EventSource(response).iter_sse():
                messages.put(sse)
        messages.put(None)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return messages, thread


def _open(base: str, issuer: Issuer, path: str) -> int:
    headers = {"Authorization": f"Bearer {issuer.token('alice', aud=AUD, expires_in=3600)}"}
    answer = httpx.post(f"{base}/v1/claims", json=claim_body(path), headers=headers, timeout=20)
    assert answer.status_code == 201, answer.text
    return int(httpx.get(f"{base}/healthz", timeout=20).json()["head"])


def _until(messages: queue.Queue[ServerSentEvent | None], done: Callable[[str], bool]) -> None:
    while True:
        sse = messages.get(timeout=WAIT)
        assert sse is not None, "the stream ended early"
        if done(sse.id):
            return


def test_a_stream_ends_when_its_token_expires_and_resumes_with_a_fresh_one(
    served: tuple[str, Issuer, FakeClock],
) -> None:
    base, issuer, clock = served
    first = _open(base, issuer, "a.py")
    messages, thread = _reader(base, issuer.token("alice", aud=AUD, expires_in=300), 0)
    _until(messages, lambda seq: seq == str(first))

    clock.advance(330)  # past the token's exp (issued a few seconds after the clock started)
    second = _open(base, issuer, "b.py")  # an event the expired stream must not deliver

    ending = messages.get(timeout=WAIT)
    assert ending is not None and ending.event == "credentials_expired"
    assert json.loads(ending.data) == {
        "position": first,
        "code": "credentials_expired",
        "reason": json.loads(ending.data)["reason"],
    }
    assert messages.get(timeout=WAIT) is None  # the server ended the stream
    thread.join(timeout=WAIT)

    fresh, _ = _reader(base, issuer.token("alice", aud=AUD, expires_in=3600), first)
    replayed = fresh.get(timeout=WAIT)
    assert replayed is not None and int(replayed.id) == first + 1
    _until(fresh, lambda seq: seq == str(second))
    clock.advance(3600)  # the fresh token ends too: so does its stream
    _open(base, issuer, "c.py")
    last = fresh.get(timeout=WAIT)
    assert last is not None and last.event == "credentials_expired"
    assert fresh.get(timeout=WAIT) is None


def test_the_client_reconnects_with_the_fresh_token_of_its_token_file(
    served: tuple[str, Issuer, FakeClock], tmp_path: Path
) -> None:
    base, issuer, clock = served
    first = _open(base, issuer, "a.py")
    token_file = tmp_path / "token"
    token_file.write_text(issuer.token("alice", aud=AUD, expires_in=300))
    auth = credentials({"DETENTE_TOKEN_FILE": str(token_file)})
    client = HttpClient(httpx.Client(base_url=base, auth=auth, timeout=30.0))
    reasons: list[str] = []
    events = client.watch(since=0, on_reconnect=lambda _pos, why: reasons.append(why))
    seen = [next(events).id for _ in range(first)]

    token_file.write_text(issuer.token("alice", aud=AUD, expires_in=3600))
    clock.advance(330)  # past the first token's exp
    second = _open(base, issuer, "b.py")
    later = [next(events).id for _ in range(second - first)]
    events.close()  # type: ignore[attr-defined]  # a generator: closes its stream
    client.close()

    assert seen == [str(s) for s in range(1, first + 1)]
    assert later == [str(s) for s in range(first + 1, second + 1)]  # nothing lost or repeated
    assert reasons == ["the stream's token expired"]
