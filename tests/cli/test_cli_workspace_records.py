"""What the CLI gathers from a claim's worktree before abandon and completion: a recorded
worktree that is a plain directory (not a git checkout) is not the claim's worktree, so
abandoning or reading the evidence still works instead of failing inside git."""

from __future__ import annotations

from pathlib import Path

from detente.cli.workspace import evidence, local_worktree, release_record

from source_repo import make_source_repo


def test_a_plain_directory_recorded_as_the_worktree_is_treated_as_absent(tmp_path: Path) -> None:
    plain = tmp_path / "etc-like"
    plain.mkdir()
    (plain / "passwd").write_text("root:x:0:0\n")
    claim = {"worktree": str(plain), "baseCommit": "a" * 40}

    assert local_worktree(claim) is None
    assert release_record(claim) == (None, {})
    gathered = evidence(claim)
    assert gathered["worktreePresent"] is False
    assert (
        f"the claim's worktree {plain} is not a git checkout on this machine" in gathered["missing"]
    )


def test_a_claim_opened_without_a_worktree_is_said_to_have_none() -> None:
    gathered = evidence({"id": "clm_1", "worktree": None, "baseCommit": "a" * 40})
    assert "claim clm_1 has no worktree (it was opened with --no-worktree)" in gathered["missing"]


def test_a_real_checkout_is_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    base = make_source_repo(repo)
    (repo / "README.md").write_text("# changed\n")

    head, summary = release_record({"worktree": str(repo), "baseCommit": base})

    assert head == base
    assert summary["files"] == ["README.md"]
