"""A server-mode hook call is one request: the whole judgement of an edit (the session's
claim, the rule, the holder, the room, the options) comes back from ``POST
/v1/hooks/edit-check``, for the session's own file and for another claim's alike.

The server is real (the HTTP application on a real store, on loopback) and the hook runs
in this process, so the requests the light client sends can be listed."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.conftest import running
from detente.client.connect import open_local
from detente.client.seeds import claim_seed
from detente.client.stdlib_http import StdlibHttpClient
from detente.harness.command import run
from detente.runtime import build_service


def _repo(tmp_path: Path) -> Path:
    top = tmp_path / "project"
    (top / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=top, check=True)
    for name in ("own", "held"):
        (top / "src" / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
    subprocess.run(["git", "add", "-A"], cwd=top, check=True)
    ident = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", *ident, "commit", "-qm", "src"], cwd=top, check=True)
    with open_local(top) as client:
        for agent, session, path in (
            ("alice", "claude-s1", "src/own.py"),
            ("bob", None, "src/held.py"),
        ):
            client.open_claim(
                claim_seed(
                    repo=client.repo_name or "project",
                    objective=f"{agent} works on {path}",
                    agent=agent,
                    session=session,
                    base_commit="HEAD",
                    paths=[path],
                    ttl=3600,
                )
            )
    return top


@pytest.fixture
def sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, list[str]]]:
    top = _repo(tmp_path)
    service = build_service([top])
    requests: list[str] = []
    exchange = StdlibHttpClient._exchange

    def listed(self: StdlibHttpClient, method: str, path: str, *rest: Any) -> Any:
        requests.append(f"{method} {path.split('?')[0]}")
        return exchange(self, method, path, *rest)

    monkeypatch.setattr(StdlibHttpClient, "_exchange", listed)
    try:
        with running(service) as url:
            monkeypatch.setenv("DETENTE_URL", url)
            yield top, requests
    finally:
        service.store.close()


def _edit(top: Path, rel: str) -> dict[str, Any]:
    payload = {
        "session_id": "s1",
        "cwd": str(top),
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {
            "file_path": str(top / rel),
            "old_string": "return 1",
            "new_string": "return 2",
        },
    }
    code, out, _ = run("claude", "pre-tool", json.dumps(payload), cwd=top)
    assert code == 0
    return json.loads(out) if out.strip() else {}


def test_an_edit_of_the_own_file_and_of_a_held_file_each_take_one_request(
    sent: tuple[Path, list[str]],
) -> None:
    top, requests = sent
    _edit(top, "src/own.py")  # the first call looks the name up and renews the session
    requests.clear()

    own = _edit(top, "src/own.py")
    after_own = list(requests)
    held = _edit(top, "src/held.py")

    assert "permissionDecision" not in json.dumps(own)
    reason = held["hookSpecificOutput"]["permissionDecisionReason"]
    assert "bob works on src/held.py" in reason and "lease until" in reason
    assert after_own == ["POST /v1/hooks/edit-check"]
    assert requests == ["POST /v1/hooks/edit-check"] * 2
