"""The stream's chunk writer: an eager send completes in the caller, a blocked one is
finished by a task, later chunks wait for it in order, closing cancels it; and the fan-out
writes an idle subscriber's batch as one chunk through it."""

from __future__ import annotations

import asyncio
from typing import Any

from detente.api.chunk_writer import ChunkWriter, run_eagerly
from detente.api.sse_filter import EventKeys, parse_filter
from detente.api.sse_subscriber import Subscriber
from detente.clock import FakeClock
from detente.eventlog.envelope import StoredEvent
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore

from support import counting_ids, seed


class _Server:
    """A server ``send`` that records bodies and blocks on chosen ones until released."""

    def __init__(self, *blocking: bytes) -> None:
        self.blocking = set(blocking)
        self.release = asyncio.Event()
        self.started: list[bytes] = []
        self.written: list[bytes] = []
        self.cancelled: list[bytes] = []

    async def __call__(self, message: dict[str, Any]) -> None:
        body = message["body"]
        self.started.append(body)
        if body in self.blocking:
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled.append(body)
                raise
        self.written.append(body)


def test_a_send_that_does_not_block_is_written_in_the_caller_without_a_task() -> None:
    async def run() -> tuple[bool, list[bytes], int, int]:
        server = _Server()
        writer = ChunkWriter()
        writer.bind(server, asyncio.get_running_loop())
        tasks = len(asyncio.all_tasks())
        done = writer.write_now(b"id: 1\n\n")
        return done, list(server.written), len(asyncio.all_tasks()) - tasks, writer.streamed

    done, written, new_tasks, streamed = asyncio.run(run())
    assert done and written == [b"id: 1\n\n"], "written before write_now returned"
    assert new_tasks == 0
    assert streamed == 7


def test_a_blocked_send_is_finished_by_a_task_and_later_chunks_follow_it_in_order() -> None:
    async def run() -> tuple[list[bool], list[bytes], bool, float | None]:
        server = _Server(b"1")
        writer = ChunkWriter()
        writer.bind(server, asyncio.get_running_loop())
        taken = [writer.write_now(b"1"), writer.write_now(b"2")]
        blocked = writer.sending_since is not None
        later = asyncio.ensure_future(writer.send(b"2"))
        await asyncio.sleep(0)  # let the stream's send start waiting (a yield, not a delay)
        assert server.started == [b"1"], "the second chunk waits for the first"
        server.release.set()
        await asyncio.wait_for(later, timeout=10)
        return taken, server.written, blocked, writer.sending_since

    taken, written, blocked, since = asyncio.run(run())
    assert taken == [True, False], "no eager chunk while one is blocked: the caller keeps it"
    assert blocked, "the blocked send counts for the send timeout"
    assert written == [b"1", b"2"]
    assert since is None


def test_closing_the_writer_cancels_a_blocked_send_and_refuses_more() -> None:
    async def run() -> tuple[list[bytes], bool]:
        server = _Server(b"1")
        writer = ChunkWriter()
        writer.bind(server, asyncio.get_running_loop())
        assert writer.write_now(b"1")
        await asyncio.sleep(0)  # the finishing task starts waiting
        writer.close()
        await asyncio.wait_for(writer.wait_closed(), timeout=10)
        return server.cancelled, writer.write_now(b"2")

    cancelled, taken = asyncio.run(run())
    assert cancelled == [b"1"]
    assert not taken


def test_a_send_that_fails_at_once_leaves_the_chunk_to_the_caller() -> None:
    async def run() -> tuple[bool, int]:
        async def broken(message: dict[str, Any]) -> None:
            raise RuntimeError("the response already ended")

        writer = ChunkWriter()
        writer.bind(broken, asyncio.get_running_loop())
        return writer.write_now(b"1"), writer.streamed

    assert asyncio.run(run()) == (False, 0)


def test_an_unbound_writer_takes_nothing() -> None:
    assert ChunkWriter().write_now(b"1") is False


def test_the_rest_of_an_eagerly_started_coroutine_gets_the_results_and_errors_it_awaits() -> None:
    async def run() -> list[object]:
        loop = asyncio.get_running_loop()
        first: asyncio.Future[int] = loop.create_future()
        second: asyncio.Future[int] = loop.create_future()
        seen: list[object] = []

        async def body() -> None:
            seen.append("started")
            try:
                await first
            except ValueError as exc:
                seen.append(str(exc))
            seen.append(await second)

        rest = run_eagerly(body())
        assert rest is not None and seen == ["started"]
        task = asyncio.ensure_future(_await(rest))
        first.set_exception(ValueError("boom"))
        await asyncio.sleep(0)  # one loop turn: the task resumes the coroutine
        second.set_result(5)
        await asyncio.wait_for(task, timeout=10)
        return seen

    assert asyncio.run(run()) == ["started", "boom", 5]


async def _await(awaitable: Any) -> None:
    await awaitable


def test_a_coroutine_that_never_suspends_runs_to_its_end_eagerly() -> None:
    seen: list[str] = []

    async def body() -> None:
        seen.append("done")

    assert run_eagerly(body()) is None
    assert seen == ["done"]


def _keys(service: Service) -> list[EventKeys]:
    service.claims.open_claim(seed("a.py"))
    events: list[StoredEvent] = service.store.read(since=0, limit=10)
    assert len(events) == 2, "opening a claim commits two events"
    return [EventKeys(event, {}) for event in events]


def test_the_fan_out_writes_an_idle_subscribers_batch_as_one_chunk_without_waking_it() -> None:
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("demo")], ids=counting_ids())
    keys = _keys(service)

    async def run() -> tuple[list[bytes], bool, int, int]:
        server = _Server()
        writer = ChunkWriter()
        writer.bind(server, asyncio.get_running_loop())
        sub = Subscriber(parse_filter(None, {}), 0, capacity=8, live=True)
        waiting = asyncio.ensure_future(sub.wait(writer))
        await asyncio.sleep(0)  # the stream now waits with nothing queued
        assert sub.offer(keys, keys[0].message + keys[1].message)
        await asyncio.sleep(0)  # one loop turn: a wake-up would have resumed the waiter
        woken = waiting.done()
        waiting.cancel()
        return server.written, woken, len(sub.queue), sub.delivered

    written, woken, queued, delivered = asyncio.run(run())
    assert written == [keys[0].message + keys[1].message]
    assert not woken and queued == 0
    assert delivered == keys[1].event.seq


def test_a_busy_subscribers_events_are_queued_and_wake_its_stream() -> None:
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("demo")], ids=counting_ids())
    keys = _keys(service)

    async def run() -> tuple[list[bytes], bool, list[int]]:
        server = _Server(b"x")
        writer = ChunkWriter()
        writer.bind(server, asyncio.get_running_loop())
        assert writer.write_now(b"x")  # a send blocked on a full socket
        sub = Subscriber(parse_filter(None, {}), 0, capacity=8, live=True)
        waiting = asyncio.ensure_future(sub.wait(writer))
        await asyncio.sleep(0)  # the stream now waits
        assert sub.offer(keys, keys[0].message + keys[1].message)
        await asyncio.wait_for(waiting, timeout=10)
        writer.close()
        await writer.wait_closed()
        return server.written, waiting.done(), [seq for seq, _ in sub.queue]

    written, woken, queued = asyncio.run(run())
    assert written == [] and woken
    assert queued == [keys[0].event.seq, keys[1].event.seq]


def test_a_filtered_idle_subscriber_is_written_only_the_events_it_wants() -> None:
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("demo")], ids=counting_ids())
    keys = _keys(service)
    wanted = keys[1].event.type

    async def run() -> list[bytes]:
        server = _Server()
        writer = ChunkWriter()
        writer.bind(server, asyncio.get_running_loop())
        sub = Subscriber(parse_filter(None, {"type": wanted}), 0, capacity=8, live=True)
        waiting = asyncio.ensure_future(sub.wait(writer))
        await asyncio.sleep(0)  # the stream now waits with nothing queued
        assert sub.offer(keys, keys[0].message + keys[1].message)
        waiting.cancel()
        return server.written

    assert keys[0].event.type != wanted
    assert asyncio.run(run()) == [keys[1].message]
