"""A landing the log lost converges: the integration's compare-and-swap moved ``main``,
then the server died (kill -9) before the command's events were stored.

Found by the kill -9 rounds (``tests/storage/test_storage_faults.py``): a completion that
merged over memory commits was killed between its CAS and its commit; no client retried
it, and ``audit verify`` reported the landing missing from the log. Now a server's start
records such landings (``recovered: true``), and a retried completion finds its own merge.

Real git repositories, real SQLite.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from detente.clock import FakeClock
from detente.domain.claims.commands import SetStatus
from detente.domain.claims.model import Claim, ClaimStatus, MemoryImpact
from detente.domain.gates.evidence import BaseRef, Evidence
from detente.domain.gates.integration import CompleteClaim
from detente.domain.memory import commands as mc
from detente.eventlog.envelope import StoredEvent
from detente.server import build_app
from detente.service import RepoConfig, Service
from detente.service.anchor import Anchor
from detente.storage.sqlite import SqliteStore
from detente.vcs.memory_merge import merge_over_memory
from detente.vcs.repo import resolve_commit

from support import git_out, seed


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git_out(root, "init", "-q", "-b", "main")
    (root / "DECISIONS.md").write_text("# Decisions\n")
    (root / "app.py").write_text("print('v1')\n")
    git_out(root, "add", "-A")
    git_out(root, "commit", "-q", "-m", "init")
    return root


def service_on(repo: Path, db: Path) -> Service:
    service = Service(
        SqliteStore(db),
        FakeClock(),
        [RepoConfig("demo", path=repo, main_worktree=repo)],
        resolve_commit=resolve_commit,
    )
    service.anchor = Anchor(repo, repo / ".git" / "anchor.key", f"sqlite:///{db}", every=1000)
    return service


@pytest.fixture
def svc(repo: Path, tmp_path: Path) -> Iterator[Service]:
    service = service_on(repo, tmp_path / "d.db")
    service.memory.register_document(mc.Register("demo", "DECISIONS.md", "append_only"))
    yield service
    service.store.close()


def open_in_worktree(svc: Service, repo: Path, path: str) -> tuple[Claim, str]:
    """A claim on ``path`` in its own worktree, with one commit there: (claim, head)."""
    impacts = (MemoryImpact("DECISIONS.md"),)
    cmd = seed(f"{path}", agent="a1", ttl=600, memory_impacts=impacts)
    base = git_out(repo, "rev-parse", "HEAD")
    claim = svc.claims.open_claim(replace(cmd, base_commit=base, create_worktree=True)).claim
    tree = Path(str(claim.worktree))
    (tree / path).write_text("work = 1\n")
    git_out(tree, "add", "-A")
    git_out(tree, "commit", "-q", "-m", "work")
    return claim, git_out(tree, "rev-parse", "HEAD")


def crash_after_the_cas(svc: Service, repo: Path, claim: Claim, head: str) -> tuple[str, str]:
    """What a completion killed between its CAS and its commit leaves: ``main`` moved to
    a merge of ``head`` over the memory commits, naming the claim; the log unchanged.
    Returns (the tip it merged over, the merge)."""
    svc.memory.append_entry(
        mc.Append("demo", "DECISIONS.md", claim.id, claim.fencing_token, "- late")
    )
    tip = git_out(repo, "rev-parse", "main")
    message = f"detente: integrate {claim.id} over memory commits\n\nDetente-Claim: {claim.id}\n"
    merged = merge_over_memory(repo, tip, head, {"DECISIONS.md"}, message)
    git_out(repo, "update-ref", "refs/heads/main", merged, tip)
    git_out(repo, "read-tree", "-m", "-u", tip, merged)  # the checkout followed, as the CAS does
    return tip, merged


def integrated(svc: Service) -> list[StoredEvent]:
    return [e for e in svc.events(since=0, limit=1000)[0] if e.type == "claim.integrated"]


def test_a_landing_whose_events_were_lost_is_recorded_when_the_server_starts(
    svc: Service, repo: Path
) -> None:
    claim, head = open_in_worktree(svc, repo, "work.py")
    tip, merged = crash_after_the_cas(svc, repo, claim, head)
    assert any("no claim.integrated" in f for f in svc.audit().anchor)

    assert svc.gates.recover_landings() == 1

    [event] = integrated(svc)
    assert event.data["recovered"] is True
    assert (event.data["oldOid"], event.data["newOid"]) == (tip, merged)
    after = svc.claims.get_claim(claim.id).claim
    assert after.status is ClaimStatus.INTEGRATED  # its memory update is still to present
    assert after.evidence is not None and after.evidence["headCommit"] == merged
    assert svc.audit().anchor == [] and svc.audit().ok
    assert svc.gates.recover_landings() == 0  # once
    assert len(integrated(svc)) == 1


def test_a_retried_completion_finds_its_own_merge_instead_of_a_stale_base(
    svc: Service, repo: Path
) -> None:
    claim, head = open_in_worktree(svc, repo, "work.py")
    read_tip = git_out(repo, "rev-parse", "main")
    _, merged = crash_after_the_cas(svc, repo, claim, head)

    done = svc.gates.complete(
        claim.id,
        CompleteClaim(
            claim_id=claim.id,
            expected_claim_revision=claim.revision,
            fencing_token=claim.fencing_token,
            expected_base_ref=BaseRef("refs/heads/main", read_tip),
            evidence=Evidence(
                head_commit=head, changed_files=("work.py",), memory_updates=("DECISIONS.md",)
            ),
        ),
    ).claim

    assert done.status is ClaimStatus.COMPLETED
    assert git_out(repo, "rev-parse", "main") == merged  # not merged a second time
    [event] = integrated(svc)
    assert event.data["recovered"] is True and event.data["newOid"] == merged
    assert svc.audit().anchor == []


def test_a_claim_that_is_no_longer_live_is_left_alone_and_the_audit_still_names_it(
    svc: Service, repo: Path
) -> None:
    claim, head = open_in_worktree(svc, repo, "work.py")
    crash_after_the_cas(svc, repo, claim, head)
    now = svc.claims.get_claim(claim.id).claim
    svc.claims.set_status(SetStatus(now.id, now.revision, ClaimStatus.ABANDONED))

    assert svc.gates.recover_landings() == 0

    assert svc.claims.get_claim(claim.id).claim.status is ClaimStatus.ABANDONED
    assert integrated(svc) == []
    assert any(claim.id in f for f in svc.audit().anchor)


def test_the_served_app_records_a_lost_landing_before_its_first_request(
    repo: Path, tmp_path: Path
) -> None:
    db = tmp_path / "d.db"
    before = service_on(repo, db)
    before.memory.register_document(mc.Register("demo", "DECISIONS.md", "append_only"))
    claim, head = open_in_worktree(before, repo, "work.py")
    crash_after_the_cas(before, repo, claim, head)
    before.store.close()

    service = service_on(repo, db)
    try:
        with TestClient(
            build_app(service, sweep_interval=None), base_url="http://127.0.0.1"
        ) as http:
            shown = http.get(f"/v1/claims/{claim.id}").json()["claim"]
            report = http.get("/v1/audit/verify").json()
    finally:
        service.store.close()

    assert shown["status"] == "integrated"
    assert report["ok"] is True, report
