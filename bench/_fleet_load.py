"""The fleet bench's load: agents renewing their claims and a stream of short claims.

One asyncio loop drives everything (one ``httpx.AsyncClient`` per server), so the
generator stays cheap on a machine it shares with the servers it measures. Every request
carries its agent's own bearer token: agent ``i`` is the OIDC subject ``fleet-i``
(principal ``oidc:fleet-i``) and talks to server ``i mod K``.

- **Renewing agents** hold one claim each (lease ``3 x renew`` seconds from their first
  timed renewal on) and renew it every ``renew`` seconds; agent ``i`` starts at
  ``i / A`` of the interval (plus up to 1 % of jitter), so renewals spread evenly.
- **Stale agents** (``stale_share`` of the fleet) hold a claim with a short lease
  (``stale_ttl`` s), renew it every third of it, then stop at a random time in the first
  half of the run: their leases expire and the servers sweep them.
- **Opens**: ``open_rate`` claims per second at fixed intervals, each on fresh paths, by
  agent ``j mod A`` through its server; ``hold`` seconds later the even ones are
  completed (their branch ``fleet/<j>`` advanced by CAS from the base to a commit adding
  ``opens/<j>/done.txt``, prepared by :func:`prepare_heads`) and the odd ones abandoned.

Latencies (milliseconds) run from the request's turn to its answer, a wait for one of the
``IN_FLIGHT`` requests a server may have in flight included (a server that falls behind
fills them); ``lag`` is how late a renewal's turn came against its schedule (the
generator's own saturation).
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

__all__ = ["Agent", "Fleet", "Opened", "Plan", "prepare_heads"]

#: Lease seconds of a renewing agent's claim until its first timed renewal (opening and
#: renewing thousands of claims before the timed phase may take longer than 3 x renew).
SETUP_TTL = 3600

#: Requests in flight per server; the others wait on a semaphore, not in httpx's pool
#: (whose queue is scanned whole on every release: thousands of waiting requests made
#: the generator itself the bottleneck).
IN_FLIGHT = 32


def prepare_heads(repo: Path, base: str, opens: list[int]) -> dict[int, str]:
    """For each open number ``j``: the branch ``fleet/<j>`` at ``base`` and a commit on
    ``base`` adding ``opens/<j>/done.txt`` (one ``git fast-import``); returns j -> commit."""
    script: list[str] = []
    for j in opens:
        script += [f"reset refs/heads/fleet/{j}", f"from {base}", ""]
        script += [f"commit refs/fleet-work/{j}", f"mark :{j + 1}"]
        script += ["committer fleet <fleet@bench> 0 +0000", "data 4", f"{j:04d}"[-4:]]
        script += [f"from {base}", f"M 100644 inline opens/{j}/done.txt", "data 5", "done", ""]
    marks = repo.parent / "fleet-marks"
    subprocess.run(
        ["git", "fast-import", "--quiet", f"--export-marks={marks}"],
        cwd=repo,
        input="\n".join(script).encode() + b"\n",
        check=True,
    )
    return {int(m[1:]) - 1: oid for m, oid in (ln.split() for ln in marks.read_text().splitlines())}


@dataclass(frozen=True)
class Plan:
    """What one run offers (seconds, counts, rates)."""

    agents: int
    duration: float
    renew: float
    open_rate: float
    hold: float
    stale_share: float
    stale_ttl: int
    repo: str
    base_oid: str
    #: open number -> the commit its completion names (opens/<j>/done.txt on the base)
    heads: dict[int, str] = field(default_factory=dict)


@dataclass
class Agent:
    """One simulated agent and what the servers acknowledged to it last."""

    index: int
    server: int
    headers: dict[str, str]
    stale: bool
    ttl: int
    claim_id: str = ""
    claim_revision: int = 0
    lease_revision: int = 0
    expires_at: str = ""
    stop_at: float = float("inf")


@dataclass
class Opened:
    """A claim the open stream opened (acknowledged), and how it was closed."""

    claim_id: str
    server: int
    close: str  # "complete" | "abandon"
    closed_status: str | None = None


@dataclass
class Tally:
    """Latencies (ms) and failures of one run's timed phase."""

    renew_ms: list[float] = field(default_factory=list)
    open_ms: list[float] = field(default_factory=list)
    close_ms: list[float] = field(default_factory=list)
    lag_ms: list[float] = field(default_factory=list)
    #: (seconds into the phase, ms, what) of every answer slower than 50 ms
    slow: list[tuple[float, float, str]] = field(default_factory=list)
    t0: float = 0.0
    renew_offered: int = 0
    open_offered: int = 0
    server_errors: Counter[str] = field(default_factory=Counter)
    other_errors: Counter[str] = field(default_factory=Counter)

    def took(self, what: str, into: list[float], sent: float) -> None:
        now = time.perf_counter()
        ms = (now - sent) * 1000
        into.append(ms)
        if ms > 50:
            self.slow.append((now - self.t0, ms, what))

    def failed(self, what: str, answer: httpx.Response | BaseException) -> None:
        if isinstance(answer, BaseException):
            self.other_errors[f"{what}: {type(answer).__name__}"] += 1
            return
        try:
            code = str(answer.json().get("code", ""))
        except ValueError:
            code = ""
        key = f"{what}: {answer.status_code} {code}".strip()
        bucket = self.server_errors if answer.status_code >= 500 else self.other_errors
        bucket[key] += 1


class Fleet:
    """The agents of one run over ``bases`` (one URL per server)."""

    def __init__(self, plan: Plan, bases: list[str], tokens: list[str], seed: int = 32) -> None:
        self.plan = plan
        self.clients = [
            httpx.AsyncClient(
                base_url=b,
                timeout=60,
                limits=httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT),
            )
            for b in bases
        ]
        self.gates = [asyncio.Semaphore(IN_FLIGHT) for _ in bases]
        rng = random.Random(seed)
        stale_every = round(1 / plan.stale_share) if plan.stale_share > 0 else 0
        self.agents = [
            Agent(
                index=i,
                server=i % len(bases),
                headers={"Authorization": f"Bearer {tokens[i]}"},
                stale=bool(stale_every) and i % stale_every == stale_every - 1,
                ttl=plan.stale_ttl
                if stale_every and i % stale_every == stale_every - 1
                else int(plan.renew * 3),
            )
            for i in range(plan.agents)
        ]
        for agent in self.agents:
            if agent.stale:
                agent.stop_at = plan.duration * rng.uniform(0.05, 0.5)
        self.jitter = [rng.uniform(0, plan.renew / 100) for _ in self.agents]
        self.opened: list[Opened] = []
        self.tally = Tally()
        #: when the last renewal of the timed phase was answered (the closes may follow)
        self.renewals_ended = datetime.now(UTC)

    async def close(self) -> None:
        for client in self.clients:
            await client.aclose()

    # -- setup: every agent opens its claim (not timed) -------------------------------

    async def open_agents(self, *, stale: bool, parallel: int = 8) -> int:
        """Open the claims of the renewing agents (or of the stale ones: right before the
        timed phase, their leases being short), ``parallel`` at a time; returns how many.
        Any failure stops the run."""
        gate = asyncio.Semaphore(parallel)

        async def one(agent: Agent) -> None:
            async with gate:
                ttl = agent.ttl if agent.stale else SETUP_TTL
                body = self._claim_body(f"agents/{agent.index}/**", ttl, "hold")
                r = await self._post(agent.server, "/v1/claims", body, agent.headers)
                if r.status_code != 201:
                    raise RuntimeError(f"agent {agent.index} could not open: {r.text}")
                self._acknowledged(agent, r.json()["claim"])

        chosen = [a for a in self.agents if a.stale == stale]
        await asyncio.gather(*(one(a) for a in chosen))
        return len(chosen)

    async def renew_all_once(self, parallel: int = 8) -> None:
        """Renew every renewing agent's claim once (the per-renewal CPU calibration)."""
        gate = asyncio.Semaphore(parallel)

        async def one(agent: Agent) -> None:
            async with gate:
                r = await self._renew(agent, SETUP_TTL)
                if r.status_code != 200:
                    raise RuntimeError(f"agent {agent.index} could not renew: {r.text}")

        await asyncio.gather(*(one(a) for a in self.agents if not a.stale))

    # -- the timed phase ----------------------------------------------------------------

    async def run(self) -> float:
        """Drive the renewals and the open stream for ``duration`` s; returns the
        seconds the phase took, the stragglers' answers included."""
        loop = asyncio.get_running_loop()
        t0 = loop.time() + 0.5
        end = t0 + self.plan.duration
        started = time.perf_counter()
        self.tally.t0 = started + 0.5
        closers: list[asyncio.Task[None]] = []
        tasks = [asyncio.create_task(self._agent(a, t0, end)) for a in self.agents]
        tasks.append(asyncio.create_task(self._opens(t0, end, closers)))
        await asyncio.gather(*tasks)
        self.renewals_ended = datetime.now(UTC)
        await asyncio.gather(*closers)
        return time.perf_counter() - started

    async def _agent(self, agent: Agent, t0: float, end: float) -> None:
        loop = asyncio.get_running_loop()
        interval = agent.ttl / 3 if agent.stale else self.plan.renew
        offset = (agent.index / len(self.agents)) * interval + self.jitter[agent.index]
        at = t0 + offset
        while at < end and at < t0 + agent.stop_at:
            self.tally.renew_offered += 1
            await asyncio.sleep(max(0.0, at - loop.time()))
            self.tally.lag_ms.append((loop.time() - at) * 1000)
            sent = time.perf_counter()
            try:
                r = await self._renew(agent)
            except httpx.HTTPError as exc:
                self.tally.failed("renew", exc)
            else:
                if r.status_code == 200:
                    self.tally.took("renew", self.tally.renew_ms, sent)
                else:
                    self.tally.failed("renew", r)
            at += interval

    async def _renew(self, agent: Agent, ttl: int | None = None) -> httpx.Response:
        body = {
            "expectedLeaseRevision": agent.lease_revision,
            "expectedClaimRevision": agent.claim_revision,
            "ttlSeconds": ttl or agent.ttl,
        }
        r = await self._post(
            agent.server, f"/v1/claims/{agent.claim_id}/renew", body, agent.headers
        )
        if r.status_code == 200:
            self._acknowledged(agent, r.json()["claim"])
        return r

    async def _opens(self, t0: float, end: float, closers: list[asyncio.Task[None]]) -> None:
        loop = asyncio.get_running_loop()
        if self.plan.open_rate <= 0:
            return
        j = 0
        while (at := t0 + j / self.plan.open_rate) < end:
            self.tally.open_offered += 1
            await asyncio.sleep(max(0.0, at - loop.time()))
            closers.append(asyncio.create_task(self._open_one(j)))
            j += 1

    async def _open_one(self, j: int) -> None:
        agent = self.agents[j % len(self.agents)]
        body = self._claim_body(f"opens/{j}/**", 60, "short")
        sent = time.perf_counter()
        try:
            r = await self._post(agent.server, "/v1/claims", body, agent.headers)
        except httpx.HTTPError as exc:
            self.tally.failed("open", exc)
            return
        if r.status_code != 201:
            self.tally.failed("open", r)
            return
        self.tally.took("open", self.tally.open_ms, sent)
        claim = r.json()["claim"]
        record = Opened(
            claim["id"], agent.server, "complete" if j in self.plan.heads else "abandon"
        )
        self.opened.append(record)
        await asyncio.sleep(self.plan.hold)
        sent = time.perf_counter()
        try:
            r = await self._post(
                agent.server,
                f"/v1/claims/{record.claim_id}/{record.close}",
                self._close_body(j, record.close, claim),
                agent.headers,
            )
        except httpx.HTTPError as exc:
            self.tally.failed(record.close, exc)
            return
        if r.status_code != 200:
            self.tally.failed(record.close, r)
            return
        self.tally.took(record.close, self.tally.close_ms, sent)
        record.closed_status = r.json()["claim"]["status"]

    async def _post(
        self, server: int, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> httpx.Response:
        async with self.gates[server]:
            return await self.clients[server].post(path, json=body, headers=headers)

    # -- bodies -------------------------------------------------------------------------

    def _claim_body(self, path: str, ttl: int, what: str) -> dict[str, Any]:
        return {
            "repo": self.plan.repo,
            "objective": f"fleet {what} {path}",
            "baseCommit": self.plan.base_oid,
            "paths": [path],
            "leaseTtlSeconds": ttl,
        }

    def _close_body(self, j: int, how: str, claim: dict[str, Any]) -> dict[str, Any]:
        if how == "abandon":
            return {"expectedClaimRevision": claim["revision"], "headCommit": self.plan.base_oid}
        return {
            "expectedClaimRevision": claim["revision"],
            "fencingToken": claim["fencingToken"],
            "expectedBaseRef": {"ref": f"refs/heads/fleet/{j}", "oid": self.plan.base_oid},
            "evidence": {
                "headCommit": self.plan.heads[j],
                "changedFiles": [f"opens/{j}/done.txt"],
                "tests": [{"name": "fleet", "status": "passed", "exitCode": 0}],
            },
        }

    @staticmethod
    def _acknowledged(agent: Agent, claim: dict[str, Any]) -> None:
        agent.claim_id = claim["id"]
        agent.claim_revision = claim["revision"]
        agent.lease_revision = claim["lease"]["revision"]
        agent.expires_at = claim["lease"]["expiresAt"]
