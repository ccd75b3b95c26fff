"""A group-committed command's wake-up (:mod:`detente.service.wake`)."""

from __future__ import annotations

import threading

from detente.service.wake import Wake


def _waiting(wake: Wake) -> tuple[threading.Thread, threading.Event]:
    """A thread waiting on ``wake`` and the event it sets once the wait returned."""
    woke = threading.Event()

    def waiter() -> None:
        wake.wait()
        woke.set()

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    return thread, woke


def test_a_wake_up_set_before_the_wait_lets_the_wait_return_at_once() -> None:
    wake = Wake()
    wake.set()
    wake.set()  # promoted, then answered: the second is a no-op
    _, woke = _waiting(wake)
    assert woke.wait(10)


def test_a_waiting_thread_sleeps_until_another_thread_sets_its_wake_up() -> None:
    wake = Wake()
    thread, woke = _waiting(wake)
    assert not woke.wait(0.05)  # nothing set yet: still asleep
    wake.set()
    assert woke.wait(10)
    wake.set()  # a late second set after the wait returned changes nothing
    thread.join(10)
    assert not thread.is_alive()
