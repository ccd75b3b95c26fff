"""Rounds of two integrations racing from the same expected OID, on SQLite.

250 rounds by default (the CI budget); ``DETENTE_RACE_ROUNDS=1000`` for a longer soak.

Each round two fresh claims with distinct files both try to advance ``refs/heads/main``
from the same old OID, from two threads released together through the service: exactly
one wins, the other gets ``stale_base`` carrying the winner's OID. The round's commits
are written as loose objects directly (zlib, no git process) so the test spends its time
in the code under test.
"""

from __future__ import annotations

import hashlib
import os
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.gates.integration import CompleteClaim
from detente.errors import StaleBase
from detente.service import Service
from gates_support import at, completion, git, hermetic, make_service

from support import seed

ROUNDS = int(os.environ.get("DETENTE_RACE_ROUNDS", "250"))


@pytest.fixture(autouse=True)
def _hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic(tmp_path, monkeypatch)


class LooseObjects:
    """Writes blobs, flat trees and commits straight into ``.git/objects``."""

    def __init__(self, repo: Path) -> None:
        self.objects = repo / ".git" / "objects"

    def write(self, kind: str, body: bytes) -> str:
        raw = f"{kind} {len(body)}\0".encode() + body
        oid = hashlib.sha1(raw).hexdigest()
        path = self.objects / oid[:2] / oid[2:]
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(zlib.compress(raw, 1))
        return oid

    def tree(self, entries: dict[str, str]) -> str:
        body = b"".join(
            b"100644 " + name.encode() + b"\0" + bytes.fromhex(oid)
            for name, oid in sorted(entries.items())
        )
        return self.write("tree", body)

    def commit(self, tree: str, parent: str, message: str, when: float) -> str:
        stamp = f"{int(at(when).timestamp())} +0000"
        parents = f"parent {parent}\n" if parent else ""
        body = (
            f"tree {tree}\n{parents}author T <t@example.com> {stamp}\n"
            f"committer T <t@example.com> {stamp}\n\n{message}\n"
        )
        return self.write("commit", body.encode())


def _attempt(
    service: Service, cmd: CompleteClaim, gate: threading.Barrier
) -> tuple[str, str | None]:
    """``(the claim's status, None)`` or ``("stale", the OID the ref moved to)``."""
    gate.wait(timeout=30)
    try:
        view = service.gates.complete(cmd.claim_id, cmd)
    except StaleBase as exc:
        assert exc.extra["current"]["status"] == ClaimStatus.ACTIVE.value
        return "stale", exc.extra.get("actual")
    return view.claim.status.value, None


@pytest.mark.slow
def test_each_racing_round_has_one_winner_and_the_loser_gets_stale_base_with_its_oid(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    objects = LooseObjects(repo)
    entries = {"README": objects.write("blob", b"race\n")}
    tip = objects.commit(objects.tree(entries), parent="", message="base", when=0)
    git(repo, "update-ref", "refs/heads/main", tip)
    service = make_service(repo, tmp_path / "detente.db")

    def fresh(side: str, r: int) -> tuple[Claim, str]:
        name = f"r{r:04d}{side}.txt"
        claim = service.claims.open_claim(
            replace(seed(name, agent=f"agent-{side}"), base_commit=tip)
        )
        assert claim.claim.status is ClaimStatus.ACTIVE
        return claim.claim, name

    winners: list[str] = []
    losers: list[str] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for r in range(ROUNDS):
            slots = {side: fresh(side, r) for side in ("a", "b")}
            heads: dict[str, str] = {}
            cmds: dict[str, CompleteClaim] = {}
            for side, (claim, name) in slots.items():
                blob = objects.write("blob", f"{name}\n".encode())
                heads[side] = objects.commit(
                    objects.tree({**entries, name: blob}), tip, f"round {r} {side}", when=r
                )
                cmds[side] = completion(claim, heads[side], tip, (name,))
            gate = threading.Barrier(2)
            futures = {s: pool.submit(_attempt, service, cmds[s], gate) for s in slots}
            results = {s: f.result(timeout=60) for s, f in futures.items()}

            won = [s for s, (status, _) in results.items() if status != "stale"]
            assert len(won) == 1, (r, results)
            winner, loser = won[0], "b" if won[0] == "a" else "a"
            assert results[winner][0] == ClaimStatus.COMPLETED.value
            assert results[loser] == ("stale", heads[winner]), (r, results)
            winners.append(slots[winner][0].id)
            losers.append(slots[loser][0].id)
            name = slots[winner][1]
            entries[name] = objects.write("blob", f"{name}\n".encode())
            tip = heads[winner]

    assert git(repo, "rev-parse", "refs/heads/main") == tip
    done = service.claims.list_claims(status=ClaimStatus.COMPLETED.value)
    assert sorted(c.id for c in done) == sorted(winners)
    assert all(c.integration and c.integration["outcome"] == "integrated" for c in done)
    back = service.claims.list_claims(status=ClaimStatus.ACTIVE.value)
    assert sorted(c.id for c in back) == sorted(losers)
    assert all(c.evidence and c.evidence["stale"] for c in back)
    assert service.audit().ok
