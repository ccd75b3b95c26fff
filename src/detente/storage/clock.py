"""Lease time: a clock no wall-clock step can move, and one timeline for every server.

DESIGN principle 3: the server's clock is the authority on lease expiry, and in
multi-node mode that is the *store's* clock (PostgreSQL's ``clock_timestamp()``; etcd's
members' clocks floored by the last commit). Either reference can be *stepped*: an
administrator or NTP sets it back an hour or forward two. Read raw, a backward step keeps
every lease alive for the length of the step and a forward step expires live ones at
once; event ``at`` times would run backwards in the chain.

So detente time follows its reference the way NTP's slewing does (chrony's
``maxslewrate`` is the model): it advances with a monotonic clock, and when the
reference is found to differ by more than :data:`STEP_TOLERANCE` it runs at most
:data:`SLEW` faster or slower than real time until the difference is absorbed. The
documented bound: **whatever the steps, detente time never decreases and runs between
``1 - SLEW`` and ``1 + SLEW`` times real time**, so a lease of ``L`` seconds lasts
between ``L / (1 + SLEW)`` and ``L / (1 - SLEW)`` seconds of real time (60 s: 57.1 to
63.2 s). A step of ``S`` seconds is absorbed in ``S / SLEW`` (1 h: 20 h).

- memory and SQLite (:class:`SteadyClock`): the reference is the machine's wall clock;
  SQLite keeps the plan in its ``meta`` table, read on every tick, so every process on
  the machine (server, CLIs, hooks) computes the same time from the same system-wide
  monotonic clock; after a reboot the plan restarts no earlier than the newest event;
- PostgreSQL and etcd (:class:`StoreClock`): the reference is the store's ``now()``;
  each server slews on its own monotonic clock and never returns a time earlier than
  the newest event it has seen, so event times never decrease across servers either.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

from detente.clock import Clock, SystemTimeSources, TimeSources, parse_time
from detente.storage.base import Store, TimedStore

#: The most detente time runs faster or slower than real time while absorbing a step.
SLEW = 0.05
#: Seconds of difference from the reference taken for noise, not a step.
STEP_TOLERANCE = 0.5


@dataclass(frozen=True)
class TimePlan:
    """Detente time as a function of the monotonic clock ``m`` (seconds).

    From ``(m0, t0)`` the offset ``time - m`` moves from ``t0 - m0`` toward ``target`` (the
    reference's offset when the plan was made) by at most :data:`SLEW` seconds per second.

    Attributes:
        boot: the monotonic clock's boot id (a plan is void after a reboot).
        m0 / t0: the monotonic reading and the POSIX time the plan starts at.
        target: ``reference - m`` to converge to.
    """

    boot: str
    m0: float
    t0: float
    target: float

    @classmethod
    def start(cls, boot: str, m: float, reference: float, floor: float | None) -> TimePlan:
        """A first plan: the reference, or ``floor`` (the newest event) if later."""
        return cls(boot, m, max(reference, floor or reference), reference - m)

    def at(self, m: float) -> float:
        """The time at monotonic reading ``m`` (POSIX seconds)."""
        start = self.t0 - self.m0
        reach = SLEW * max(m - self.m0, 0.0)
        return m + start + max(-reach, min(reach, self.target - start))

    def follow(self, m: float, reference: float) -> TimePlan:
        """This plan, or (the reference moved: a step) a new one continuing from ``at(m)``."""
        if abs((reference - m) - self.target) <= STEP_TOLERANCE:
            return self
        return TimePlan(self.boot, m, self.at(m), reference - m)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TimePlan | None:
        try:
            body = json.loads(text)
            return cls(
                str(body["boot"]), float(body["m0"]), float(body["t0"]), float(body["target"])
            )
        except (ValueError, KeyError, TypeError):
            return None


@runtime_checkable
class PlanStore(Protocol):
    """A store keeping the time plan for every process of the machine (SQLite)."""

    def clock_plan(self) -> str | None:
        """The stored plan (JSON), if any."""
        ...

    def save_clock_plan(self, plan: str) -> None:
        """Replace the stored plan."""
        ...

    def last_time(self) -> str | None:
        """The ``at`` of the newest event, if any."""
        ...


@runtime_checkable
class LastTimeStore(Protocol):
    """A store that tells the ``at`` of its newest event (the floor of event times)."""

    def last_time(self) -> str | None: ...


def _floor(store: object) -> float | None:
    """The newest event's time (POSIX seconds), if the store tells it."""
    return _seconds(store.last_time() if isinstance(store, LastTimeStore) else None)


def _seconds(at: str | None) -> float | None:
    if not at:
        return None
    try:
        return parse_time(at).timestamp()
    except ValueError:  # not a time (hand-written events in tests)
        return None


@runtime_checkable
class FlooredTimedStore(Protocol):
    """A store that reads its time and its newest event's time in one round trip."""

    def now_and_last(self) -> tuple[datetime, str | None]:
        """``(the store's time, the at of its newest event or None)``."""
        ...


class _Steady:
    """The plan-following core of both clocks: one lock, never backwards in-process."""

    def __init__(self, sources: TimeSources) -> None:
        self._sources = sources
        self._lock = threading.Lock()
        self._plan: TimePlan | None = None
        self._last = float("-inf")

    def _tick(
        self, reference: float, floor: float | None, stored: TimePlan | None
    ) -> tuple[float, TimePlan]:
        m, boot = self._sources.monotonic(), self._sources.boot()
        plan = stored or self._plan
        if plan is None or plan.boot != boot:
            plan = TimePlan.start(boot, m, reference, floor)
        plan = plan.follow(m, reference)
        when = max(plan.at(m), floor or float("-inf"), self._last)
        self._plan, self._last = plan, when
        return when, plan


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


class SteadyClock(_Steady):
    """Lease time on one machine: the wall clock, slewed (see the module docstring).

    Args:
        store: where the plan is shared by every process (:class:`PlanStore`: SQLite);
            without one the plan is this process's own (memory store).
        sources: the raw clocks (tests inject fake ones).
    """

    def __init__(self, store: object | None = None, sources: TimeSources | None = None) -> None:
        super().__init__(sources or SystemTimeSources())
        self._store = store if isinstance(store, PlanStore) else None

    def now(self) -> datetime:
        """Detente time (timezone-aware UTC): never earlier than a time already returned
        or the newest event, and moved by a wall-clock step at most :data:`SLEW` s per s.

        Raises:
            StoreError: ``store_unavailable`` when the store keeping the plan fails.
        """
        store = self._store
        if store is None:
            with self._lock:
                when, _ = self._tick(self._sources.wall(), None, None)
            return _utc(when)
        # The store is read and written outside this clock's lock: a command holding the
        # store's lock reads the clock, so taking them in the other order could deadlock.
        stored = store.clock_plan()
        plan = TimePlan.from_json(stored) if stored else None
        fresh = plan is None or plan.boot != self._sources.boot()
        floor = _floor(store) if fresh else None
        with self._lock:
            when, new = self._tick(self._sources.wall(), floor, plan)
        if new != plan:
            store.save_clock_plan(new.to_json())
        return _utc(when)


class StoreClock(_Steady):
    """Lease time of a multi-node store: its ``now()``, slewed, floored by its newest event.

    Args:
        store: a store with a ``now()`` (PostgreSQL: ``clock_timestamp()``; etcd: see
            :meth:`detente.storage.etcd.EtcdStore.now`).
        sources: the raw clocks (only ``monotonic`` and ``boot`` are read).
    """

    def __init__(self, store: TimedStore, sources: TimeSources | None = None) -> None:
        super().__init__(sources or SystemTimeSources())
        self._store = store
        # Checked once: a runtime protocol check costs tens of microseconds per call.
        self._floored = store if isinstance(store, FlooredTimedStore) else None

    def now(self) -> datetime:
        """The store's time, slewed (timezone-aware UTC).

        Raises:
            StoreError: ``store_unavailable`` when the store cannot be reached: with no
                time there is no lease decision, so a partitioned server renews nothing
                and reaps nothing.
        """
        if self._floored is not None:
            now, last = self._floored.now_and_last()
            reference, floor = now.timestamp(), _seconds(last)
        else:
            reference, floor = self._store.now().timestamp(), _floor(self._store)
        with self._lock:
            when, _ = self._tick(reference, floor, None)
        return _utc(when)


def default_clock(store: Store) -> Clock:
    """The time authority for a service on ``store``: its clock if it has one, else the
    machine's (memory and SQLite stores live on one machine), both slewed."""
    return StoreClock(store) if isinstance(store, TimedStore) else SteadyClock(store)
