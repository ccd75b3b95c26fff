"""Wall-clock steps never move a lease beyond the documented bound, and event times never
decrease (kind: time). Real SQLite files; the machine's clocks are replaced by fake ones
that the test steps, since a test may not set the real wall clock."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from detente.clock import parse_time
from detente.domain.claims.model import ClaimStatus
from detente.service import RepoConfig, Service
from detente.storage.clock import SLEW, SteadyClock, StoreClock
from detente.storage.sqlite import SqliteStore

from support import seed

_NEW_YEAR = datetime(2026, 1, 1, tzinfo=UTC).timestamp()


class _Clocks:
    """A machine's clocks: a wall clock someone can step, a monotonic one no one can."""

    def __init__(self, boot: str = "boot-1") -> None:
        self.wall_time = _NEW_YEAR
        self.mono = 1_000.0
        self.boot_id = boot

    def wall(self) -> float:
        return self.wall_time

    def monotonic(self) -> float:
        return self.mono

    def boot(self) -> str:
        return self.boot_id

    def run(self, seconds: float) -> None:
        """Real time passes: both clocks advance."""
        self.mono += seconds
        self.wall_time += seconds

    def step(self, seconds: float) -> None:
        """Someone sets the wall clock (NTP, an administrator)."""
        self.wall_time += seconds


def _service(db: Path, clocks: _Clocks) -> Service:
    store = SqliteStore(db)
    return Service(store, SteadyClock(store, clocks), [RepoConfig("demo")])


def _status(service: Service, claim_id: str) -> ClaimStatus:
    service.sweep()
    return service.claims.get_claim(claim_id).claim.status


#: A 60 s lease lasts between these many seconds of real time, whatever the steps.
_SHORTEST, _LONGEST = 60 / (1 + SLEW), 60 / (1 - SLEW)


def test_a_backward_step_of_an_hour_keeps_a_60_s_lease_alive_no_longer_than_the_bound(
    tmp_path: Path,
) -> None:
    clocks = _Clocks()
    service = _service(tmp_path / "d.db", clocks)
    claim = service.claims.open_claim(seed("src/a.py", ttl=60)).claim
    clocks.run(30)
    clocks.step(-3600)
    clocks.run(_SHORTEST - 30 - 0.5)
    assert _status(service, claim.id) is ClaimStatus.ACTIVE
    clocks.run(_LONGEST - _SHORTEST + 1)
    assert _status(service, claim.id) is ClaimStatus.EXPIRED


def test_a_forward_step_of_two_hours_does_not_expire_a_live_heartbeat_before_the_bound(
    tmp_path: Path,
) -> None:
    clocks = _Clocks()
    service = _service(tmp_path / "d.db", clocks)
    claim = service.claims.open_claim(seed("src/a.py", ttl=60)).claim
    clocks.run(30)
    clocks.step(2 * 3600)
    assert _status(service, claim.id) is ClaimStatus.ACTIVE
    clocks.run(_SHORTEST - 30 - 0.5)
    assert _status(service, claim.id) is ClaimStatus.ACTIVE
    clocks.run(_LONGEST - _SHORTEST + 1)
    assert _status(service, claim.id) is ClaimStatus.EXPIRED


def test_event_times_never_decrease_across_steps_and_processes_sharing_one_file(
    tmp_path: Path,
) -> None:
    clocks = _Clocks()
    server, cli = _service(tmp_path / "d.db", clocks), _service(tmp_path / "d.db", clocks)
    for n, (writer, step) in enumerate([(server, -3600), (cli, 0), (server, 7200), (cli, -7200)]):
        writer.claims.open_claim(seed(f"src/f{n}.py", agent=f"a{n}"))
        clocks.run(1)
        clocks.step(step)
    times = [parse_time(e.at) for e in server.store.read()]
    assert len(times) >= 8 and times == sorted(times)
    # Both processes read one plan: at the same instant they tell the same time.
    assert server.clock.now() == cli.clock.now()


def test_after_a_reboot_with_the_wall_clock_behind_event_times_continue_from_the_newest(
    tmp_path: Path,
) -> None:
    clocks = _Clocks()
    service = _service(tmp_path / "d.db", clocks)
    service.claims.open_claim(seed("src/a.py"))
    newest = parse_time(service.store.read()[-1].at)
    rebooted = _Clocks(boot="boot-2")
    rebooted.wall_time = clocks.wall_time - 3600
    again = _service(tmp_path / "d.db", rebooted)
    again.claims.open_claim(seed("src/b.py", agent="bob"))
    assert parse_time(again.store.read()[-1].at) >= newest


@given(st.lists(st.tuples(st.floats(0.01, 600), st.floats(-86_400, 86_400)), max_size=30))
def test_detente_time_never_decreases_and_runs_within_the_slew_bound(
    moves: list[tuple[float, float]],
) -> None:
    clocks = _Clocks()
    clock = SteadyClock(None, clocks)
    before = clock.now().timestamp()
    for elapsed, step in moves:
        clocks.step(step)
        clocks.run(elapsed)
        after = clock.now().timestamp()
        assert (1 - SLEW) * elapsed - 1e-3 <= after - before <= (1 + SLEW) * elapsed + 1e-3
        before = after


class _SteppedDatabase:
    """A store clock (as PostgreSQL's ``clock_timestamp()``) that an operator steps."""

    def __init__(self, clocks: _Clocks) -> None:
        self.clocks = clocks

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.clocks.wall(), UTC)


def test_a_stepped_store_clock_moves_lease_time_only_within_the_slew_bound() -> None:
    clocks = _Clocks()
    clock = StoreClock(_SteppedDatabase(clocks), clocks)
    start = clock.now().timestamp()
    clocks.run(30)
    clocks.step(-3600)
    clocks.run(30)
    elapsed = clock.now().timestamp() - start
    assert 60 * (1 - SLEW) - 1e-3 <= elapsed <= 60 + 1e-3
    clocks.step(7200)
    clocks.run(10)
    assert clock.now().timestamp() - start - elapsed <= 10 * (1 + SLEW) + 1e-3


def test_clock_reads_racing_commands_on_sqlite_never_deadlock(tmp_path: Path) -> None:
    """A command reads the clock while it holds the store; a sweeper reads the clock, which
    reads the store: the two locks are never taken in opposite orders."""
    store = SqliteStore(tmp_path / "d.db")
    clock = SteadyClock(store)
    service = Service(store, clock, [RepoConfig("demo")])
    done = threading.Event()
    errors: list[BaseException] = []

    def read_clock() -> None:
        try:
            while not done.is_set():
                clock.now()
        except BaseException as exc:  # reported below
            errors.append(exc)

    reader = threading.Thread(target=read_clock)
    reader.start()
    writer = threading.Thread(
        target=lambda: [service.claims.open_claim(seed(f"src/{n}.py")) for n in range(40)]
    )
    writer.start()
    writer.join(timeout=60)
    done.set()
    reader.join(timeout=60)
    assert not writer.is_alive() and not reader.is_alive(), "deadlocked"
    assert errors == [] and len(service.claims.list_claims()) == 40
