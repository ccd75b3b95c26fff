"""Faults that stay in the suite: kill -9 of ``detente serve`` under a mixed write load, and
a stalled or killed store under load.

The server is the real ``detente serve`` command. Each round (8 by default, the CI budget;
``DETENTE_KILL_ROUNDS=20`` for a longer soak) starts it, drives a mix of claims, renewals,
memory section patches, memory appends (commits on ``main``) and completions over HTTP,
and kill -9s it; to keep the starts
cheap each server is forked from a "zygote" process that imported
detente once (the fork runs the CLI's ``main`` exactly as the console script does).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest

from gates_support import commit, git
from storage.live import wait_until
from storage.servers import PostgresServer, free_port

ROUNDS = int(os.environ.get("DETENTE_KILL_ROUNDS", "8"))
#: Operations acknowledged in a round before its server is killed.
ACKS_PER_ROUND = 6

_ZYGOTE = textwrap.dedent(
    """
    import importlib, json, os, signal, sys
    from detente.cli.main import main
    # What a server imports on its way up, imported once before the forks (a name that
    # moved only costs speed).
    for name in (
        "detente.api.app", "detente.runtime", "detente.cli.serving", "detente.mcp_server.server",
        "detente.storage.sqlite", "detente.storage.postgres", "rich.console", "mcp",
        "uvicorn.lifespan.on", "uvicorn.protocols.http.h11_impl",
        "uvicorn.protocols.http.httptools_impl", "uvicorn.loops.auto",
    ):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps killed servers
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            quiet = os.open(os.devnull, os.O_RDWR)
            os.dup2(quiet, 0)
            os.dup2(quiet, 1)
            sys.argv = ["detente", *json.loads(line)]
            try:
                main()
            finally:
                os._exit(0)
        print(pid, flush=True)
    """
)

_AGENTS = "# AGENTS\n\n## W0\n\nnone\n\n## W1\n\nnone\n\n## W2\n\nnone\n"


class Zygote:
    """Forks ``detente serve`` processes on request."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def serve(self, *argv: str) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(list(argv)) + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _reached(acked: Acknowledged, target: int) -> bool:
    """A round may end (the server be killed) once it has its acknowledgements and, until
    one of each has been acknowledged, a completion, both workers' section patches and an
    append too: renewals and appends can fill a round long before a completion (a
    commit, an integration) or a patch answers, and a run whose every completion or patch
    was cut short would prove nothing about them."""
    if acked.errors:
        return True
    return (
        acked.count >= target
        and bool(acked.completed)
        and len(acked.sections) == 2
        and bool(acked.appends)
    )


def _listening(port: int) -> Callable[[], bool]:
    def probe() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    return probe


@dataclass
class Acknowledged:
    """What the servers acknowledged (a 2xx reached the client)."""

    claims: set[str] = field(default_factory=set)
    leases: dict[str, int] = field(default_factory=dict)  # claim -> lease revision
    sections: dict[str, int] = field(default_factory=dict)  # section key -> revision
    appends: list[str] = field(default_factory=list)  # entries acknowledged
    completed: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    count: int = 0

    def note(self, record: Callable[[], None]) -> None:
        with self.lock:
            record()
            self.count += 1


class Worker:
    """One agent: holds a claim on its memory section, renews it and patches the section
    (workers 1, 2); opens small claims and completes them onto ``main`` (worker 0)."""

    def __init__(self, index: int, repo: Path, base: str, acked: Acknowledged) -> None:
        self.index, self.repo, self.base, self.acked = index, repo, base, acked
        self.holder: dict[str, Any] | None = None
        self.n = 0

    def round(self, http: httpx.Client, stop: threading.Event) -> None:
        try:
            while not stop.is_set():
                if self.index == 0:
                    self._complete_one(http)
                else:
                    self._renew_and_patch(http)
        except httpx.HTTPError:
            return  # the server was killed
        except AssertionError as exc:  # reported by the test, not lost in a thread
            self.acked.errors.append(f"worker {self.index}: {exc}")

    def hold_section(self, http: httpx.Client) -> None:
        """Open the claim that owns this worker's memory section (before any kill)."""
        key = f"w{self.index}"
        impacts = [{"path": "AGENTS.md", "sections": [key]}]
        self.holder = self._open(http, f"{key}/**", self.base, memoryImpacts=impacts)

    def _open(self, http: httpx.Client, path: str, base: str, **extra: Any) -> dict[str, Any]:
        body = {
            "repo": "demo",
            "objective": f"worker {self.index} edits {path}",
            "baseCommit": base,
            "paths": [path],
            "leaseTtlSeconds": 600,
            "agent": {"id": f"w{self.index}", "name": f"w{self.index}"},
            **extra,
        }
        r = http.post("/v1/claims", json=body)
        assert r.status_code == 201, r.text
        claim: dict[str, Any] = r.json()["claim"]
        self.acked.note(lambda: self.acked.claims.add(claim["id"]))
        return claim

    def _complete_one(self, http: httpx.Client) -> None:
        self.n += 1
        tip = git(self.repo, "rev-parse", "refs/heads/main")
        name = f"done/{self.n}-{os.urandom(3).hex()}.txt"
        claim = self._open(http, name, tip)
        for _ in range(50):  # memory writes move main too: rebase and try again
            head = commit(self.repo, {name: f"{name}\n"}, f"add {name}", parent=tip, when=self.n)
            r = http.post(
                f"/v1/claims/{claim['id']}/complete",
                json={
                    "expectedClaimRevision": claim["revision"],
                    "fencingToken": claim["fencingToken"],
                    "expectedBaseRef": {"ref": "refs/heads/main", "oid": tip},
                    "evidence": {"headCommit": head, "changedFiles": [name], "tests": []},
                },
            )
            if r.status_code != 409 or r.json()["code"] != "stale_base":
                break
            tip, claim = r.json()["actual"], r.json()["current"]
        assert r.status_code == 200, r.text
        assert r.json()["claim"]["status"] in ("completed", "integrated")
        self.acked.note(lambda: self.acked.completed.add(claim["id"]))

    def _renew_and_patch(self, http: httpx.Client) -> None:
        key = f"w{self.index}"
        assert self.holder is not None
        # After a restart the last reply may have been lost: start from the current record.
        holder = http.get(f"/v1/claims/{self.holder['id']}").json()["claim"]
        r = http.post(
            f"/v1/claims/{holder['id']}/renew",
            json={
                "expectedLeaseRevision": holder["lease"]["revision"],
                "expectedClaimRevision": holder["revision"],
                "ttlSeconds": 600,
            },
        )
        assert r.status_code == 200, r.text
        renewed = r.json()["claim"]
        self.acked.note(
            lambda: self.acked.leases.__setitem__(renewed["id"], renewed["lease"]["revision"])
        )
        self.holder = renewed
        self.n += 1
        entry = f"- w{self.index} entry {self.n} {os.urandom(4).hex()}"
        r = http.post(
            "/v1/memory/append",
            json={
                "repo": "demo",
                "path": "DECISIONS.md",
                "claimId": renewed["id"],
                "fencingToken": renewed["fencingToken"],
                "entry": entry,
            },
        )
        assert r.status_code == 200, r.text
        self.acked.note(partial(self.acked.appends.append, entry))
        for _ in range(20):  # other workers move the file hash: re-read and retry
            docs = http.get("/v1/memory/documents", params={"repo": "demo"}).json()["documents"]
            [doc] = [d for d in docs if d["path"] == "AGENTS.md"]
            [section] = [s for s in doc["sections"] if s["key"] == key]
            self.n += 1
            r = http.post(
                "/v1/memory/sections/patch",
                json={
                    "repo": "demo",
                    "path": "AGENTS.md",
                    "sectionKey": key,
                    "expectedSectionRevision": section["revision"],
                    "expectedFileHash": doc["fileHash"],
                    "claimId": renewed["id"],
                    "fencingToken": renewed["fencingToken"],
                    "patch": {"body": f"\npatch {self.n}\n\n"},
                },
            )
            if r.status_code == 200:
                revision: int = r.json()["section"]["revision"]
                self.acked.note(partial(self.acked.sections.__setitem__, key, revision))
                return
            assert r.status_code == 409, r.text
        raise AssertionError(f"20 patches of {key} refused; the last: {r.text}")


def _repository(root: Path) -> tuple[Path, str]:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "AGENTS.md").write_text(_AGENTS)
    (root / "DECISIONS.md").write_text("# Decisions\n")
    git(root, "add", "AGENTS.md", "DECISIONS.md")
    git(root, "commit", "-q", "-m", "agents")
    return root, git(root, "rev-parse", "HEAD")


def _check_after_restart(http: httpx.Client, acked: Acknowledged, repo: Path) -> None:
    claims = {c["id"]: c for c in http.get("/v1/claims", params={"repo": "demo"}).json()["claims"]}
    assert acked.claims <= set(claims), f"lost claims: {sorted(acked.claims - set(claims))}"
    for claim_id, revision in acked.leases.items():
        assert claims[claim_id]["lease"]["revision"] >= revision, claim_id
    for claim_id in acked.completed:
        assert claims[claim_id]["status"] in ("completed", "integrated"), claims[claim_id]
    docs = http.get("/v1/memory/documents", params={"repo": "demo"}).json()["documents"]
    [doc] = [d for d in docs if d["path"] == "AGENTS.md"]
    sections = {s["key"]: s["revision"] for s in doc["sections"]}
    for key, revision in acked.sections.items():
        assert sections[key] >= revision, key
    on_main = git(repo, "show", "refs/heads/main:DECISIONS.md")
    lost = [e for e in acked.appends if on_main.count(e) != 1]
    assert not lost, f"acknowledged appends not on main exactly once: {lost}"
    report = http.get("/v1/audit/verify").json()  # the chain, and projections == a replay
    assert report["ok"] is True, report


def _kill_9_rounds(url: str, tmp_path: Path) -> None:
    repo, base = _repository(tmp_path / "demo")
    acked = Acknowledged()
    workers = [Worker(i, repo, base, acked) for i in range(3)]
    zygote = Zygote()
    http_register = True
    try:
        for round_number in range(ROUNDS + 1):  # the last start only checks
            port = free_port()
            pid = zygote.serve("serve", "--repo", str(repo), "--store", url, "--port", str(port))
            try:
                wait_until(_listening(port), 30, "the server answers /healthz")
                with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                    if http_register:
                        r = http.post(
                            "/v1/memory/documents",
                            json={"repo": "demo", "path": "AGENTS.md", "class": "section_owned"},
                        )
                        assert r.status_code == 201, r.text
                        r = http.post(
                            "/v1/memory/documents",
                            json={"repo": "demo", "path": "DECISIONS.md", "class": "append_only"},
                        )
                        assert r.status_code == 201, r.text
                        for worker in workers[1:]:
                            worker.hold_section(http)
                        http_register = False
                    if round_number == ROUNDS:
                        _check_after_restart(http, acked, repo)
                        break
                    target = acked.count + ACKS_PER_ROUND
                    stop = threading.Event()
                    threads = [threading.Thread(target=w.round, args=(http, stop)) for w in workers]
                    for t in threads:
                        t.start()
                    wait_until(partial(_reached, acked, target), 60, "a round's acknowledgements")
                    os.kill(pid, signal.SIGKILL)
                    stop.set()
                    for t in threads:
                        t.join(timeout=30)
                    assert acked.errors == []
            finally:
                # A killed server stays a zombie until the zygote reaps it, so it may vanish
                # between the check and the kill.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                wait_until(partial(_gone, pid), 10, "the killed server is gone")
    finally:
        zygote.close()
    assert len(acked.completed) >= 1 and len(acked.sections) == 2 and acked.appends


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_kill_9_of_detente_serve_in_rounds_of_mixed_writes_on_sqlite_loses_nothing(
    tmp_path: Path,
) -> None:
    _kill_9_rounds(f"sqlite:///{tmp_path / 'detente.db'}", tmp_path)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_kill_9_of_detente_serve_in_rounds_of_mixed_writes_on_postgres_loses_nothing(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    _kill_9_rounds(postgres_server.new_database(), tmp_path)
