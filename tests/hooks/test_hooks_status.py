"""``detente hooks status``: which hooks are present, by which detente, and current or not."""

from __future__ import annotations

from pathlib import Path

from hooks_harness import Server, Shared, detente, git

from detente import __version__
from detente.vcs.hook_status import hooks_status, parse_git_version

SERVER_HOOKS = ["pre-receive", "update", "reference-transaction", "post-receive"]


def test_status_shows_every_server_hook_current_after_install(
    shared: Shared, installed: Server
) -> None:
    found = detente("hooks", "status", "--bare", str(shared.bare))

    assert found["ok"] is True and found["kind"] == "server"
    assert [h["hook"] for h in found["hooks"]] == SERVER_HOOKS
    assert {h["state"] for h in found["hooks"]} == {"current"}
    assert {h["version"] for h in found["hooks"]} == {__version__}
    assert found["config"]["detente.url"] == [installed.url]
    assert found["config"]["detente.protectedref"] == ["refs/heads/main"]
    assert found["referenceTransaction"] is True  # this machine's git is >= 2.28


def test_status_tells_missing_foreign_and_outdated_hooks_apart_and_exits_1(
    shared: Shared, installed: Server
) -> None:
    hooks = shared.bare / "hooks"
    (hooks / "update").unlink()
    (hooks / "post-receive").write_text("#!/bin/sh\necho mine\n")
    old = (hooks / "pre-receive").read_text().replace(__version__, "0.0.1")
    (hooks / "pre-receive").write_text(old)

    found = detente("hooks", "status", "--bare", str(shared.bare), code=1)

    states = {h["hook"]: (h["state"], h["version"]) for h in found["hooks"]}
    assert states == {
        "pre-receive": ("outdated", "0.0.1"),
        "update": ("missing", None),
        "reference-transaction": ("current", __version__),
        "post-receive": ("foreign", None),
    }
    assert found["ok"] is False


def test_status_of_a_claims_repository_shows_the_pre_commit_guard_and_its_mode(
    tmp_path: Path,
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git(checkout, "init", "-q", "-b", "main")
    assert hooks_status(checkout, server=False).hooks[0].state == "missing"

    detente("--repo", str(checkout), "--local", "hooks", "install", "--warn")
    found = detente("--repo", str(checkout), "--local", "hooks", "status")

    assert [(h["hook"], h["state"], h["warn"]) for h in found["hooks"]] == [
        ("pre-commit", "current", True)
    ]


def test_git_versions_are_read_from_git_version_output() -> None:
    assert parse_git_version("git version 2.39.5") == (2, 39, 5)
    assert parse_git_version("git version 2.27.0.windows.1") == (2, 27, 0)
    assert parse_git_version("git version 2.28") == (2, 28)
    assert parse_git_version("nonsense") == (0,)


def test_status_in_a_bare_repository_shows_its_server_hooks_without_being_told(
    shared: Shared, installed: Server
) -> None:
    found = detente("--repo", str(shared.bare), "hooks", "status")

    assert found["kind"] == "server" and found["ok"] is True
    assert [h["hook"] for h in found["hooks"]] == SERVER_HOOKS
