"""The I/O watchdog shuts down the socket of a call that outlives its deadline, and only it."""

from __future__ import annotations

import socket

from detente.storage.deadline import Watchdog


def test_a_short_deadline_armed_after_a_long_one_still_shuts_its_socket_down_in_time() -> None:
    dog = Watchdog()
    a, b = socket.socketpair()
    c, d = socket.socketpair()
    a.settimeout(30)  # the bound on this test's wait, far beyond the deadline
    with dog.guard(c.fileno, 60.0) as long_expired:
        with dog.guard(a.fileno, 0.2) as short_expired:
            assert a.recv(1) == b""  # shut down by the watchdog: end of stream
            assert short_expired()
        assert not long_expired()
    c.sendall(b"x")  # the other socket was left alone
    assert d.recv(1) == b"x"
    for s in (a, b, c, d):
        s.close()


def test_a_call_that_ends_before_its_deadline_keeps_its_socket() -> None:
    dog = Watchdog()
    a, b = socket.socketpair()
    for _ in range(3):
        with dog.guard(a.fileno, 0.05) as expired:
            b.sendall(b"y")
            assert a.recv(1) == b"y"
        assert not expired()
    c, d = socket.socketpair()
    with dog.guard(c.fileno, 0.2) as expired:  # outlives the others' deadlines, then fires
        c.settimeout(30)
        assert c.recv(1) == b""
        assert expired()
    b.sendall(b"w")  # a's deadlines passed meanwhile: they were disarmed, a still works
    assert a.recv(1) == b"w"
    for s in (a, b, c, d):
        s.close()
