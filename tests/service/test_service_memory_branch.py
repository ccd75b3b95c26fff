"""Memory documents hold when every claim works in a worktree of its own: one authoritative
copy (the integration branch's), every acknowledged write in it exactly once, claims that
complete, and a human's edit that wins or loses by compare-and-swap, never silently.

Real git repositories, real SQLite, real threads released together by a barrier.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from detente.clock import FakeClock
from detente.domain.claims.model import Claim, ClaimStatus, MemoryImpact
from detente.domain.gates.evidence import BaseRef, Evidence
from detente.domain.gates.integration import CompleteClaim
from detente.domain.memory import commands as mc
from detente.domain.memory.markdown import digest, parse
from detente.errors import DetenteError, RevisionConflict
from detente.service import RepoConfig, Service
from detente.service.memory import DocumentView
from detente.storage.sqlite import SqliteStore
from detente.vcs.repo import resolve_commit

from support import seed

AGENTS = b"# Agents\n\n## Alpha\n\nalpha v1\n\n## Beta\n\nbeta v1\n\n## Gamma\n\ngamma v1\n"
KEYS = ("alpha", "beta", "gamma")


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    return (
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, input=input)
        .stdout.decode()
        .strip()
    )


def on_main(repo: Path, path: str) -> bytes:
    """The authoritative copy: ``path`` in the tip of ``main``."""
    return subprocess.run(
        ["git", "show", f"main:{path}"], cwd=repo, check=True, capture_output=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "AGENTS.md").write_bytes(AGENTS)
    (root / "DECISIONS.md").write_bytes(b"# Decisions\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('v1')\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture
def svc(repo: Path, tmp_path: Path) -> Iterator[Service]:
    service = Service(
        SqliteStore(tmp_path / "d.db"),
        FakeClock(),
        [RepoConfig("demo", path=repo, main_worktree=repo)],
        resolve_commit=resolve_commit,
    )
    service.memory.register_document(mc.Register("demo", "AGENTS.md", "section_owned"))
    service.memory.register_document(mc.Register("demo", "DECISIONS.md", "append_only"))
    yield service
    service.store.close()


def race(n: int, work: Callable[[int], Any]) -> list[Any]:
    """``work(i)`` in ``n`` threads released together; results or the errors raised."""
    barrier = threading.Barrier(n, timeout=10)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except DetenteError as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a writer did not finish within 60 s"
    return results


def open_in_worktree(svc: Service, repo: Path, i: int) -> Claim:
    impacts = (MemoryImpact("AGENTS.md", sections=(KEYS[i],)), MemoryImpact("DECISIONS.md"))
    cmd = seed(f"src/p{i}/**", agent=f"agent{i}", ttl=600, memory_impacts=impacts)
    head = git(repo, "rev-parse", "HEAD")
    claim = svc.claims.open_claim(replace(cmd, base_commit=head, create_worktree=True)).claim
    assert claim.status is ClaimStatus.ACTIVE and claim.worktree is not None
    return claim


def patch(svc: Service, claim: Claim, key: str, body: str, view: DocumentView) -> DocumentView:
    return svc.memory.patch_section(
        mc.PatchSection(
            "demo",
            "AGENTS.md",
            key,
            expected_section_revision=view.section(key)["revision"],
            expected_file_hash=str(view.document.file_hash),
            claim_id=claim.id,
            fencing_token=claim.fencing_token,
            body=body,
        )
    )


def agents_doc(svc: Service) -> DocumentView:
    [doc] = svc.memory.list_documents("demo", "AGENTS.md")
    return doc


def test_three_claims_in_worktrees_write_memory_in_parallel_and_every_write_is_on_main_once(
    svc: Service, repo: Path
) -> None:
    claims = [open_in_worktree(svc, repo, i) for i in range(3)]
    read = agents_doc(svc)
    entries = [f"- decision {n:02d} by {claims[n % 3].id}" for n in range(15)]

    def work(n: int) -> DocumentView:
        if n < 15:
            c = claims[n % 3]
            return svc.memory.append_entry(
                mc.Append("demo", "DECISIONS.md", c.id, c.fencing_token, entries[n])
            )
        i = n - 15
        return patch(svc, claims[i], KEYS[i], f"\n{KEYS[i]} v2 by {claims[i].id}\n\n", read)

    results = race(18, work)

    assert all(isinstance(r, DocumentView) for r in results), results
    decisions = on_main(repo, "DECISIONS.md").decode()
    assert all(decisions.count(e) == 1 for e in entries), decisions
    agents = on_main(repo, "AGENTS.md")
    for i, key in enumerate(KEYS):
        assert agents.count(f"{key} v2 by {claims[i].id}".encode()) == 1
        assert f"{key} v1".encode() not in agents
    # memory show: each section's revision with the hash of main's copy; no drift anywhere.
    shown = agents_doc(svc).to_wire()
    outline = parse(agents, path="AGENTS.md")
    for section in shown["sections"]:
        span = outline.section(section["key"])
        assert span is not None and section["hash"] == digest(span.text(agents))
        if section["key"] in KEYS:  # (the "# Agents" section holds them: one revision each)
            assert section["revision"] == 2
    assert shown["onDisk"]["inSync"] and shown["onDisk"]["fileHash"] == digest(agents)
    assert [c["state"] for c in shown["checkouts"]] == ["current"]  # the main checkout followed
    assert (repo / "AGENTS.md").read_bytes() == agents
    assert git(repo, "status", "--porcelain") == ""
    [log] = svc.memory.list_documents("demo", "DECISIONS.md")
    assert log.to_wire()["onDisk"]["inSync"] and log.document.revision == 16

    # The owner of #beta patches on the revision it reads, and succeeds.
    again = patch(svc, claims[1], "beta", "\nbeta v3\n\n", agents_doc(svc))
    assert again.section("beta")["revision"] == 3 and b"beta v3" in on_main(repo, "AGENTS.md")

    # Each claim completes with its own change, rebased onto main (which carries the memory).
    for i, c in enumerate(claims):
        tree = Path(str(c.worktree))
        (tree / "src" / f"p{i}").mkdir(parents=True)
        (tree / "src" / f"p{i}" / "work.py").write_text(f"work = {i}\n")
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", f"work {i}")
        git(tree, "rebase", "-q", "main")
        tip, head = git(repo, "rev-parse", "main"), git(tree, "rev-parse", "HEAD")
        current = svc.claims.get_claim(c.id).claim
        done = svc.gates.complete(
            c.id,
            CompleteClaim(
                claim_id=c.id,
                expected_claim_revision=current.revision,
                fencing_token=current.fencing_token,
                expected_base_ref=BaseRef("refs/heads/main", tip),
                evidence=Evidence(
                    head_commit=head,
                    changed_files=(f"src/p{i}/work.py",),
                    memory_updates=("AGENTS.md", "DECISIONS.md"),
                ),
            ),
        ).claim
        assert done.status is ClaimStatus.COMPLETED, done
        assert git(repo, "rev-parse", "main") == head
        updates = (done.evidence or {})["memoryUpdates"]
        assert all("@" in u for u in updates), updates  # by document revision
    assert on_main(repo, "DECISIONS.md").decode().count("- decision") == 15
    assert svc.audit().ok


def test_a_human_committing_a_section_while_an_agent_patches_it_has_one_winner_by_cas(
    svc: Service, repo: Path
) -> None:
    owner = open_in_worktree(svc, repo, 0)
    read = agents_doc(svc)
    tip = git(repo, "rev-parse", "main")
    human = AGENTS.replace(b"alpha v1", b"alpha by a human")
    (repo / "AGENTS.md").write_bytes(human)  # the human's edit, in the main checkout
    blob = git(repo, "hash-object", "-w", "--stdin", input=human)
    tree = git(
        repo,
        "mktree",
        input=git(repo, "ls-tree", tip)
        .replace(git(repo, "rev-parse", f"{tip}:AGENTS.md"), blob)
        .encode()
        + b"\n",
    )
    human_commit = git(repo, "commit-tree", tree, "-p", tip, "-m", "human edit")

    def work(n: int) -> Any:
        if n == 0:
            return patch(svc, owner, "alpha", "\nalpha by an agent\n\n", read)
        # What `git commit` does at its end: move main from the tip it read, or fail.
        moved = subprocess.run(
            ["git", "update-ref", "refs/heads/main", human_commit, tip], cwd=repo,
            capture_output=True,
        )  # fmt: skip
        return moved.returncode == 0

    agent, human_won = race(2, work)

    agent_won = isinstance(agent, DocumentView)
    assert agent_won != human_won, (agent, human_won)  # exactly one wins
    shown = agents_doc(svc)
    if human_won:
        assert isinstance(agent, RevisionConflict) and agent.actual == 2
        assert on_main(repo, "AGENTS.md") == human
        assert shown.section("alpha")["revision"] == 2
    else:
        assert b"alpha by an agent" in on_main(repo, "AGENTS.md")
        assert (repo / "AGENTS.md").read_bytes() == human  # the human's text stays
        [copy] = shown.to_wire()["checkouts"]
        assert copy["state"] == "edited" and copy["fileHash"] == digest(human)
    assert shown.to_wire()["onDisk"]["inSync"]
    assert svc.audit().ok


def test_a_claim_whose_base_moved_only_by_memory_commits_integrates_as_a_merge(
    svc: Service, repo: Path
) -> None:
    c = open_in_worktree(svc, repo, 0)
    tree = Path(str(c.worktree))
    (tree / "src" / "p0").mkdir(parents=True)
    (tree / "src" / "p0" / "work.py").write_text("work = 0\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "work")
    read_tip, head = git(repo, "rev-parse", "main"), git(tree, "rev-parse", "HEAD")
    svc.memory.append_entry(mc.Append("demo", "DECISIONS.md", c.id, c.fencing_token, "- late"))
    memory_tip = git(repo, "rev-parse", "main")
    assert memory_tip != read_tip

    done = svc.gates.complete(
        c.id,
        CompleteClaim(
            claim_id=c.id,
            expected_claim_revision=c.revision,
            fencing_token=c.fencing_token,
            expected_base_ref=BaseRef("refs/heads/main", read_tip),
            evidence=Evidence(
                head_commit=head,
                changed_files=("src/p0/work.py",),
                memory_updates=("AGENTS.md", "DECISIONS.md"),
            ),
        ),
    ).claim

    assert done.status is ClaimStatus.COMPLETED
    tip = git(repo, "rev-parse", "main")
    assert git(repo, "rev-parse", f"{tip}^1", f"{tip}^2").split() == [memory_tip, head]
    assert b"- late" in on_main(repo, "DECISIONS.md")
    assert on_main(repo, "src/p0/work.py") == b"work = 0\n"
    assert git(repo, "status", "--porcelain") == ""  # the main checkout followed


def test_a_claim_whose_base_moved_by_a_human_commit_must_rebase(svc: Service, repo: Path) -> None:
    c = open_in_worktree(svc, repo, 0)
    tree = Path(str(c.worktree))
    (tree / "src" / "p0").mkdir(parents=True)
    (tree / "src" / "p0" / "work.py").write_text("work = 0\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "work")
    read_tip, head = git(repo, "rev-parse", "main"), git(tree, "rev-parse", "HEAD")
    (repo / "src" / "app.py").write_text("print('v2')\n")
    git(repo, "commit", "-q", "-am", "a human's change")

    with pytest.raises(DetenteError) as refused:
        svc.gates.complete(
            c.id,
            CompleteClaim(
                claim_id=c.id,
                expected_claim_revision=c.revision,
                fencing_token=c.fencing_token,
                expected_base_ref=BaseRef("refs/heads/main", read_tip),
                evidence=Evidence(head_commit=head, changed_files=("src/p0/work.py",)),
            ),
        )

    assert refused.value.code == "stale_base"
