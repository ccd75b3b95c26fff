"""The fleet bench's checks after a run, read back over HTTP from the servers.

- **No acknowledged write lost**: every acknowledged open is a claim the store holds, in
  the status its acknowledged close answered (if it was closed); every agent's claim holds
  a lease revision and a deadline at least the last ones acknowledged to it.
- **Expiries swept once**: every stale agent's claim has exactly one ``claim.expired``
  event in the log; no renewing agent's claim and no claim has more than one.

:func:`verdicts` is pure (what the tests of the bench call); the readers page through
``GET /v1/claims`` (``limit`` 1,000) and ``GET /v1/events`` (1,000 per page).
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
from _fleet_load import Agent, Opened

__all__ = ["Verdict", "read_claims", "read_expiries", "settle", "verdicts"]

EXPIRED = "claim.expired"


@dataclass(frozen=True)
class Verdict:
    """One check: its name, whether it held, and what broke it (a few examples)."""

    name: str
    ok: bool
    detail: str


async def read_claims(client: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, Any]:
    """Every claim the store holds, by id."""
    claims: dict[str, Any] = {}
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 1000}
        if cursor:
            params["cursor"] = cursor
        r = await client.get("/v1/claims", params=params, headers=headers)
        r.raise_for_status()
        page = r.json()
        claims.update((c["id"], c) for c in page["claims"])
        cursor = page.get("nextCursor")
        if not cursor:
            return claims


async def read_expiries(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> dict[str, list[datetime]]:
    """The times of the ``claim.expired`` events the log holds, per claim id."""
    counts: dict[str, list[datetime]] = defaultdict(list)
    since = 0
    while True:
        r = await client.get("/v1/events", params={"since": since, "limit": 1000}, headers=headers)
        r.raise_for_status()
        page = r.json()
        for event in page["events"]:
            if event["type"] == EXPIRED:
                counts[_claim_of(event)].append(_when(event["at"]))
        if not page["events"]:
            return dict(counts)
        since = page["nextSince"]


def _claim_of(event: dict[str, Any]) -> str:
    data = event.get("data") or {}
    return str(data.get("claimId") or event.get("subject"))


async def settle(
    client: httpx.AsyncClient, headers: dict[str, str], stale: list[Agent], limit_s: float
) -> float:
    """Wait (at most ``limit_s``) until every stale agent's claim reads ``expired``;
    returns the seconds waited."""
    started = time.monotonic()
    want = {a.claim_id for a in stale}
    while want:
        claims = await read_claims(client, headers)
        want = {c for c in want if claims[c]["status"] != "expired"}
        if not want or time.monotonic() - started > limit_s:
            break
        await asyncio.sleep(1.0)  # the sweeper's own period; a bench, not a test
    return time.monotonic() - started


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _examples(items: Iterable[str]) -> str:
    items = list(items)
    return f"{len(items)}: {', '.join(items[:3])}" if items else ""


def verdicts(
    agents: list[Agent],
    opened: list[Opened],
    claims: dict[str, Any],
    expiries: dict[str, list[datetime]],
    ended: datetime,
) -> list[Verdict]:
    """The checks of one run from what was acknowledged and what the store holds now.

    ``expiries``: the ``claim.expired`` times per claim id; ``ended``: when the timed
    phase ended (UTC). A renewing agent's claim may expire after the run (its agent
    stopped renewing), never before its acknowledged deadline, nor during the run."""
    missing = [o.claim_id for o in opened if o.claim_id not in claims]
    moved = [
        o.claim_id
        for o in opened
        if o.claim_id in claims
        and o.closed_status is not None
        and claims[o.claim_id]["status"] != o.closed_status
    ]
    behind = []
    for agent in agents:
        held = claims.get(agent.claim_id)
        if held is None:
            behind.append(f"{agent.claim_id} missing")
            continue
        lease = held["lease"]
        if lease["revision"] < agent.lease_revision or _when(lease["expiresAt"]) < _when(
            agent.expires_at
        ):
            behind.append(
                f"{agent.claim_id} lease r{lease['revision']} {lease['expiresAt']} "
                f"< acknowledged r{agent.lease_revision} {agent.expires_at}"
            )
    stale = [a.claim_id for a in agents if a.stale]
    times = defaultdict(list, expiries)
    not_once = [f"{c} x{len(times[c])}" for c in stale if len(times[c]) != 1]
    early = [
        f"{a.claim_id} at {at:%H:%M:%S.%f} < {a.expires_at}"
        for a in agents
        for at in times[a.claim_id]
        if at < _when(a.expires_at)
    ]
    renewed = [
        a.claim_id for a in agents if not a.stale and any(at < ended for at in times[a.claim_id])
    ]
    twice = [f"{c} x{len(at)}" for c, at in expiries.items() if len(at) > 1]
    return [
        Verdict(
            "every acknowledged open is held, as its close left it",
            not missing and not moved,
            "; ".join(
                s
                for s in (
                    missing and f"missing {_examples(missing)}",
                    moved and f"status moved {_examples(moved)}",
                )
                if s
            ),
        ),
        Verdict(
            "every agent's lease >= its last acknowledged renewal", not behind, _examples(behind)
        ),
        Verdict(
            f"each of the {len(stale)} stale claims expired exactly once",
            not not_once,
            _examples(not_once),
        ),
        Verdict("no lease expired before its acknowledged deadline", not early, _examples(early)),
        Verdict("no renewing agent's claim expired in the run", not renewed, _examples(renewed)),
        Verdict("no claim expired twice", not twice, _examples(twice)),
    ]
