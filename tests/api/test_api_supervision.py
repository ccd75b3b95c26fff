"""Background tasks restart after failures, say so in /healthz, and the log has fields."""

from __future__ import annotations

import asyncio
import io
import logging
import socket
import struct
import threading
from pathlib import Path

import httpx
import pytest

from api.conftest import running
from detente import logs
from detente.api import sse
from detente.api.supervision import Supervisor
from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import claim_body, counting_ids, log_records, wait_until

WAIT = 15.0


def test_a_failing_task_is_restarted_with_backoff_and_reported() -> None:
    supervisor = Supervisor(initial_backoff=0.001, max_backoff=0.004)
    runs: list[int] = []

    async def scenario() -> None:
        done = asyncio.Event()

        async def flaky() -> None:
            runs.append(1)
            if len(runs) <= 3:
                raise RuntimeError(f"boom {len(runs)}")
            done.set()
            await asyncio.Event().wait()  # then runs until cancelled

        task = supervisor.start("flaky", flaky)
        await asyncio.wait_for(done.wait(), WAIT)
        assert supervisor.report()["flaky"] == {
            "state": "running",
            "restarts": 3,
            "lastError": "RuntimeError: boom 3",
        }
        assert supervisor.healthy()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert supervisor.report()["flaky"]["state"] == "stopped"

    asyncio.run(scenario())
    assert len(runs) == 4


def test_a_task_waiting_to_restart_makes_the_supervisor_unhealthy() -> None:
    supervisor = Supervisor(initial_backoff=30, max_backoff=30)

    async def scenario() -> None:
        failed = asyncio.Event()

        async def broken() -> None:
            failed.set()
            raise ValueError("always")

        task = supervisor.start("broken", broken)
        await asyncio.wait_for(failed.wait(), WAIT)
        for _ in range(100):  # let the supervisor record the failure (no sleep: yields)
            if not supervisor.healthy():
                break
            await asyncio.sleep(0)
        assert not supervisor.healthy()
        assert supervisor.report()["broken"]["state"] == "backing_off"
        task.cancel()

    asyncio.run(scenario())


class _FlakyStore(SqliteStore):
    """A real SQLite store whose next ``read`` by the event fan-out fails once.

    The fan-out reads the whole log (``repo=None``) from the event loop's executor; the
    subscriber below asks for one repository, so its own catch-up reads pass ``repo``, and
    request handlers run in AnyIO's worker threads: both are left alone. (Thread names alone
    do not tell: uvloop's executor threads are not named ``asyncio_N``.)
    """

    fail_next = False

    def read(self, *, since: int = 0, limit: int = 1000, repo: str | None = None) -> list:  # type: ignore[override,type-arg]
        if (
            self.fail_next
            and repo is None
            and not threading.current_thread().name.startswith("AnyIO")
        ):
            self.fail_next = False
            raise RuntimeError("injected read failure")
        return super().read(since=since, limit=limit, repo=repo)


def test_the_event_fan_out_survives_an_unexpected_error_and_keeps_delivering(
    tmp_path: Path,
) -> None:
    store = _FlakyStore(tmp_path / "d.db")
    service = Service(store, FakeClock(), [RepoConfig("demo")], ids=counting_ids())
    sse.configure(service, sse.StreamSettings(poll_seconds=0.05))
    seen: list[str] = []
    live = threading.Event()
    got_b = threading.Event()
    with running(service) as base, httpx.Client(base_url=base, timeout=WAIT) as http:
        assert http.post("/v1/claims", json=claim_body("a.py")).status_code == 201

        def listen() -> None:
            with http.stream("GET", "/v1/events/stream", params={"since": 0, "repo": "demo"}) as r:
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        seen.append(line)
                        live.set()  # the replay reached us: the fan-out serves from now on
                        if "b.py" in line:
                            got_b.set()
                            return

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        assert live.wait(WAIT)
        store.fail_next = True  # the fan-out's next read of the log blows up
        assert http.post("/v1/claims", json=claim_body("b.py")).status_code == 201
        assert got_b.wait(WAIT), f"no event of claim b after {len(seen)} events"

        # b may reach the subscriber through its own catch-up read before the fan-out's
        # next read (the failing one) happens: wait for the fan-out's restart, bounded.
        def restarted() -> bool:
            return bool(http.get("/healthz").json()["tasks"]["sse-fanout"]["restarts"] >= 1)

        assert wait_until(restarted, timeout=WAIT)
        fanout = http.get("/healthz").json()["tasks"]["sse-fanout"]
    assert store.fail_next is False  # the failure did happen
    assert fanout["restarts"] == 1 and fanout["lastError"] == "RuntimeError: injected read failure"


def test_healthz_lists_the_sweeper_and_the_store(tmp_path: Path) -> None:
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    with running(service, sweep_interval=0.05) as base:
        body = httpx.get(f"{base}/healthz", timeout=WAIT).json()
    assert body["ok"] is True and body["store"] == "ok" and body["head"] == 0
    assert body["tasks"]["sweeper"]["state"] == "running"


def test_every_request_has_one_access_log_line_with_fields(http: httpx.Client) -> None:
    with log_records("detente.access") as seen:

        def lines() -> list[logging.LogRecord]:
            return [r for r in seen if r.name == "detente.access"]

        http.get("/v1/claims")
        http.get("/v1/nothing")
        # The line is written once the response is sent: wait for it, bounded.
        assert wait_until(lambda: len(lines()) >= 2, timeout=WAIT)
    assert [(r.method, r.path, r.status) for r in lines()] == [  # type: ignore[attr-defined]
        ("GET", "/v1/claims", 200),
        ("GET", "/v1/nothing", 404),
    ]
    assert all(r.duration_ms >= 0 for r in lines())  # type: ignore[attr-defined]


def test_the_log_format_writes_structured_fields_as_logfmt() -> None:
    out = io.StringIO()
    handler = logs.configure("info", stream=out)
    try:
        logging.getLogger("detente.tasks").warning(
            "task %s failed", "sweeper", extra={"task": "sweeper", "error": 'a "quoted" thing'}
        )
        logging.getLogger("detente.tasks").debug("hidden at info")
    finally:  # give the loggers back to pytest's capture
        for name in ("detente", "uvicorn"):
            logger = logging.getLogger(name)
            logger.removeHandler(handler)
            logger.propagate = True
            logger.setLevel(logging.NOTSET)
    line = out.getvalue()
    assert line.count("\n") == 1
    assert (
        'WARNING detente.tasks task sweeper failed task=sweeper error="a \\"quoted\\" thing"'
        in line
    )
    with pytest.raises(ValueError, match="unknown log level"):
        logs.configure("loud")


def test_a_request_path_cannot_forge_a_log_line_or_write_control_characters(
    http: httpx.Client,
) -> None:
    out = io.StringIO()
    handler = logs.configure("info", stream=out)
    try:
        forged = "clm_x\n2026-11-30T20:00:00.000Z INFO detente.access FAKE\x1b[31m\x00"
        http.get(
            "/v1/claims/"
            + forged.replace("\n", "%0A").replace("\x1b", "%1B").replace("\x00", "%00")
        )
    finally:  # give the loggers back to pytest's capture
        for name in ("detente", "uvicorn"):
            logger = logging.getLogger(name)
            logger.removeHandler(handler)
            logger.propagate = True
            logger.setLevel(logging.NOTSET)
    lines = [ln for ln in out.getvalue().splitlines() if "detente.access" in ln]
    assert len(lines) == 1, out.getvalue()
    assert "\x1b" not in out.getvalue() and "\x00" not in out.getvalue()
    assert "clm_x\\n2026-11-30T20:00:00.000Z INFO detente.access FAKE\\x1b[31m\\x00" in lines[0]


def test_a_stream_client_that_vanishes_is_dropped_without_a_send_error_flood(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    sse.configure(service, sse.StreamSettings(heartbeat_seconds=0.01, poll_seconds=0.01))
    with caplog.at_level(logging.WARNING, logger="asyncio"), running(service) as base:
        host, port = base.removeprefix("http://").rsplit(":", 1)
        client = socket.create_connection((host, int(port)), timeout=WAIT)
        client.sendall(b"GET /v1/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert client.recv(64).startswith(b"HTTP/1.1 200")
        assert wait_until(lambda: sse.stats(service)["subscribers"] == 1, timeout=WAIT)
        # Vanish: a reset, not a polite close, while pings and events keep coming.
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
        with httpx.Client(base_url=base, timeout=WAIT) as http:
            for name in ("a.py", "b.py", "c.py"):
                http.post("/v1/claims", json=claim_body(name, agent=name))
        assert wait_until(lambda: sse.stats(service)["subscribers"] == 0, timeout=WAIT)
    assert not [r for r in caplog.records if "socket.send() raised" in r.getMessage()]


def test_healthz_reports_the_fan_out_idle_not_stopped_once_the_last_stream_closed(
    tmp_path: Path,
) -> None:
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    sse.configure(service, sse.StreamSettings(poll_seconds=0.05))
    with running(service) as base, httpx.Client(base_url=base, timeout=WAIT) as http:
        assert http.post("/v1/claims", json=claim_body("a.py")).status_code == 201
        with http.stream("GET", "/v1/events/stream", params={"since": 0, "repo": "demo"}) as r:
            lines = r.iter_lines()
            while not next(lines).startswith("data: "):
                pass
            assert http.get("/healthz").json()["tasks"]["sse-fanout"]["state"] == "running"

        def left() -> bool:
            return bool(http.get("/healthz").json()["tasks"]["sse-fanout"]["state"] != "running")

        assert wait_until(left, timeout=WAIT)
        body = http.get("/healthz").json()
    assert body["tasks"]["sse-fanout"]["state"] == "idle"
    assert body["ok"] is True
