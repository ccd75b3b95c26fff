"""Each harness's own allow/deny contract, from its documented payloads fed to the hook
commands ``detente init`` wrote (read back from the files it wrote), in local mode on a
real repository: an edit of the session's own file, of another live claim's file, of a
free file under each ``[harness] unclaimed`` policy, and of a symbol another claim holds
inside a file the session's claim holds (through its own symbol of it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from detente.cli.main import app
from detente.client.connect import open_local
from detente.client.seeds import claim_seed

from harness_support import HARNESSES, call, decision, fixture, hook_env, written_commands

FILES = {
    "src/own.py": "def own():\n    return 1\n",
    "src/theirs.py": "def theirs():\n    return 1\n",
    "src/free.py": "def free():\n    return 1\n",
    "src/shared.py": "def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n",
}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


class Repo:
    """A repository set up by ``detente init`` with two live claims: the session's
    (``src/own.py`` and ``src/shared.py::alpha``) and another agent's (``src/theirs.py``
    and ``src/shared.py::beta``)."""

    def __init__(self, tmp: Path, harness: str, unclaimed: str = "advise") -> None:
        self.top = tmp / "project"
        self.top.mkdir()
        self.harness = harness
        _git(self.top, "init", "-q", "-b", "main")
        _git(self.top, "config", "user.name", "Test User")
        _git(self.top, "config", "user.email", "test@example.com")
        for rel, text in FILES.items():
            (self.top / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.top / rel).write_text(text)
        (self.top / "detente.toml").write_text(f'[harness]\nunclaimed = "{unclaimed}"\n')
        _git(self.top, "add", "-A")
        _git(self.top, "commit", "-q", "-m", "initial")
        done = CliRunner().invoke(app, ["--repo", str(self.top), "init", "--json"])
        assert done.exit_code == 0, done.output
        self.commands = written_commands(self.top, harness)
        self.env = hook_env(tmp, DETENTE_LOCAL="1")
        with open_local(self.top) as client:
            name = client.repo_name or ""
            self.mine = self._open(client, name, "alice", f"{harness}-S1", ["src/own.py"], "alpha")
            self.theirs = self._open(client, name, "bob", None, ["src/theirs.py"], "beta")

    def _open(
        self,
        client: object,
        name: str,
        agent: str,
        session: str | None,
        paths: list[str],
        symbol: str,
    ) -> str:
        seed = claim_seed(
            repo=name,
            objective=f"{agent} reworks {paths[0]}",
            agent=agent,
            session=session,
            base_commit="HEAD",
            paths=paths,
            symbols=[f"src/shared.py::{symbol}"],
            ttl=3600,
        )
        view = client.open_claim(seed)  # type: ignore[attr-defined]
        assert view["claim"]["status"] == "active"
        return str(view["claim"]["id"])

    def edit(self, rel: str, old: str, new: str) -> tuple[str, str]:
        """The harness's edit tool changing ``old`` to ``new`` in ``rel``: its verdict."""
        if self.harness == "codex":
            patch = f"*** Begin Patch\n*** Update File: {rel}\n@@\n-{old}\n+{new}\n*** End Patch\n"
            event, payload = fixture(
                "codex", "edit", SESSION="S1", WORKTREE=str(self.top), PATCH=patch
            )
        else:
            event, payload = fixture(
                self.harness,
                "edit",
                SESSION="S1",
                WORKTREE=str(self.top),
                FILE=str(self.top / rel),
                OLD=old,
                NEW=new,
            )
        code, out, err = call(self.commands[event], payload, self.top, self.env)
        assert "Traceback" not in err
        return decision(self.harness, code, out)

    def shell(self, command: str) -> tuple[str, str]:
        event, payload = fixture(
            self.harness, "shell", SESSION="S1", WORKTREE=str(self.top), COMMAND=command
        )
        code, out, _ = call(self.commands[event], payload, self.top, self.env)
        return decision(self.harness, code, out)

    def claim(self, claim_id: str) -> dict[str, object]:
        with open_local(self.top) as client:
            return dict(client.get_claim(claim_id, include=[])["claim"])


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_sessions_own_file_is_allowed_and_another_claims_file_is_denied_naming_it(
    tmp_path: Path, harness: str
) -> None:
    repo = Repo(tmp_path, harness)

    own = repo.edit("src/own.py", "    return 1", "    return 10")
    theirs, reason = repo.edit("src/theirs.py", "    return 1", "    return 10")

    assert own[0] == "allow"
    assert theirs == "deny"
    assert repo.theirs in reason and "bob reworks src/theirs.py" in reason
    assert "lease until" in reason and f"detente claim status {repo.theirs}" in reason
    assert len(reason) <= 1200


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_symbol_another_claim_holds_inside_the_sessions_file_follows_the_authority_rule(
    tmp_path: Path, harness: str
) -> None:
    repo = Repo(tmp_path, harness)

    mine = repo.edit("src/shared.py", "    return 1", "    return 11")
    theirs, reason = repo.edit("src/shared.py", "    return 2", "    return 22")

    assert mine[0] == "allow"  # inside alpha, the session's symbol
    assert theirs == "deny" and repo.theirs in reason  # inside beta, the other claim's


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_free_file_is_allowed_with_advice_under_the_default_policy(
    tmp_path: Path, harness: str
) -> None:
    repo = Repo(tmp_path, harness)

    verdict, said = repo.edit("src/free.py", "    return 1", "    return 10")

    assert verdict == "allow"
    if harness != "cursor" or said:
        assert "src/free.py" in said and "detente claim scope add" in said


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_free_file_is_denied_until_claimed_when_the_policy_requires_a_claim(
    tmp_path: Path, harness: str
) -> None:
    repo = Repo(tmp_path, harness, unclaimed="require")

    verdict, reason = repo.edit("src/free.py", "    return 1", "    return 10")

    assert verdict == "deny"
    assert f"detente claim scope add {repo.mine} -p src/free.py" in reason


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_free_file_joins_the_sessions_claim_when_the_policy_auto_claims(
    tmp_path: Path, harness: str
) -> None:
    repo = Repo(tmp_path, harness, unclaimed="auto-claim")
    before = repo.claim(repo.mine)

    verdict, _ = repo.edit("src/free.py", "    return 1", "    return 10")

    assert verdict == "allow"
    assert "src/free.py" not in before["paths"]  # type: ignore[operator]
    assert "src/free.py" in repo.claim(repo.mine)["paths"]  # type: ignore[operator]


@pytest.mark.parametrize("harness", HARNESSES)
def test_shell_writes_are_judged_where_their_paths_can_be_read(
    tmp_path: Path, harness: str
) -> None:
    repo = Repo(tmp_path, harness)

    redirect, reason = repo.shell("echo x > src/theirs.py")
    sed = repo.shell("sed -i s/1/2/ src/own.py")
    unreadable = repo.shell('python -c \'open("src/theirs.py", "w")\'')
    own_config = repo.shell("echo '{}' > .mcp.json")

    assert redirect == "deny" and repo.theirs in reason
    assert sed[0] == "allow"
    assert unreadable[0] == "allow"  # left to the git hooks
    assert own_config[0] == "deny"


@pytest.mark.parametrize("harness", HARNESSES)
def test_session_start_summarises_the_claims_and_stop_reminds_of_the_open_one(
    tmp_path: Path, harness: str
) -> None:
    repo = Repo(tmp_path, harness)
    start_event, start = fixture(harness, "session_start", SESSION="S1", WORKTREE=str(repo.top))
    stop_event, stop = fixture(harness, "stop", SESSION="S1", WORKTREE=str(repo.top))

    code, out, _ = call(repo.commands[start_event], start, repo.top, repo.env)
    stop_code, stop_out, stop_err = call(repo.commands[stop_event], stop, repo.top, repo.env)

    doc = json.loads(out)
    summary = (
        doc["additional_context"]
        if harness == "cursor"
        else doc["hookSpecificOutput"]["additionalContext"]
    )
    assert code == 0 and stop_code == 0
    assert f"You work under claim {repo.mine}" in summary and repo.theirs in summary
    assert len(summary) <= 1200
    reminder = stop_err if harness == "cursor" else json.loads(stop_out)["systemMessage"]
    assert repo.mine in reminder and "detente claim abandon" in reminder
    with open_local(repo.top) as client:
        agent = client.get_agent(f"{harness}-S1")["agent"]
    assert agent["worktree"] == str(repo.top.resolve())


def test_session_end_ends_the_session_and_its_claim_keeps_its_lease(tmp_path: Path) -> None:
    from datetime import datetime, timedelta

    repo = Repo(tmp_path, "claude")
    event, start = fixture("claude", "session_start", SESSION="S1", WORKTREE=str(repo.top))
    call(repo.commands[event], start, repo.top, repo.env)
    lease = repo.claim(repo.mine)["lease"]
    event, end = fixture("claude", "session_end", SESSION="S1", WORKTREE=str(repo.top))

    code, out, _ = call(repo.commands[event], end, repo.top, repo.env)

    with open_local(repo.top) as client:
        agent = client.get_agent("claude-S1")["agent"]
    ends = datetime.fromisoformat(str(agent["expiresAt"]).replace("Z", "+00:00"))
    registered = datetime.fromisoformat(str(agent["registeredAt"]).replace("Z", "+00:00"))
    assert (code, out) == (0, "")
    assert ends - registered < timedelta(hours=1)  # no longer the session's hour
    assert ends <= datetime.now(ends.tzinfo) + timedelta(seconds=2)
    assert repo.claim(repo.mine)["lease"] == lease


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_git_commands_that_take_every_change_are_judged_on_the_worktrees_changed_files(
    tmp_path: Path, harness: str
) -> None:
    repo = Repo(tmp_path, harness)
    (repo.top / "src" / "own.py").write_text("def own():\n    return 5\n")
    only_own = [repo.shell(c)[0] for c in ("git add -A", "git stash", "git reset --hard")]
    (repo.top / "src" / "theirs.py").write_text("def theirs():\n    return 5\n")

    add_all, reason = repo.shell("git add -A")
    checkout = repo.shell("git checkout -- src/theirs.py")

    assert only_own == ["allow", "allow", "allow"]
    assert add_all == "deny" and repo.theirs in reason
    assert checkout[0] == "deny"


def test_a_gated_call_renews_the_session_without_a_session_start(tmp_path: Path) -> None:
    repo = Repo(tmp_path, "gemini")

    repo.edit("src/own.py", "    return 1", "    return 10")

    with open_local(repo.top) as client:
        agent = client.get_agent("gemini-S1")["agent"]
    assert agent["agentName"] == "gemini" and agent["worktree"] == str(repo.top.resolve())


def test_auto_claim_opens_a_claim_for_a_session_that_holds_none(tmp_path: Path) -> None:
    repo = Repo(tmp_path, "cursor", unclaimed="auto-claim")
    event, payload = fixture(
        "cursor",
        "write",
        SESSION="S2",
        WORKTREE=str(repo.top),
        FILE=str(repo.top / "src/free.py"),
        NEW="x = 1\n",
    )

    code, out, _ = call(repo.commands[event], payload, repo.top, repo.env)

    with open_local(repo.top) as client:
        opened = client.session_claims("cursor-S2")["claims"]
    assert decision("cursor", code, out)[0] == "allow"
    assert [c["paths"] for c in opened] == [["src/free.py"]]
    assert opened[0]["status"] == "active"


def test_a_second_session_in_the_same_checkout_does_not_work_under_the_firsts_claim(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path, "claude", unclaimed="auto-claim")

    def write(session: str) -> tuple[str, str]:
        event, payload = fixture(
            "claude",
            "write",
            SESSION=session,
            WORKTREE=str(repo.top),
            FILE=str(repo.top / "src/free.py"),
            NEW="x = 1\n",
        )
        code, out, _ = call(repo.commands[event], payload, repo.top, repo.env)
        return decision("claude", code, out)

    first = write("S2")
    second, reason = write("S3")

    with open_local(repo.top) as client:
        opened = client.session_claims("claude-S2")["claims"]
    # The repository's own working tree is never a claim's worktree: the session's claim
    # names none and is found by its session.
    assert first[0] == "allow" and opened[0]["worktree"] is None
    assert second == "deny"
    assert opened[0]["id"] in reason


def test_auto_claim_opens_a_claim_for_a_second_session_in_a_checkout_another_claim_uses(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path, "claude", unclaimed="auto-claim")

    def write(session: str, rel: str) -> tuple[str, str]:
        event, payload = fixture(
            "claude",
            "write",
            SESSION=session,
            WORKTREE=str(repo.top),
            FILE=str(repo.top / rel),
            NEW="x = 1\n",
        )
        code, out, _ = call(repo.commands[event], payload, repo.top, repo.env)
        return decision("claude", code, out)

    write("S2", "src/free.py")
    second, said = write("S3", "src/new.py")

    with open_local(repo.top) as client:
        opened = client.session_claims("claude-S3")["claims"]
    assert second == "allow" and "unreachable" not in said
    assert [c["paths"] for c in opened] == [["src/new.py"]]


def test_session_ids_differing_only_where_a_key_cannot_say_so_get_different_keys() -> None:
    from detente.domain.agents.decide import check_session_id
    from detente.harness.context import session_key

    pairs = [("a b", "a_b"), ("x" * 130 + "1", "x" * 130 + "2"), ("é", "è")]
    for one, other in pairs:
        assert session_key("claude", one) != session_key("claude", other)
        assert check_session_id(session_key("claude", one) or "")
    uuid = "9f1c0b7e-4d1a-4f5e-9b0a-1c2d3e4f5a6b"
    assert session_key("codex", uuid) == f"codex-{uuid}"
