"""Every update of a protected ref meets the same check, however it arrives.

A real bare repository with the hooks installed, real git commands (push, local
``update-ref``, ``fetch . a:b``, ``merge`` in a worktree of the shared repository, branch
and tag creation and deletion) and a real detente server.
"""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import pytest
from hooks_harness import Server, Shared, commit, detente, git, run_git

from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.gates.evidence import BaseRef, Evidence
from detente.domain.gates.integration import CompleteClaim
from detente.hooks.gitread import HookRepo
from detente.hooks.refcheck import DEFAULT_TIMEOUT, ServerSide
from detente.vcs.hookpass import PASS_ENV, pass_env

from support import seed


def _claim(server: Server, shared: Shared, *paths: str, agent: str = "alice") -> Claim:
    cmd = seed(*paths, repo="shared", agent=agent, branch=f"claim/{agent}")
    return server.service.claims.open_claim(replace(cmd, base_commit=shared.m0)).claim


def _topic(shared: Shared, claim: Claim, rel: str, text: str) -> str:
    """A commit of ``claim`` on ``rel``, pushed to its (unprotected) branch."""
    git(shared.work, "checkout", "-q", "-B", str(claim.branch), shared.m0)
    head = commit(shared.work, rel, text, f"Detente-Claim: {claim.id}")
    git(shared.work, "push", "-q", "origin", f"HEAD:refs/heads/{claim.branch}")
    return head


def _ready(server: Server, claim: Claim, head: str, *files: str) -> None:
    review = CompleteClaim(
        claim.id,
        claim.revision,
        claim.fencing_token,
        BaseRef("refs/heads/main", _main(server)),
        Evidence(head_commit=head, changed_files=files),
        integrate=False,
    )
    done = server.service.gates.complete(claim.id, review).claim
    assert done.status is ClaimStatus.READY_FOR_REVIEW


def _main(server: Server) -> str:
    path = server.service.repos["shared"].path
    assert path is not None
    return git(path, "rev-parse", "refs/heads/main")


def _move_main(shared: Shared, how: str, branch: str, head: str) -> tuple[int, str]:
    """Move ``main`` to ``head`` (the tip of ``branch``) the way ``how`` says."""
    if how == "update-ref":
        done = run_git(shared.bare, "update-ref", "refs/heads/main", head)
    elif how == "fetch":
        done = run_git(shared.bare, "fetch", "-q", ".", f"{branch}:main")
    elif how == "merge":
        tree = shared.bare.parent / "main-worktree"
        if not tree.exists():
            git(shared.bare, "worktree", "add", "-q", str(tree), "main")
        done = run_git(tree, "merge", "-q", "--ff-only", branch)
    else:  # push
        done = run_git(shared.work, "push", "-q", "origin", f"{head}:refs/heads/main")
    return done.returncode, done.stderr


@pytest.mark.parametrize("how", ["update-ref", "fetch", "merge", "push"])
def test_main_moves_to_a_claims_commit_only_once_the_claim_is_ready_and_is_checked_once(
    shared: Shared, installed: Server, how: str
) -> None:
    claim = _claim(installed, shared, "a.py")
    head = _topic(shared, claim, "a.py", "a = 2\n")
    installed.checks.clear()

    code, err = _move_main(shared, how, str(claim.branch), head)
    assert code != 0
    assert f"claim {claim.id} is active, not ready_for_review or integrated" in err
    assert "refusing" in err or "refused" in err
    assert git(shared.bare, "rev-parse", "main") == shared.m0

    _ready(installed, claim, head, "a.py")
    installed.checks.clear()
    code, err = _move_main(shared, how, str(claim.branch), head)
    assert code == 0, err
    assert git(shared.bare, "rev-parse", "main") == head
    assert installed.checks == ["refs/heads/main"]  # one check, whichever hooks ran


def test_a_local_update_ref_to_an_unclaimed_commit_is_refused_and_says_why(
    shared: Shared, installed: Server
) -> None:
    head = commit(shared.work, "b.py", "b = 2\n")
    git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/topic")  # unprotected: passes

    done = run_git(shared.bare, "update-ref", "refs/heads/main", head)

    assert done.returncode != 0
    assert f"commit {head[:12]} has no 'Detente-Claim: <id>' trailer" in done.stderr
    assert "protected refs move only by detente integrations" in done.stderr
    assert git(shared.bare, "rev-parse", "main") == shared.m0


def test_a_refusal_names_the_claim_the_paths_and_the_holder(
    shared: Shared, installed: Server
) -> None:
    alice = _claim(installed, shared, "a.py", agent="alice")
    bob = _claim(installed, shared, "b.py", agent="bob")
    git(shared.work, "checkout", "-q", "-B", "claim/bob", shared.m0)
    (shared.work / "a.py").write_text("bob was here\n")
    commit(shared.work, "b.py", "b = 2\n", f"Detente-Claim: {bob.id}")
    git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/claim/bob")

    done = run_git(shared.bare, "fetch", "-q", ".", "claim/bob:main")

    assert done.returncode != 0
    assert f"a.py is held by claim {alice.id} (alice)" in done.stderr
    assert f"claim {bob.id} is active" in done.stderr
    assert git(shared.bare, "rev-parse", "main") == shared.m0


def test_deleting_main_is_refused_while_other_branches_and_tags_come_and_go_unchecked(
    shared: Shared, installed: Server
) -> None:
    head = commit(shared.work, "b.py", "b = 2\n")
    git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/topic")
    installed.checks.clear()

    deleted = run_git(shared.bare, "update-ref", "-d", "refs/heads/main")
    assert deleted.returncode != 0
    assert "refusing to delete protected ref refs/heads/main" in deleted.stderr
    assert git(shared.bare, "rev-parse", "main") == shared.m0

    git(shared.bare, "branch", "feature", head)
    git(shared.bare, "tag", "v1", head)
    git(shared.bare, "tag", "-a", "-m", "release", "v2", head)
    git(shared.bare, "branch", "-D", "feature")
    git(shared.bare, "branch", "-D", "topic")
    assert git(shared.bare, "tag", "--list") == "v1\nv2"
    assert installed.checks == []  # no protected ref: the server is never asked


def test_creating_a_protected_ref_checks_the_commits_no_protected_ref_has(
    shared: Shared, server: Server
) -> None:
    detente(
        "--server", server.url, "hooks", "install", "--bare", str(shared.bare),
        "--name", "shared", "--protect", "refs/heads/main", "--protect", "refs/heads/release",
    )  # fmt: skip
    head = commit(shared.work, "b.py", "b = 2\n")
    git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/topic")

    made = run_git(shared.bare, "branch", "release", "topic")
    assert made.returncode != 0
    assert f"commit {head[:12]} has no 'Detente-Claim: <id>' trailer" in made.stderr

    git(shared.bare, "branch", "release", "main")  # nothing new: main's commits only
    assert git(shared.bare, "rev-parse", "release") == shared.m0


def test_detentes_own_integration_passes_the_hooks_without_asking_the_server_again(
    shared: Shared, installed: Server
) -> None:
    claim = _claim(installed, shared, "a.py")
    head = _topic(shared, claim, "a.py", "a = 2\n")
    installed.checks.clear()

    done = installed.service.gates.complete(
        claim.id,
        CompleteClaim(
            claim.id,
            claim.revision,
            claim.fencing_token,
            BaseRef("refs/heads/main", shared.m0),
            Evidence(head_commit=head, changed_files=("a.py",)),
        ),
    ).claim

    assert done.status in (ClaimStatus.INTEGRATED, ClaimStatus.COMPLETED)
    assert git(shared.bare, "rev-parse", "main") == head
    assert installed.checks == []  # checked once, by the integration itself


def test_a_pass_lets_through_only_the_update_it_names(shared: Shared, installed: Server) -> None:
    claim = _claim(installed, shared, "a.py")
    head = _topic(shared, claim, "a.py", "a = 2\n")
    other = commit(shared.work, "b.py", "b = 9\n")  # no trailer
    git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/other")
    granted = pass_env(shared.bare, "refs/heads/main", shared.m0, head)
    assert set(granted) == {PASS_ENV}

    reused = run_git(shared.bare, "update-ref", "refs/heads/main", other, shared.m0, env=granted)
    forged = {PASS_ENV: f"refs/heads/main {shared.m0} {other} {'0' * 64}"}
    minted = run_git(shared.bare, "update-ref", "refs/heads/main", other, shared.m0, env=forged)

    assert reused.returncode != 0 and minted.returncode != 0
    assert "has no 'Detente-Claim: <id>' trailer" in minted.stderr
    assert git(shared.bare, "rev-parse", "main") == shared.m0
    exact = run_git(shared.bare, "update-ref", "refs/heads/main", head, shared.m0, env=granted)
    assert exact.returncode == 0, exact.stderr


def test_a_server_that_does_not_answer_in_time_gets_the_update_refused(
    shared: Shared, installed: Server
) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts connections into the backlog, never answers
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        git(shared.bare, "config", "detente.url", url)
        git(shared.bare, "config", "detente.timeout", "0.5")
        head = commit(shared.work, "b.py", "b = 2\n")
        git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/topic")

        done = run_git(shared.bare, "update-ref", "refs/heads/main", head)
    finally:
        silent.close()

    assert done.returncode != 0
    assert f"the detente server at {url} did not answer within 0.5 s" in done.stderr
    assert "failing closed: refusing the update of protected ref refs/heads/main" in done.stderr
    assert git(shared.bare, "rev-parse", "main") == shared.m0


def test_the_server_has_five_seconds_unless_configured(shared: Shared, installed: Server) -> None:
    assert ServerSide.read(HookRepo(shared.bare)).timeout == DEFAULT_TIMEOUT == 5.0
    git(shared.bare, "config", "detente.timeout", "not-a-number")
    assert ServerSide.read(HookRepo(shared.bare)).timeout == 5.0
    git(shared.bare, "config", "detente.timeout", "2.5")
    assert ServerSide.read(HookRepo(shared.bare)).timeout == 2.5


def test_an_unreachable_server_refuses_unless_the_repository_is_in_warn_mode(
    shared: Shared, server: Server
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    args = ["hooks", "install", "--bare", str(shared.bare), "--name", "shared"]
    detente("--server", dead, *args)
    head = commit(shared.work, "b.py", "b = 2\n")
    git(shared.work, "push", "-q", "origin", "HEAD:refs/heads/topic")

    refused = run_git(shared.bare, "update-ref", "refs/heads/main", head)
    assert refused.returncode != 0
    assert f"the detente server at {dead} is unreachable" in refused.stderr

    assert detente("--server", dead, *args, "--warn")["warn"] is True
    warned = run_git(shared.bare, "update-ref", "refs/heads/main", head)
    assert warned.returncode == 0, warned.stderr
    assert "warning only (git config detente.warn): letting the update through" in warned.stderr
    assert git(shared.bare, "rev-parse", "main") == head


def test_a_finished_push_leaves_no_record_behind(shared: Shared, installed: Server) -> None:
    claim = _claim(installed, shared, "a.py")
    head = _topic(shared, claim, "a.py", "a = 2\n")
    _ready(installed, claim, head, "a.py")

    pushed = run_git(shared.work, "push", "origin", f"{head}:refs/heads/main")

    assert pushed.returncode == 0, pushed.stderr
    assert f"claim {claim.id} integrated" in pushed.stderr
    records = shared.bare / "detente" / "checked"
    assert records.is_dir() and list(records.iterdir()) == []


def test_hooks_install_refuses_a_foreign_hook_and_writes_nothing(
    shared: Shared, server: Server, tmp_path: Path
) -> None:
    foreign = shared.bare / "hooks" / "update"
    foreign.write_text("#!/bin/sh\nexit 0\n")
    args = ["hooks", "install", "--bare", str(shared.bare), "--name", "shared"]

    failed = detente("--server", server.url, *args, code=2)

    assert "update exists and was not written by detente" in str(failed)
    assert not (shared.bare / "hooks" / "pre-receive").exists()
    assert foreign.read_text() == "#!/bin/sh\nexit 0\n"


def test_the_update_hook_alone_checks_each_pushed_ref_as_on_an_older_git(
    shared: Shared, installed: Server
) -> None:
    for hook in ("pre-receive", "reference-transaction"):  # what a git < 2.28 server runs
        (shared.bare / "hooks" / hook).unlink()
    head = commit(shared.work, "b.py", "b = 2\n")

    pushed = run_git(shared.work, "push", "origin", "HEAD:main", "HEAD:refs/heads/topic")

    assert pushed.returncode != 0
    assert f"commit {head[:12]} has no 'Detente-Claim: <id>' trailer" in pushed.stderr
    assert git(shared.bare, "rev-parse", "main") == shared.m0
    assert git(shared.bare, "rev-parse", "topic") == head  # only the protected ref refused
    assert installed.checks == ["refs/heads/main"]
