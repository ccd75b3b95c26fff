"""The fleet bench's own checks: a lost write or a double expiry is reported, not missed.

``verdicts`` is judged on hand-made acknowledgements and store readings; the slow test
runs the bench itself for 3 seconds on two servers and one PostgreSQL.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

from _fleet_checks import verdicts  # noqa: E402
from _fleet_load import Agent, Opened  # noqa: E402

from storage.servers import postgres_bindir, require_binary  # noqa: E402


def _agent(claim_id: str, *, stale: bool = False, lease: int = 3, at: str = "05:00:30") -> Agent:
    agent = Agent(index=0, server=0, headers={}, stale=stale, ttl=90, claim_id=claim_id)
    agent.lease_revision, agent.expires_at = lease, f"2026-12-02T{at}Z"
    return agent


def _held(status: str, lease: int = 3, at: str = "05:00:30") -> dict[str, Any]:
    return {"status": status, "lease": {"revision": lease, "expiresAt": f"2026-12-02T{at}Z"}}


def _t(at: str) -> datetime:
    return datetime.fromisoformat(f"2026-12-02T{at}+00:00")


ENDED = _t("05:00:40")


def _failed(checks: list[Any]) -> dict[str, str]:
    return {v.name: v.detail for v in checks if not v.ok}


def test_a_run_whose_store_holds_every_acknowledgement_passes_every_check() -> None:
    agents = [_agent("c1"), _agent("c2", stale=True)]
    opened = [Opened("o1", 0, "complete", "completed"), Opened("o2", 0, "abandon", None)]
    claims = {
        "c1": _held("active", lease=4, at="05:01:00"),
        "c2": _held("expired"),
        "o1": _held("completed"),
        "o2": _held("active"),
    }
    expired = {"c2": [_t("05:00:31")], "c1": [_t("05:01:01")]}  # c1: after the run
    assert _failed(verdicts(agents, opened, claims, expired, ENDED)) == {}


def test_a_renewal_the_store_no_longer_holds_is_reported_as_lost() -> None:
    claims = {"c1": _held("active", lease=4)}
    checks = verdicts([_agent("c1", lease=5)], [], claims, {}, ENDED)
    [(name, detail)] = _failed(checks).items()
    assert name.startswith("every agent's lease") and "r4" in detail and "r5" in detail


def test_a_deadline_moved_back_is_reported_even_at_the_same_revision() -> None:
    claims = {"c1": _held("active", at="05:00:10")}
    assert list(_failed(verdicts([_agent("c1")], [], claims, {}, ENDED))) == [
        "every agent's lease >= its last acknowledged renewal"
    ]


def test_a_missing_open_and_a_close_the_store_forgot_are_reported() -> None:
    opened = [Opened("gone", 0, "abandon"), Opened("o1", 0, "complete", "completed")]
    failed = _failed(verdicts([], opened, {"o1": _held("active")}, {}, ENDED))
    detail = failed["every acknowledged open is held, as its close left it"]
    assert "missing 1: gone" in detail and "status moved 1: o1" in detail


def test_an_expiry_twice_a_stale_claim_never_swept_and_a_renewed_claim_expired_fail() -> None:
    agents = [_agent("s1", stale=True), _agent("s2", stale=True), _agent("r1")]
    claims = {"s1": _held("expired"), "s2": _held("active"), "r1": _held("expired")}
    expired = {"s1": [_t("05:00:31"), _t("05:00:32")], "r1": [_t("05:00:35")]}
    failed = _failed(verdicts(agents, [], claims, expired, ENDED))
    assert failed == {
        "each of the 2 stale claims expired exactly once": "2: s1 x2, s2 x0",
        "no renewing agent's claim expired in the run": "1: r1",
        "no claim expired twice": "1: s1 x2",
    }


def test_a_lease_expired_before_the_deadline_its_renewal_was_given_is_reported() -> None:
    agents = [_agent("s1", stale=True, at="05:00:30")]
    failed = _failed(
        verdicts(agents, [], {"s1": _held("expired")}, {"s1": [_t("05:00:29")]}, ENDED)
    )
    assert failed == {
        "no lease expired before its acknowledged deadline": "1: s1 at 05:00:29.000000 < "
        "2026-12-02T05:00:30Z"
    }


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_three_second_fleet_on_two_servers_loses_nothing_and_expires_once() -> None:
    require_binary("PostgreSQL (initdb)", postgres_bindir())
    src = str(BENCH.parent / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    args = ["--servers", "2", "--agents", "20", "--duration", "3", "--renew-seconds", "1"]
    args += ["--stale-share", "0.1", "--stale-ttl", "2", "--open-rate", "4", "--hold-seconds", "1"]
    run = subprocess.run(
        [sys.executable, str(BENCH / "fleet.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    for check in (
        "no 5xx",
        "every acknowledged open is held, as its close left it",
        "every agent's lease >= its last acknowledged renewal",
        "each of the 2 stale claims expired exactly once",
        "no lease expired before its acknowledged deadline",
        "no renewing agent's claim expired in the run",
        "no claim expired twice",
    ):
        assert f"  ok  {check}" in lines, run.stdout
    [row] = [ln for ln in lines if ln.startswith("| 2 | 20 |")]
    assert len(row.split("|")) == 23
