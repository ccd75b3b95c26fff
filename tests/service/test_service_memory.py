"""Memory documents through the service, on real files in a real git repository.

The ``store`` fixture runs each test on the memory and the SQLite store. Concurrency
tests use real threads released together by a barrier; every wait is bounded.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import SetStatus
from detente.domain.claims.model import Claim, ClaimStatus, MemoryImpact
from detente.domain.meetings.commands import Resolve
from detente.domain.meetings.resolution_types import resolution_from_wire
from detente.domain.memory import commands as mc
from detente.errors import (
    DetenteError,
    ForbiddenError,
    LeaseExpired,
    OverlapBlocking,
    RevisionConflict,
    StaleFencingToken,
    StoreError,
    ValidationError,
)
from detente.service import RepoConfig, Service
from detente.service.memory import DocumentView
from detente.storage.base import Store

from support import counting_ids, seed

CLAUDE = b"# CLAUDE.md\n\nShared intro.\n\n## Build\n\nRun make.\n\n## Style\n\nUse black.\n"
AGENTS = (
    b"# AGENTS\n\nManual text, never touched.\n\n"
    b"<!-- detente:begin generated claims -->\n<!-- detente:end generated claims -->\n"
    b"\nMore manual text.\n"
)


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return proc.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "CLAUDE.md").write_bytes(CLAUDE)
    (root / "AGENTS.md").write_bytes(AGENTS)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "memory files")
    return root


@pytest.fixture
def svc(store: Store, clock: FakeClock, repo: Path) -> Service:
    return Service(store, clock, [RepoConfig("demo", repo)], ids=counting_ids())


def claim(svc: Service, agent: str, *sections: str, path: str = "CLAUDE.md", **kw: Any) -> Claim:
    impact = MemoryImpact(path, sections=sections)
    return svc.claims.open_claim(seed(agent=agent, memory_impacts=(impact,), **kw)).claim


def patch(
    svc: Service, c: Claim, key: str, text: str, view: DocumentView, **kw: Any
) -> DocumentView:
    fields: dict[str, Any] = {
        "expected_section_revision": view.section(key)["revision"],
        "expected_file_hash": view.document.file_hash,
        "fencing_token": c.fencing_token,
        "body": text,
    }
    fields.update(kw)
    return svc.memory.patch_section(
        mc.PatchSection("demo", "CLAUDE.md", key, claim_id=c.id, **fields)
    )


def race(n: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(i)`` in ``n`` threads released together; results or raised errors."""
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
        t.join(timeout=30)
        assert not t.is_alive(), "a writer did not finish within 30 s"
    return results


def test_six_concurrent_section_writes_with_one_base_revision_have_exactly_one_winner(
    svc: Service, repo: Path
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    c = claim(svc, "alice", "build")
    bodies = [f"\nWriter {i} was here.\n\n" for i in range(6)]

    results = race(6, lambda i: patch(svc, c, "build", bodies[i], base))

    wins = [r for r in results if isinstance(r, DocumentView)]
    conflicts = [r for r in results if isinstance(r, RevisionConflict)]
    assert len(wins) == 1 and len(conflicts) == 5, results
    assert wins[0].section("build")["revision"] == 2
    assert all(e.expected == 1 and e.actual == 2 for e in conflicts)
    winner = bodies[results.index(wins[0])]
    assert svc.memory.branch.settle("demo")  # racing writers: the checkout follows behind
    assert (repo / "CLAUDE.md").read_bytes() == CLAUDE.replace(b"\nRun make.\n\n", winner.encode())
    assert svc.audit().ok


def test_two_owners_edit_their_own_sections_concurrently_and_both_edits_survive(
    svc: Service, repo: Path
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    a, b = claim(svc, "alice", "build"), claim(svc, "bob", "style")
    assert a.status is b.status is ClaimStatus.ACTIVE
    edits = [(a, "build", "\nRun ninja.\n\n"), (b, "style", "\nUse ruff.\n")]

    results = race(2, lambda i: patch(svc, edits[i][0], edits[i][1], edits[i][2], base))

    assert all(isinstance(r, DocumentView) for r in results), results
    expected = CLAUDE.replace(b"Run make.", b"Run ninja.").replace(b"Use black.", b"Use ruff.")
    assert svc.memory.branch.settle("demo")  # racing writers: the checkout follows behind
    assert (repo / "CLAUDE.md").read_bytes() == expected
    assert sorted(bool(r.details["merged"]) for r in results) == [False, True]
    owners = {
        s["key"]: s["ownerClaimId"]
        for s in svc.memory.list_documents("demo")[0].to_wire()["sections"]
    }
    assert owners["build"] == a.id and owners["style"] == b.id

    # A whole-file write from the stale revision is refused; the file is unchanged.
    with pytest.raises(RevisionConflict):
        svc.memory.write_document(
            mc.WriteFile(
                "demo",
                "CLAUDE.md",
                base.document.revision,
                str(base.document.file_hash),
                a.id,
                a.fencing_token,
                CLAUDE.decode().replace("make", "cmake"),
            )
        )
    assert (repo / "CLAUDE.md").read_bytes() == expected


def test_a_stale_write_that_would_delete_sections_of_others_is_refused_naming_them(
    svc: Service, repo: Path
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    a, b = claim(svc, "alice", "build"), claim(svc, "bob", "style")
    patch(svc, a, "build", "\nRun ninja.\n\n", base)
    before = (repo / "CLAUDE.md").read_bytes()
    truncated = CLAUDE.decode().split("## Style")[0]

    with pytest.raises(RevisionConflict) as caught:
        svc.memory.write_document(
            mc.WriteFile(
                "demo",
                "CLAUDE.md",
                base.document.revision,
                str(base.document.file_hash),
                a.id,
                a.fencing_token,
                truncated,
            )
        )

    assert caught.value.extra["sections"] == ["style"]
    assert "delete style" in caught.value.detail and b.id not in caught.value.detail
    assert (repo / "CLAUDE.md").stat().st_size == len(before)
    assert (repo / "CLAUDE.md").read_bytes() == before


def test_a_stale_section_revision_is_a_409_and_writes_nothing(svc: Service, repo: Path) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    c = claim(svc, "alice", "build")
    after_first = patch(svc, c, "build", "\nfirst\n\n", base)
    on_disk = (repo / "CLAUDE.md").read_bytes()

    with pytest.raises(RevisionConflict) as caught:
        patch(svc, c, "build", "\nsecond\n\n", base)

    assert caught.value.extra["current"]["revision"] == after_first.document.revision
    assert (repo / "CLAUDE.md").read_bytes() == on_disk


def test_a_user_edit_elsewhere_is_merged_and_kept(svc: Service, repo: Path) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    c = claim(svc, "alice", "build")
    user = CLAUDE.replace(b"Shared intro.", b"Shared intro, edited by a human.")
    (repo / "CLAUDE.md").write_bytes(user)

    view = patch(svc, c, "build", "\nRun ninja.\n\n", base)

    assert view.details["merged"] is True
    assert (repo / "CLAUDE.md").read_bytes() == user.replace(b"Run make.", b"Run ninja.")
    assert view.to_wire()["onDisk"]["inSync"] is True


def branch_copy(repo: Path, path: str = "CLAUDE.md") -> bytes:
    """The authoritative copy: the file in the tip of ``main``."""
    return subprocess.run(
        ["git", "show", f"main:{path}"], cwd=repo, check=True, capture_output=True
    ).stdout


def test_a_users_uncommitted_edit_of_a_section_wins_by_revision_and_the_agent_gets_409(
    svc: Service, repo: Path
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    c = claim(svc, "alice", "build")
    user = CLAUDE.replace(b"Run make.", b"Run bazel (human).")
    (repo / "CLAUDE.md").write_bytes(user)

    with pytest.raises(RevisionConflict) as caught:
        patch(svc, c, "build", "\nRun ninja.\n\n", base)

    assert (caught.value.expected, caught.value.actual) == (1, 2)
    assert branch_copy(repo) == user and (repo / "CLAUDE.md").read_bytes() == user
    [doc] = svc.memory.list_documents("demo")
    assert doc.section("build")["revision"] == 2 and doc.section("style")["revision"] == 1
    assert doc.to_wire()["onDisk"]["inSync"] and doc.to_wire()["checkouts"][0]["state"] == "current"
    # The agent re-reads and patches on the new revision: both texts are kept in history.
    again = patch(svc, c, "build", "\nRun ninja.\n\n", doc)
    assert again.section("build")["revision"] == 3
    assert branch_copy(repo) == CLAUDE.replace(b"Run make.", b"Run ninja.")
    assert svc.audit().ok


def test_a_users_edit_of_a_section_racing_an_agents_patch_keeps_both_texts(
    svc: Service, repo: Path
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    c = claim(svc, "alice", "build")
    user = CLAUDE.replace(b"Run make.", b"Run bazel (human).")
    agent = CLAUDE.replace(b"Run make.", b"Run ninja.")

    # The agent's patch lands first; the human had started from the version before it,
    # and their save reached the checkout before the write did (so the checkout did not
    # follow: its index still names the old version).
    patch(svc, c, "build", "\nRun ninja.\n\n", base)
    assert (repo / "CLAUDE.md").read_bytes() == agent
    old = f"100644,{git_blob(repo, CLAUDE)},CLAUDE.md"
    subprocess.run(["git", "update-index", "--cacheinfo", old], cwd=repo, check=True)
    (repo / "CLAUDE.md").write_bytes(user)

    [doc] = svc.memory.list_documents("demo")
    [copy] = doc.to_wire()["checkouts"]
    assert copy["state"] == "edited"
    # Both edits changed the same lines: the human's stays in the checkout, untouched; the
    # branch keeps the agent's; the next write leaves both where they are.
    view = patch(svc, c, "build", "\nRun ninja -j8.\n\n", doc)
    assert view.section("build")["revision"] == 3
    assert (repo / "CLAUDE.md").read_bytes() == user
    assert branch_copy(repo) == CLAUDE.replace(b"Run make.", b"Run ninja -j8.")


def git_blob(repo: Path, data: bytes) -> str:
    found = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=repo,
        input=data,
        check=True,
        capture_output=True,
    )
    return found.stdout.decode().strip()


def test_a_users_edit_committed_on_the_branch_becomes_a_new_section_revision(
    svc: Service, repo: Path
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    c = claim(svc, "alice", "style")
    user = CLAUDE.replace(b"Run make.", b"Run bazel (human).")
    (repo / "CLAUDE.md").write_bytes(user)
    git(repo, "commit", "-q", "-am", "human edit")

    view = patch(svc, c, "style", "\nUse ruff.\n", base)

    assert view.section("build")["revision"] == 2 and view.section("style")["revision"] == 2
    assert branch_copy(repo) == user.replace(b"Use black.", b"Use ruff.")
    assert (repo / "CLAUDE.md").read_bytes() == branch_copy(repo)


def test_fencing_a_late_write_with_an_older_token_is_refused(svc: Service) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    old = claim(svc, "old", "build", advisory=True)
    new = claim(svc, "new", "build", advisory=True)
    assert old.fencing_token < new.fencing_token
    view = patch(svc, new, "build", "\nnew\n\n", base)

    with pytest.raises(StaleFencingToken):
        patch(svc, old, "build", "\nold\n\n", view)
    with pytest.raises(StaleFencingToken):
        patch(svc, new, "build", "\nx\n\n", view, fencing_token=new.fencing_token - 1)


def test_writes_need_a_live_claim_that_covers_the_section_and_nobody_elses(
    svc: Service, clock: FakeClock
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    a = claim(svc, "alice", "build")
    b = claim(svc, "bob", "style", ttl=5)

    with pytest.raises(ForbiddenError):
        patch(svc, a, "style", "\nx\n", base)
    with pytest.raises(OverlapBlocking):
        patch(svc, claim(svc, "carol", "build"), "build", "\nx\n", base)
    clock.advance(6)
    with pytest.raises(LeaseExpired):
        patch(svc, b, "style", "\nx\n", base)


def test_a_diff_patch_changes_its_section_and_may_not_reach_outside(
    svc: Service, repo: Path
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    c = claim(svc, "alice", "build")
    inside = "--- a/CLAUDE.md\n+++ b/CLAUDE.md\n@@ -7 +7 @@\n-Run make.\n+Run make -j8.\n"
    outside = "--- a/CLAUDE.md\n+++ b/CLAUDE.md\n@@ -11 +11 @@\n-Use black.\n+Use ruff.\n"

    with pytest.raises(ValidationError):
        patch(svc, c, "build", "", base, body=None, diff=outside)
    view = patch(svc, c, "build", "", base, body=None, diff=inside)

    assert (repo / "CLAUDE.md").read_bytes() == CLAUDE.replace(b"Run make.", b"Run make -j8.")
    assert view.section("build")["revision"] == 2


def test_fifty_concurrent_appends_are_all_present_and_never_interleaved(
    svc: Service, repo: Path
) -> None:
    svc.memory.register_document(mc.Register("demo", "docs/decisions.md", "append_only"))
    writers = [svc.claims.open_claim(seed(f"w{i}/**", agent=f"w{i}")).claim for i in range(5)]
    entries = [f"- entry {i:02d} " + "x" * 200 + f" end {i:02d}" for i in range(50)]

    def work(i: int) -> DocumentView:
        w = writers[i % 5]
        return svc.memory.append_entry(
            mc.Append("demo", "docs/decisions.md", w.id, w.fencing_token, entries[i])
        )

    results = race(50, work)

    assert all(isinstance(r, DocumentView) for r in results), results
    assert svc.memory.branch.settle("demo")  # racing writers: the checkout follows behind
    lines = (repo / "docs" / "decisions.md").read_text().splitlines()
    assert sorted(lines) == sorted(entries)
    [doc] = [d for d in svc.memory.list_documents("demo") if d.document.path == "docs/decisions.md"]
    assert doc.document.revision == 51 and doc.to_wire()["onDisk"]["inSync"]


def test_an_append_only_document_refuses_writes_that_change_existing_bytes(
    svc: Service, repo: Path
) -> None:
    (repo / "RISKS.md").write_bytes(b"- risk one\n")
    view = svc.memory.register_document(mc.Register("demo", "RISKS.md", "append_only"))
    c = svc.claims.open_claim(seed("src/**")).claim

    def write(content: str) -> DocumentView:
        return svc.memory.write_document(
            mc.WriteFile(
                "demo",
                "RISKS.md",
                view.document.revision,
                str(view.document.file_hash),
                c.id,
                c.fencing_token,
                content,
            )
        )

    with pytest.raises(ForbiddenError):
        write("- risk 1\n")
    with pytest.raises(ForbiddenError):
        svc.memory.patch_section(mc.PatchSection("demo", "RISKS.md", "x", 0, "", c.id, 1, body="y"))
    assert (repo / "RISKS.md").read_bytes() == b"- risk one\n"
    write("- risk one\n- risk two\n")
    assert (repo / "RISKS.md").read_bytes() == b"- risk one\n- risk two\n"


def test_a_private_document_is_registered_but_never_coordinated(svc: Service, repo: Path) -> None:
    (repo / "NOTES.md").write_bytes(b"# scratch\n")
    view = svc.memory.register_document(mc.Register("demo", "NOTES.md", "private"))
    c = claim(svc, "alice", path="NOTES.md")

    assert view.document.file_hash is None and view.to_wire()["onDisk"] is None
    assert svc.memory.list_documents("demo")[0].document.sections == ()
    assert svc.fresh("demo").memory.private_paths() == {"NOTES.md"}
    with pytest.raises(ForbiddenError):
        svc.memory.patch_section(
            mc.PatchSection("demo", "NOTES.md", "scratch", 0, "", c.id, 1, body="y")
        )
    with pytest.raises(RevisionConflict):
        svc.memory.register_document(mc.Register("demo", "NOTES.md", "section_owned"))


@pytest.mark.parametrize(
    "broken",
    [
        AGENTS.replace(b"<!-- detente:end generated claims -->\n", b""),
        AGENTS.replace(b"<!-- detente:begin generated claims -->\n", b"")
        + b"<!-- detente:begin generated claims -->\n",
        AGENTS.replace(
            b"<!-- detente:end generated claims -->\n",
            b"<!-- detente:begin generated claims -->\n<!-- detente:end generated claims -->\n",
        ),
    ],
    ids=["missing-end", "reversed", "two-begins"],
)
def test_regeneration_with_bad_markers_fails_and_leaves_the_file_byte_identical(
    svc: Service, repo: Path, broken: bytes
) -> None:
    svc.memory.register_document(mc.Register("demo", "AGENTS.md", "generated"))
    (repo / "AGENTS.md").write_bytes(broken)
    git(repo, "commit", "-q", "-am", "a human breaks the markers")

    with pytest.raises(ValidationError):
        svc.memory.render(mc.Render("demo", "AGENTS.md"))
    [result] = svc.memory.render(mc.Render("demo"))

    assert result["error"]["code"] == "validation_error"
    assert (repo / "AGENTS.md").read_bytes() == broken
    assert branch_copy(repo, "AGENTS.md") == broken


def test_regeneration_renders_live_claims_and_leaves_manual_text_byte_identical(
    svc: Service, repo: Path
) -> None:
    svc.memory.register_document(mc.Register("demo", "AGENTS.md", "generated"))
    c = claim(svc, "alice", "build")

    [result] = svc.memory.render(mc.Render("demo", "AGENTS.md"))

    data = (repo / "AGENTS.md").read_bytes()
    head, _, rest = AGENTS.partition(b"<!-- detente:begin generated claims -->\n")
    tail = rest.partition(b"<!-- detente:end generated claims -->\n")[2]
    assert data.startswith(head) and data.endswith(tail)
    assert f"`{c.id}` alice (active)".encode() in data
    assert result["rendered"] == ["claims"]
    assert svc.memory.render(mc.Render("demo", "AGENTS.md"))[0]["rendered"] == []


def test_a_user_edit_in_a_generated_region_survives_rendering_and_opens_a_reconciliation(
    svc: Service, repo: Path
) -> None:
    svc.memory.register_document(mc.Register("demo", "AGENTS.md", "generated"))
    svc.memory.render(mc.Render("demo", "AGENTS.md"))
    edited = (
        (repo / "AGENTS.md")
        .read_bytes()
        .replace(b"- (no live claims)\n", b"- (no live claims)\n- please ask bob first\n")
    )
    (repo / "AGENTS.md").write_bytes(edited)
    claim(svc, "alice", "build")

    [result] = svc.memory.render(mc.Render("demo", "AGENTS.md"))

    assert (repo / "AGENTS.md").read_bytes() == edited
    [rec_id] = result["reconciliations"]
    events, _ = svc.events(repo="demo", limit=1000)
    opened = [e for e in events if e.type == "memory.reconciliation_opened"]
    assert [e.data["reconciliationId"] for e in opened] == [rec_id]
    assert "+- please ask bob first" in opened[0].data["diff"]
    assert svc.memory.render(mc.Render("demo", "AGENTS.md"))[0]["reconciliations"] == []

    view = svc.memory.reconcile(
        mc.Reconcile("demo", "AGENTS.md", "overlay", reconciliation_id=rec_id)
    )

    data = (repo / "AGENTS.md").read_bytes()
    assert b"<!-- detente:end generated claims -->\n\n- please ask bob first\n" in data
    assert b"alice (active)" in data
    assert view.document.reconciliations[0].status == "resolved"
    assert svc.audit().ok


def test_a_failed_commit_undoes_the_file_write(
    svc: Service, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    c = claim(svc, "alice", "build")
    original_commit = svc.commit_events

    def failing(tx: Any, state: Any, events: Any, *actor: Any) -> Any:
        if any(e.type == "memory.section_patched" for e in events):
            raise StoreError("disk full")
        return original_commit(tx, state, events, *actor)

    monkeypatch.setattr(svc, "commit_events", failing)
    with pytest.raises(StoreError):
        patch(svc, c, "build", "\nRun ninja.\n\n", base)

    assert (repo / "CLAUDE.md").read_bytes() == CLAUDE
    monkeypatch.undo()
    assert svc.memory.list_documents("demo")[0].document.revision == 1


def test_a_patch_naming_a_worktree_lands_on_the_branch_and_leaves_that_worktree_alone(
    svc: Service, repo: Path, tmp_path: Path
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    c = claim(svc, "alice", "build")
    tree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "topic", str(tree))

    patch(svc, c, "build", "\nRun ninja.\n\n", base, worktree=str(tree))

    assert branch_copy(repo) == CLAUDE.replace(b"Run make.", b"Run ninja.")
    assert (repo / "CLAUDE.md").read_bytes() == branch_copy(repo)  # main's checkout followed
    assert (tree / "CLAUDE.md").read_bytes() == CLAUDE  # picked up when it rebases
    with pytest.raises(ValidationError):
        patch(svc, c, "build", "\nx\n\n", base, worktree=str(tmp_path))


def test_memory_impacts_on_one_section_overlap_and_on_different_sections_do_not(
    svc: Service,
) -> None:
    a = claim(svc, "alice", "build")
    b = claim(svc, "bob", "style")
    c = svc.claims.open_claim(
        seed(agent="carol", memory_impacts=(MemoryImpact("CLAUDE.md", sections=("build",)),))
    )

    assert a.status is b.status is ClaimStatus.ACTIVE
    assert c.claim.status is ClaimStatus.NEGOTIATING
    assert [o.claim_id for o in c.overlaps] == [a.id]
    assert c.overlaps[0].targets[0].witness == "CLAUDE.md#build"


def test_the_memory_index_holds_the_impacts_of_holding_claims_only(svc: Service) -> None:
    a = claim(svc, "alice", "build")
    b = claim(svc, "bob", path="docs/AGENTS.md")
    book = svc.fresh("demo").claims
    assert book.memory_index.candidates("CLAUDE.md") == {a.id}
    assert book.memory_index.candidates("docs/**") == {b.id}

    svc.claims.set_status(SetStatus(a.id, a.revision, ClaimStatus.ABANDONED))
    book = svc.fresh("demo").claims
    assert book.memory_index.candidates("CLAUDE.md") == set()
    assert book.memory_holders == {b.id}
    # An abandoned claim's impact meets nobody: a new claim on the file is not negotiating.
    c = svc.claims.open_claim(seed(agent="carol", memory_impacts=(MemoryImpact("CLAUDE.md"),)))
    assert c.claim.status is ClaimStatus.ACTIVE and c.overlaps == []


def test_a_split_ownership_resolution_assigns_sections_that_each_claim_may_then_patch(
    svc: Service, repo: Path
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    a = claim(svc, "alice")
    b_view = svc.claims.open_claim(seed(agent="bob", memory_impacts=(MemoryImpact("CLAUDE.md"),)))
    assert b_view.claim.status is ClaimStatus.NEGOTIATING
    meeting = b_view.meetings[0]
    assignments = [
        {"claimId": a.id, "targets": ["CLAUDE.md#build"]},
        {"claimId": b_view.claim.id, "targets": ["CLAUDE.md#style"]},
    ]
    svc.meetings.resolve(
        Resolve(
            meeting.id,
            meeting.revision,
            resolution_from_wire({"type": "split_ownership", "assignments": assignments}),
            "human",
        )
    )
    b = svc.claims.get_claim(b_view.claim.id).claim
    assert b.status is ClaimStatus.ACTIVE

    with pytest.raises(ForbiddenError):  # the resolution narrowed alice to #build
        patch(svc, a, "style", "\nUse ruff.\n", base)
    patch(svc, a, "build", "\nRun ninja.\n\n", base)
    patch(svc, b, "style", "\nUse ruff.\n", base)

    expected = CLAUDE.replace(b"Run make.", b"Run ninja.").replace(b"Use black.", b"Use ruff.")
    assert (repo / "CLAUDE.md").read_bytes() == expected
    owners = {
        s["key"]: s["ownerClaimId"]
        for s in svc.memory.list_documents("demo")[0].to_wire()["sections"]
    }
    assert (owners["build"], owners["style"]) == (a.id, b.id)


def test_private_memory_documents_are_ignored_by_overlap_analysis(tmp_path: Path) -> None:
    import subprocess

    from detente.clock import FakeClock
    from detente.domain.claims.model import MemoryImpact
    from detente.domain.memory.commands import Register
    from detente.service import RepoConfig, Service
    from detente.storage.memory import MemoryStore

    from support import seed

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "alice.md").write_text("# scratch\n")
    svc = Service(MemoryStore(), FakeClock(), [RepoConfig("demo", path=tmp_path)])
    impact = (MemoryImpact("notes/alice.md"),)
    first = svc.claims.open_claim(seed("a.py", memory_impacts=impact)).claim
    assert [
        o.claim_id for o in svc.claims.open_claim(seed("notes/alice.md", agent="bob")).overlaps
    ] == [first.id]
    svc.memory.register_document(Register("demo", "notes/alice.md", "private"))
    third = svc.claims.open_claim(seed("b.py", agent="carol", memory_impacts=impact))
    assert third.overlaps == []


def test_a_glob_a_split_carved_a_memory_file_out_of_no_longer_refuses_its_new_owner(
    svc: Service,
) -> None:
    base = svc.memory.register_document(mc.Register("demo", "CLAUDE.md", "section_owned"))
    holder = svc.claims.open_claim(seed("*.md", agent="h", ttl=3600)).claim
    owner = svc.claims.open_claim(seed("CLAUDE.md", agent="o", ttl=3600)).claim
    meeting = svc.meetings.get_meeting(owner.meeting_ids[0])
    svc.meetings.resolve(
        Resolve(
            meeting.id,
            meeting.revision,
            resolution_from_wire(
                {
                    "type": "split_ownership",
                    "assignments": [
                        {"claimId": owner.id, "targets": ["CLAUDE.md"]},
                        {"claimId": holder.id, "targets": []},
                    ],
                }
            ),
            "lead",
        )
    )
    assert svc.claims.get_claim(holder.id).claim.carve_outs == (("*.md", ("CLAUDE.md",)),)
    owner = svc.claims.get_claim(owner.id).claim
    assert owner.status is ClaimStatus.ACTIVE

    after = patch(svc, owner, "build", "\nRun make -j.\n", base)
    assert after.section("build")["revision"] > base.section("build")["revision"]
    with pytest.raises(ForbiddenError, match=r"does not cover CLAUDE\.md#build"):
        patch(svc, holder, "build", "\nagain\n", after)
