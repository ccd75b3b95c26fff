"""``detente claim ...`` in local mode against a real repository and SQLite store."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from cli_harness import Cli, Git


def test_claim_open_creates_a_worktree_at_the_base_commit_and_prints_the_claim(
    cli: Cli, repo: Path, git: Git
) -> None:
    base = git(repo, "rev-parse", "HEAD~1")

    result = cli("claim", "open", "-o", "Rework the pkg", "-p", "src/pkg/**", "--base", "HEAD~1")

    assert result.exit_code == 0, result.output
    claim_id = re.search(r"claim (clm_\w+)\s+active", result.stdout)
    assert claim_id is not None, result.stdout
    branch = re.search(r"branch\s+(claim/rework-the-pkg-\w+)", result.stdout)
    assert branch is not None, result.stdout
    worktree = repo.parent / "repo.worktrees" / branch.group(1).removeprefix("claim/")
    assert git(worktree, "rev-parse", "HEAD") == base
    assert git(worktree, "symbolic-ref", "--short", "HEAD") == branch.group(1)
    assert "expires in" in result.stdout


def test_claim_open_json_reports_an_active_claim_with_its_worktree(cli: Cli, git: Git) -> None:
    code, body = cli.json(
        "claim", "open", "-o", "docs", "-p", "docs/**", "--agent", "codex",
        "--memory", "AGENTS.md#build", "--memory", "AGENTS.md#test", "--test", "docs-build",
    )  # fmt: skip

    assert code == 0
    assert body["claim"]["memoryImpacts"][0]["path"] == "AGENTS.md"
    assert body["claim"]["memoryImpacts"][0]["sections"] == ["build", "test"]
    assert body["claim"]["testResponsibility"] == ["docs-build"]
    assert body["claim"]["status"] == "active"
    assert body["claim"]["agent"]["name"] == "codex"
    assert body["mode"] == cli.mode
    assert body["worktree"]["branch"] == body["claim"]["branch"]
    assert body["worktree"]["headOid"] == body["claim"]["baseCommit"]
    assert Path(body["claim"]["worktree"]).is_dir()


def test_claim_open_resolves_the_base_before_later_commits_can_leak_in(
    cli: Cli, repo: Path, git: Git
) -> None:
    head = git(repo, "rev-parse", "HEAD")

    body = cli.open("src/**")

    assert body["claim"]["baseCommit"] == head
    (repo / "late.txt").write_text("later\n")
    git(repo, "add", "late.txt")
    git(repo, "commit", "-q", "-m", "later")
    assert git(Path(body["claim"]["worktree"]), "rev-parse", "HEAD") == head


def test_an_overlapping_second_claim_exits_6_with_the_witness_and_the_options(
    cli: Cli,
) -> None:
    first = cli.open("src/**", agent="claude-code")

    result = cli("claim", "open", "-o", "fix a", "-p", "src/pkg/a.py", "--agent", "codex")

    assert result.exit_code == 6, result.output
    assert "negotiating" in result.stdout
    assert "witness src/pkg/a.py" in result.stdout
    assert first["claim"]["id"] in result.stdout
    assert "detente meeting resolve mtg_" in result.stdout
    for label in ("split", "serialize", "handoff", "join", "escalate"):
        assert re.search(rf"^\s+{label}\s+detente ", result.stdout, re.MULTILINE), label


def test_an_overlapping_claim_in_json_lists_overlaps_meeting_and_option_commands(
    cli: Cli,
) -> None:
    first = cli.open("src/**", agent="claude-code")

    code, body = cli.json("claim", "open", "-o", "fix a", "-p", "src/pkg/a.py", "--agent", "codex")

    assert code == 6
    assert body["claim"]["status"] == "negotiating"
    (overlap,) = body["overlaps"]
    assert overlap["claimId"] == first["claim"]["id"]
    assert overlap["targets"][0]["witness"] == "src/pkg/a.py"
    assert body["meeting"]["id"] in body["options"][0]["command"]
    assert {o["type"] for o in body["options"]} >= {"serialize", "handoff", "withdraw"}


def test_a_dotdot_path_exits_2_and_creates_no_claim_branch_or_worktree(
    cli: Cli, repo: Path, git: Git
) -> None:
    code, body = cli.json("claim", "open", "-o", "escape", "-p", "../x")

    assert code == 2
    assert body["code"] == "validation_error"
    assert body["field"] == "paths[0]"
    assert git(repo, "branch", "--list", "claim/*") == ""
    assert len(git(repo, "worktree", "list").splitlines()) == 1
    assert not (repo.parent / "repo.worktrees").exists()
    assert cli.json("claim", "list")[1]["claims"] == []


def test_an_unknown_base_revision_exits_2_before_anything_is_claimed(cli: Cli) -> None:
    code, body = cli.json("claim", "open", "-o", "x", "-p", "src/**", "--base", "no-such-rev")

    assert code == 2
    assert body["field"] == "baseCommit"
    assert cli.json("claim", "list")[1]["claims"] == []


@pytest.mark.parametrize("where", ["under-a-file", "/proc/nope"])
def test_a_worktree_directory_that_cannot_be_made_exits_2_before_anything_is_claimed(
    cli: Cli, repo: Path, where: str
) -> None:
    blocker = repo.parent / "a-file"
    blocker.write_text("not a directory\n")
    target = blocker / "wt" if where == "under-a-file" else Path(where)
    events = cli.json("audit", "verify")[1]["events"]

    code, body = cli.json("claim", "open", "-o", "x", "-p", "src/**", "--worktree-dir", str(target))

    assert code == 2, body
    assert body["code"] == "validation_error" and body["field"] == "worktree"
    assert "cannot create the worktree directory" in body["detail"]
    assert cli.json("claim", "list")[1]["claims"] == []
    assert cli.json("audit", "verify")[1]["events"] == events
    assert not target.exists()


def test_git_refusing_the_worktree_records_no_claim_and_leaves_no_branch(
    cli: Cli, repo: Path, git: Git
) -> None:
    # a place git itself refuses: a registered worktree whose directory was deleted
    stale = repo.parent / "stale-wt"
    git(repo, "worktree", "add", "-q", "-b", "elsewhere", str(stale))
    shutil.rmtree(stale)
    events = cli.json("audit", "verify")[1]["events"]

    code, body = cli.json("claim", "open", "-o", "x", "-p", "src/**", "--worktree-dir", str(stale))

    assert code == 1
    assert body["code"] == "vcs_error"
    assert "already registered worktree" in body["detail"]
    assert cli.json("claim", "list")[1]["claims"] == []
    assert cli.json("audit", "verify")[1]["events"] == events
    assert git(repo, "branch", "--list", "claim/*") == ""
    assert not stale.exists()


def test_no_worktree_opens_the_claim_without_branch_or_worktree(
    cli: Cli, repo: Path, git: Git
) -> None:
    code, body = cli.json("claim", "open", "-o", "docs", "-p", "docs/**", "--no-worktree")

    assert code == 0
    assert body["claim"]["status"] == "active"
    assert body["claim"]["branch"] is None
    assert body["worktree"] is None
    assert git(repo, "branch", "--list", "claim/*") == ""


def test_renew_bumps_the_lease_revision(cli: Cli) -> None:
    claim = cli.open("src/**")["claim"]

    code, body = cli.json("claim", "renew", claim["id"], "--ttl", "900")

    assert code == 0
    assert body["claim"]["lease"]["revision"] == claim["lease"]["revision"] + 1
    assert body["claim"]["lease"]["ttlSeconds"] == 900


def test_renew_with_a_stale_expected_lease_revision_exits_4_with_the_current_record(
    cli: Cli,
) -> None:
    claim = cli.open("src/**")["claim"]
    cli.json("claim", "renew", claim["id"])

    code, body = cli.json("claim", "renew", claim["id"], "--expect-lease-revision", "1")

    assert code == 4
    assert body["code"] == "revision_conflict"
    assert (body["expected"], body["actual"]) == (1, 2)
    assert body["current"]["id"] == claim["id"]


def test_scope_add_into_another_claims_path_exits_6_and_parks_the_path(cli: Cli) -> None:
    cli.open("src/**", agent="claude-code")
    docs = cli.open("docs/**", agent="cursor")["claim"]

    code, body = cli.json("claim", "scope", "add", docs["id"], "-p", "src/pkg/b.py")

    assert code == 6
    assert body["claim"]["pendingPaths"] == ["src/pkg/b.py"]
    assert body["overlaps"][0]["targets"][0]["witness"] == "src/pkg/b.py"


def test_status_shows_the_lease_timer_and_the_changed_files_of_the_worktree(cli: Cli) -> None:
    claim = cli.open("src/**", test="tests/test_pkg.py")["claim"]
    worktree = Path(claim["worktree"])
    (worktree / "src" / "pkg" / "a.py").write_text("a = 10\n")
    (worktree / "src" / "pkg" / "new.py").write_text("n = 1\n")

    code, body = cli.json("claim", "status", claim["id"])
    text = cli("claim", "status", claim["id"]).stdout

    assert code == 0
    assert body["evidence"]["changedFiles"] == ["src/pkg/a.py", "src/pkg/new.py"]
    assert body["evidence"]["headCommit"] == claim["baseCommit"]
    assert body["evidence"]["tests"] == [{"name": "tests/test_pkg.py", "status": "not_run"}]
    assert body["lease"]["timer"].startswith("expires in ")
    assert re.search(r"lease\s+expires in \d+m\d\ds \(at ", text)
    assert "src/pkg/new.py" in text
    assert "semanticOverlaps" not in body  # not computed without --semantic
    code, asked = cli.json("claim", "status", claim["id"], "--semantic")
    assert code == 0 and asked["semanticOverlaps"] == []


def test_abandon_records_the_diff_summary_of_the_worktree(cli: Cli, git: Git) -> None:
    claim = cli.open("src/**")["claim"]
    worktree = Path(claim["worktree"])
    (worktree / "src" / "pkg" / "a.py").write_text("a = 1\nmore = 2\n")
    (worktree / "src" / "pkg" / "c.py").write_text("c = 3\nd = 4\n")
    git(worktree, "add", "-A")
    git(worktree, "commit", "-q", "-m", "work")
    head = git(worktree, "rev-parse", "HEAD")

    code, body = cli.json("claim", "abandon", claim["id"], "--reason", "handing over")

    assert code == 0
    assert body["claim"]["status"] == "abandoned"
    record = body["claim"]["abandonment"]
    assert record["headCommit"] == head
    assert record["diffSummary"] == {
        "files": ["src/pkg/a.py", "src/pkg/c.py"],
        "insertions": 3,
        "deletions": 0,
    }
    assert record["reason"] == "handing over"
    assert worktree.is_dir()


def test_suspend_then_resume_moves_the_claim_and_bumps_its_revision(cli: Cli) -> None:
    claim = cli.open("src/**")["claim"]

    suspended = cli.json("claim", "suspend", claim["id"], "--reason", "lunch")[1]["claim"]
    resumed = cli.json("claim", "resume", claim["id"])[1]["claim"]

    assert suspended["status"] == "suspended"
    assert resumed["status"] == "active"
    assert resumed["revision"] == claim["revision"] + 2


def test_resuming_an_active_claim_exits_7(cli: Cli) -> None:
    claim = cli.open("src/**")["claim"]

    code, body = cli.json("claim", "resume", claim["id"])

    assert code == 7
    assert body["code"] == "invalid_transition"


def test_claim_complete_without_commits_exits_8_with_nothing_to_integrate(cli: Cli) -> None:
    claim = cli.open("src/**")["claim"]

    result = cli("claim", "complete", claim["id"])

    assert result.exit_code == 8
    assert "error[evidence_rejected]" in result.stderr
    assert "no commits to integrate" in result.stderr


def test_claim_list_filters_by_agent_and_path(cli: Cli) -> None:
    mine = cli.open("src/**", agent="claude-code")["claim"]
    cli.open("docs/**", agent="cursor")

    by_agent = cli.json("claim", "list", "--agent", "claude-code")[1]["claims"]
    by_path = cli.json("claim", "list", "--path", "docs/guide.md")[1]["claims"]
    table = cli("claim", "list").stdout

    assert [c["id"] for c in by_agent] == [mine["id"]]
    assert [c["agent"]["name"] for c in by_path] == ["cursor"]
    assert mine["id"] in table and "cursor" in table


def test_an_unknown_claim_exits_3_with_the_problem_on_stdout(cli: Cli) -> None:
    code, body = cli.json("claim", "status", "clm_missing")

    assert code == 3
    assert body["code"] == "not_found"
    assert body["exitCode"] == 3


def test_scope_remove_help_explains_that_the_last_path_cannot_be_removed(cli: Cli) -> None:
    result = cli("claim", "scope", "remove", "--help")
    text = " ".join(result.stdout.split())

    assert result.exit_code == 0
    assert "refused with exit 2" in text
    assert "detente claim abandon" in text


def test_scope_remove_drops_a_module_and_refuses_one_the_claim_does_not_hold(cli: Cli) -> None:
    code, opened = cli.json(
        "claim", "open", "-o", "modules", "-p", "docs/**", "--module", "pkg.core",
        "--module", "pkg.web",
    )  # fmt: skip
    assert code == 0, opened
    claim = opened["claim"]

    code, body = cli.json("claim", "scope", "remove", claim["id"], "--module", "pkg.web")
    assert code == 0
    assert body["claim"]["modules"] == ["pkg.core"]

    code, body = cli.json("claim", "scope", "remove", claim["id"], "--symbol", "Nope.x")
    assert code == 2
    assert body["field"] == "removeSymbols[0]"
    assert "is not one of the claim's symbols" in body["detail"]
