"""Time, injected. The only module that reads the wall clock.

The server's clock is the authority on lease expiry (DESIGN principle 3); every
service receives a :class:`Clock` so tests can drive time with :class:`FakeClock`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol


class Clock(Protocol):
    """A source of the current time (timezone-aware UTC)."""

    def now(self) -> datetime: ...


class SystemClock:
    """The machine's wall clock, in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class TimeSources(Protocol):
    """The raw readings a steady clock is built from (injectable for tests).

    ``wall()`` is POSIX seconds (steps when someone sets the clock); ``monotonic()`` is
    seconds on a clock no one can set, shared by every process of the machine when
    ``boot()`` names it; ``boot()`` changes when the monotonic clock restarts.
    """

    def wall(self) -> float: ...

    def monotonic(self) -> float: ...

    def boot(self) -> str: ...


class SystemTimeSources:
    """This machine's clocks: ``CLOCK_REALTIME`` and, on Linux, ``CLOCK_BOOTTIME`` (counts
    suspended time too, one timeline for every process) with the kernel's boot id.
    Elsewhere the monotonic clock is the process's own (``boot()`` names the process)."""

    def __init__(self) -> None:
        self._boot = _boot_id()
        boottime = getattr(time, "CLOCK_BOOTTIME", None)
        self._monotonic: Callable[[], float] = (
            (lambda: time.clock_gettime(boottime))
            if boottime is not None and not self._boot.startswith("process-")
            else time.monotonic
        )

    def wall(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return self._monotonic()

    def boot(self) -> str:
        return self._boot


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return f"process-{os.getpid()}-{time.time_ns()}"


class FakeClock:
    """A clock that moves only when told to; thread-safe.

    Args:
        start: the initial time (UTC); defaults to 2026-01-01T00:00:00Z.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        """Move time forward by ``seconds`` (>= 0) and return the new time."""
        if seconds < 0:
            raise ValueError("a FakeClock never goes backwards")
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now

    def set(self, when: datetime) -> None:
        """Jump to ``when`` (must not be earlier than now)."""
        with self._lock:
            if when < self._now:
                raise ValueError("a FakeClock never goes backwards")
            self._now = when


#: Recent :func:`format_time` answers for UTC times (a renewal formats the batch's time,
#: its new deadline and the claim's unchanged times several times over); cleared when full.
_FORMATTED: dict[datetime, str] = {}
_FORMATTED_MAX = 4096


def format_time(when: datetime) -> str:
    """RFC 3339 UTC with microseconds and a ``Z`` suffix, e.g. ``2026-01-01T00:00:00.000000Z``
    (a naive ``when`` is taken as local time, as :meth:`datetime.astimezone` takes it).

    Built by :meth:`datetime.isoformat` (half of ``strftime``'s cost) and remembered for
    the last few thousand UTC times; years before 1000 keep ``strftime``'s unpadded year.
    """
    if when.tzinfo is not UTC:
        when = when.astimezone(UTC)
    text = _FORMATTED.get(when)
    if text is not None:
        return text
    if when.year < 1000:
        text = when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    else:
        text = when.isoformat(timespec="microseconds")[:-6] + "Z"
    if len(_FORMATTED) >= _FORMATTED_MAX:
        _FORMATTED.clear()
    _FORMATTED[when] = text
    return text


def whole_seconds(text: str) -> str:
    """An RFC 3339 UTC time as :func:`format_time` writes it, to the second, for people
    and agents to read (``2026-01-01T00:00:00.123456Z`` -> ``2026-01-01T00:00:00Z``);
    any other text unchanged."""
    head, dot, rest = text.partition(".")
    if dot and rest.endswith("Z") and rest[:-1].isdigit():
        return f"{head}Z"
    return text


def parse_time(text: str) -> datetime:
    """Inverse of :func:`format_time`; accepts any RFC 3339 offset."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
