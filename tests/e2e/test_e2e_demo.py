"""``detente demo`` end to end on a small repository with history."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from e2e_harness import DETENTE


def test_the_demo_reports_an_overlap_witness_an_expired_claim_and_a_passing_audit(
    repo: Path,
) -> None:
    proc = subprocess.run(
        [*DETENTE, "demo", "--repo", str(repo), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["ok"] is True
    assert summary["overlap"]["witness"].startswith("src/app/")
    assert summary["overlap"]["theirs"] == "src/**"
    assert summary["claims"]["codex"]["status"] == "abandoned"
    assert summary["expired"] == [summary["claims"]["cursor"]["id"]]
    assert [r["leaseRevision"] for r in summary["renewed"]] == [2, 2]
    assert summary["changedFiles"] == [summary["overlap"]["witness"]]
    assert "claim.expired" in summary["eventTypes"]
    assert summary["auditOk"] is True
    assert "[stream] #1 " in proc.stderr
    assert not Path(summary["clone"]).exists()
