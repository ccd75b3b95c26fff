"""CLI: `claim complete` gathering evidence, `integrate`, `patch`, `deploy` (local mode)."""

from __future__ import annotations

from pathlib import Path

from cli_harness import Cli, Git

PASS = "python3 -c 'import sys; sys.exit(0)'"


def _work(git: Git, claim: dict[str, object], rel: str, text: str, message: str) -> str:
    worktree = Path(str(claim["worktree"]))
    (worktree / rel).write_text(text)
    git(worktree, "commit", "-q", "-am", message)
    return git(worktree, "rev-parse", "HEAD")


def test_claim_complete_runs_the_tests_records_them_and_integrates_main(
    cli: Cli, git: Git, repo: Path
) -> None:
    claim = cli.open("src/pkg/a.py", test="unit")["claim"]
    head = _work(git, claim, "src/pkg/a.py", "a = 2\n", "a two")

    code, body = cli.json("claim", "complete", claim["id"], "--test", f"unit={PASS}")

    assert code == 0, body
    assert body["claim"]["status"] == "completed"
    [record] = body["tests"]
    assert (record["name"], record["status"], record["exitCode"]) == ("unit", "passed", 0)
    assert body["claim"]["evidence"]["changedFiles"] == ["src/pkg/a.py"]
    assert git(repo, "rev-parse", "refs/heads/main") == head


def test_a_failing_test_command_is_recorded_and_the_completion_rejected(
    cli: Cli, git: Git, repo: Path
) -> None:
    claim = cli.open("src/pkg/a.py")["claim"]
    base = git(repo, "rev-parse", "refs/heads/main")
    _work(git, claim, "src/pkg/a.py", "a = 3\n", "a three")

    code, body = cli.json("claim", "complete", claim["id"], "--test", "exit 3")

    assert code == 8 and body["code"] == "evidence_rejected"
    assert "test 'exit 3' exited with code 3" in body["failures"]
    assert git(repo, "rev-parse", "refs/heads/main") == base


def test_complete_no_integrate_then_integrate_moves_main_with_the_accepted_evidence(
    cli: Cli, git: Git, repo: Path
) -> None:
    claim = cli.open("src/pkg/b.py")["claim"]
    head = _work(git, claim, "src/pkg/b.py", "b = 3\n", "b three")

    code, ready = cli.json("claim", "complete", claim["id"], "--no-integrate")
    assert code == 0 and ready["claim"]["status"] == "ready_for_review"
    assert git(repo, "rev-parse", "refs/heads/main") != head

    code, done = cli.json("integrate", claim["id"])
    assert code == 0, done
    assert done["claim"]["status"] == "completed"
    assert git(repo, "rev-parse", "refs/heads/main") == head


def test_a_moved_main_is_stale_base_exit_8_and_the_claim_is_active_again(
    cli: Cli, git: Git, repo: Path
) -> None:
    first = cli.open("src/pkg/a.py", agent="alice")["claim"]
    second = cli.open("src/pkg/b.py", agent="bob")["claim"]
    _work(git, first, "src/pkg/a.py", "a = 4\n", "alice")
    _work(git, second, "src/pkg/b.py", "b = 4\n", "bob")
    assert cli.json("claim", "complete", first["id"])[0] == 0
    moved = git(repo, "rev-parse", "refs/heads/main")

    code, body = cli.json("claim", "complete", second["id"])

    assert code == 8 and body["code"] == "stale_base"
    assert body["actual"] == moved
    assert cli.json("claim", "status", second["id"])[1]["claim"]["status"] == "active"


def test_deploy_needs_the_expected_previous_commit_and_a_stale_one_changes_nothing(
    cli: Cli, git: Git, repo: Path
) -> None:
    claim = cli.open("src/pkg/a.py")["claim"]
    head = _work(git, claim, "src/pkg/a.py", "a = 5\n", "five")
    assert cli.json("claim", "complete", claim["id"])[0] == 0

    code, first = cli.json("deploy", "staging", "--claim", claim["id"], "--expect-prev", "none")
    assert code == 0, first
    assert first["deployment"]["commitOid"] == head
    code, stale = cli.json("deploy", "staging", "--claim", claim["id"], "--expect-prev", "0" * 40)
    assert code == 8 and stale["code"] == "stale_base" and stale["actual"] == head
    code, pending = cli.json(
        "deploy",
        "staging",
        "--claim",
        claim["id"],
        "--expect-prev",
        head,
        "--migration",
        "0007_users=pending",
    )
    assert code == 8 and pending["failures"] == ["migration 0007_users is pending, not applied"]


def test_patch_publish_list_and_apply_in_another_worktree(
    cli: Cli, git: Git, repo: Path, tmp_path: Path
) -> None:
    claim = cli.open("src/pkg/a.py")["claim"]
    _work(git, claim, "src/pkg/a.py", "a = 6\n", "six")

    code, published = cli.json("patch", "publish", claim["id"])
    assert code == 0, published
    patch = published["patch"]
    assert patch["files"] == ["src/pkg/a.py"] and patch["commits"] == 1
    again = cli.json("patch", "publish", claim["id"])[1]
    assert again["patch"]["id"] == patch["id"] and again["created"] is False
    listed = cli.json("patch", "list")[1]["patches"]
    assert [p["id"] for p in listed] == [patch["id"]]

    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "other", str(other), "refs/heads/main")
    code, applied = cli.json("patch", "apply", patch["id"], "--worktree", str(other))
    assert code == 0, applied
    assert (other / "src/pkg/a.py").read_text() == "a = 6\n"
    assert git(other, "log", "-1", "--format=%s") == "six"


def test_completing_a_claim_opened_without_a_worktree_says_so_and_what_to_pass(
    cli: Cli, git: Git, repo: Path
) -> None:
    code, opened = cli.json("claim", "open", "-o", "notes", "-p", "src/pkg/b.py", "--no-worktree")
    assert code == 0, opened
    claim = opened["claim"]
    code, body = cli.json("claim", "complete", claim["id"], "--no-integrate")
    assert code == 2 and body["code"] == "validation_error" and body["field"] == "worktree"
    assert "has no worktree (it was opened with --no-worktree)" in body["detail"]
    assert "not on this machine" not in body["detail"] and "--worktree DIR" in body["detail"]
    assert cli.json("claim", "status", claim["id"])[1]["claim"]["status"] == "active"
