"""Throwaway PostgreSQL and etcd servers on 127.0.0.1 for tests and benchmarks.

Both start from the Debian binaries with their data in a temporary directory and stop
(with their directory removed) when closed. Tests reach them through the session
fixtures ``postgres_server`` and ``etcd_cluster``: a missing binary skips the tests that
need it on a developer machine, and fails them in CI (``CI=true``), where ``.ci/run``
installs both.

initdb refuses to run as root, so as root the cluster is created and run as the
``postgres`` system user; as anyone else, as that user. Every server gets SIGKILL when the
process that started it dies, so an interrupted test run leaves nothing running.
"""

from __future__ import annotations

import ctypes  # here, not in the child: after the switch to ``postgres`` it cannot read it
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

#: Seconds a server gets to accept connections before the fixture gives up.
START_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} during start-up")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)  # polling a port that has no readiness signal of its own
    raise RuntimeError(f"{what} did not listen on port {port} within {START_TIMEOUT} s")


def require_binary(name: str, path: str | None) -> str:
    """The binary's path; skip (developer machine) or fail (CI) when it is missing."""
    if path is not None:
        return path
    reason = f"{name} is not installed (run .ci/run or apt-get install it)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


def postgres_bindir() -> str | None:
    """The directory holding ``initdb`` and ``postgres`` (newest Debian version first)."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    which = shutil.which("initdb")
    if which:
        candidates.append(which)
    return str(Path(candidates[0]).parent) if candidates else None


def _postgres_user() -> dict[str, str]:
    """``Popen`` arguments that run a child as the ``postgres`` user when we are root."""
    return {"user": "postgres", "group": "postgres"} if os.geteuid() == 0 else {}


def _die_with_parent() -> None:
    """In the child (after any user switch): SIGKILL when the test process dies, so a
    killed pytest leaves no server behind (Linux ``PR_SET_PDEATHSIG``)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


@dataclass
class PostgresServer:
    """A PostgreSQL cluster of its own; ``url(db)`` names a database on it."""

    bindir: str
    durable: bool = False
    port: int = field(default_factory=free_port)
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="detente-pg-")))
    proc: subprocess.Popen[bytes] | None = None
    _next_db: int = 0

    def start(self) -> PostgresServer:
        data = self.root / "data"
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
        subprocess.run(
            [
                f"{self.bindir}/initdb",
                *("-D", str(data), "-U", "postgres", "--auth=trust"),
                *("-E", "UTF8", "--no-sync"),
            ],
            **_postgres_user(),  # type: ignore[call-overload]
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._spawn()
        return self

    def _spawn(self) -> None:
        data = self.root / "data"
        # Tests share a server they never crash, so its own fsyncs only cost time there;
        # benchmarks and the test that kills PostgreSQL run it durable (fsync and
        # synchronous commit on, the defaults).
        fast = [] if self.durable else ["-c", "fsync=off", "-c", "synchronous_commit=off"]
        self.proc = subprocess.Popen(
            [
                f"{self.bindir}/postgres",
                *("-D", str(data), "-p", str(self.port)),
                *("-c", "listen_addresses=127.0.0.1"),
                *("-c", f"unix_socket_directories={self.root}"),
                *("-c", "max_connections=300", *fast),
            ],
            **_postgres_user(),  # type: ignore[call-overload]
            preexec_fn=_die_with_parent,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        _wait_for_port(self.port, self.proc, "postgres")
        self._ready()

    def restart(self) -> None:
        """Start the server again on its data (after a kill; it recovers from its WAL)."""
        self._spawn()

    def _ready(self) -> None:
        import psycopg

        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=2).close()
                return
            except psycopg.OperationalError:  # "the database system is starting up"
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def url(self, db: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def new_database(self) -> str:
        """Create an empty database; returns its URL."""
        import psycopg

        self._next_db += 1
        name = f"t{os.getpid()}_{self._next_db}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            # Fast shutdown of its own group: a smart one (SIGTERM) waits for every client
            # to disconnect, and pools a test left open held the session's end 10 s each.
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)


@dataclass
class EtcdMember:
    name: str
    client_port: int
    peer_port: int
    proc: subprocess.Popen[bytes] | None = None


@dataclass
class EtcdCluster:
    """A 3-member etcd cluster on loopback ports; members can be killed and restarted."""

    binary: str
    size: int = 3
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="detente-etcd-")))
    members: list[EtcdMember] = field(default_factory=list)
    _next_prefix: int = 0

    def start(self) -> EtcdCluster:
        self.members = [EtcdMember(f"m{i}", free_port(), free_port()) for i in range(self.size)]
        for member in self.members:
            self._spawn(member, "new")
        for member in self.members:
            assert member.proc is not None
            _wait_for_port(member.client_port, member.proc, f"etcd {member.name}")
        self._wait_for_leader()
        return self

    def _wait_for_leader(self) -> None:
        """A linearizable read succeeds only once the members elected a leader."""
        import asyncio

        import aetcd

        async def probe() -> None:
            deadline = time.monotonic() + START_TIMEOUT
            for member in self.members:
                while True:
                    client = aetcd.Client(host="127.0.0.1", port=member.client_port, timeout=2)
                    try:
                        await client.get(b"/leader-probe")
                        break
                    except aetcd.ClientError:
                        if time.monotonic() > deadline:
                            raise
                        await asyncio.sleep(0.05)
                    finally:
                        await client.close()

        asyncio.run(probe())

    def _spawn(self, member: EtcdMember, state: str) -> None:
        initial = ",".join(f"{m.name}=http://127.0.0.1:{m.peer_port}" for m in self.members)
        client = f"http://127.0.0.1:{member.client_port}"
        peer = f"http://127.0.0.1:{member.peer_port}"
        member.proc = subprocess.Popen(
            [
                self.binary,
                *("--name", member.name, "--data-dir", str(self.root / member.name)),
                *("--listen-client-urls", client, "--advertise-client-urls", client),
                *("--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer),
                *("--initial-cluster", initial, "--initial-cluster-state", state),
                *("--initial-cluster-token", self.root.name),
                *("--heartbeat-interval", "50", "--election-timeout", "500"),
                *("--max-txn-ops", "1024", "--log-level", "error", "--logger", "zap"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )

    @property
    def endpoints(self) -> str:
        return ",".join(f"127.0.0.1:{m.client_port}" for m in self.members)

    def url(self, prefix: str | None = None) -> str:
        """An ``etcd://`` URL on every member; ``prefix`` isolates one test's keys."""
        if prefix is None:
            self._next_prefix += 1
            prefix = f"t{os.getpid()}_{self._next_prefix}"
        return f"etcd://{self.endpoints}/{prefix}"

    def kill(self, index: int) -> None:
        """kill -9 one member (its data directory stays)."""
        proc = self.members[index].proc
        assert proc is not None
        proc.kill()
        proc.wait(timeout=10)

    def kill_all(self) -> None:
        """kill -9 every member (their data directories stay)."""
        for index in range(len(self.members)):
            self.kill(index)

    def restart_all(self) -> None:
        """Start every member again and wait for a leader."""
        for member in self.members:
            self._spawn(member, "existing")
        for member in self.members:
            assert member.proc is not None
            _wait_for_port(member.client_port, member.proc, f"etcd {member.name}")
        self._wait_for_leader()

    def restart(self, index: int) -> None:
        member = self.members[index]
        self._spawn(member, "existing")
        assert member.proc is not None
        _wait_for_port(member.client_port, member.proc, f"etcd {member.name}")
        self._wait_for_leader()

    def close(self) -> None:
        for member in self.members:
            if member.proc is not None and member.proc.poll() is None:
                member.proc.kill()
                member.proc.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    bindir = require_binary("PostgreSQL (initdb)", postgres_bindir())
    require_binary("psycopg", "psycopg" if _importable("psycopg") else None)
    server = PostgresServer(bindir).start()
    yield server
    server.close()


@pytest.fixture(scope="session")
def etcd_cluster() -> Iterator[EtcdCluster]:
    binary = require_binary("etcd (Debian etcd-server)", shutil.which("etcd"))
    require_binary("aetcd", "aetcd" if _importable("aetcd") else None)
    cluster = EtcdCluster(binary).start()
    yield cluster
    cluster.close()


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
