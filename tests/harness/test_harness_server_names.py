"""In server mode a hook call asks the server for the repository's name once, and later
calls use the name remembered; a remembered name the server no longer serves is
forgotten, looked up again, and the edit still judged by the server.

The server is real (the HTTP application on a real store, on loopback) and the hook runs
in this process so the server's answers to ``GET /v1/repos`` can be counted."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.conftest import running
from detente.client.connect import open_local
from detente.client.seeds import claim_seed
from detente.harness.command import run
from detente.runtime import build_service
from detente.service import Service


def _repo(tmp_path: Path) -> Path:
    top = tmp_path / "project"
    (top / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=top, check=True)
    (top / "src" / "held.py").write_text("def held():\n    return 1\n")
    subprocess.run(["git", "add", "-A"], cwd=top, check=True)
    ident = ["-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", *ident, "commit", "-qm", "src"], cwd=top, check=True)
    with open_local(top) as client:
        client.open_claim(
            claim_seed(
                repo=client.repo_name or "project",
                objective="bob works on src/held.py",
                agent="bob",
                session=None,
                base_commit="HEAD",
                paths=["src/held.py"],
                ttl=3600,
            )
        )
    return top


class _Served:
    def __init__(self, top: Path, service: Service, url: str, lookups: list[str]) -> None:
        self.top, self.service, self.url, self.lookups = top, service, url, lookups

    def edit_held(self) -> dict[str, object]:
        payload = {
            "session_id": "s1",
            "cwd": str(self.top),
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {
                "file_path": str(self.top / "src" / "held.py"),
                "old_string": "return 1",
                "new_string": "return 2",
            },
        }
        code, out, _ = run("claude", "pre-tool", json.dumps(payload), cwd=self.top)
        assert code == 0
        answer: dict[str, object] = json.loads(out)
        return answer

    @property
    def memo(self) -> Path:
        return self.top / ".git" / "detente" / "harness" / "server-names.json"


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Served]:
    top = _repo(tmp_path)
    service = build_service([top])
    lookups: list[str] = []
    listed = service.list_repos

    def counting_list_repos() -> object:
        lookups.append("repos")
        return listed()

    monkeypatch.setattr(service, "list_repos", counting_list_repos)
    try:
        with running(service) as url:
            monkeypatch.setenv("DETENTE_URL", url)
            yield _Served(top, service, url, lookups)
    finally:
        service.store.close()


def _denied_naming_bob(answer: dict[str, object]) -> bool:
    output = answer.get("hookSpecificOutput")
    return (
        isinstance(output, dict)
        and output.get("permissionDecision") == "deny"
        and "bob" in str(output.get("permissionDecisionReason"))
    )


def test_a_second_hook_call_does_not_ask_the_server_for_the_repositorys_name(
    served: _Served,
) -> None:
    first = served.edit_held()
    asked_first = len(served.lookups)

    second = served.edit_held()

    assert _denied_naming_bob(first) and _denied_naming_bob(second)
    assert asked_first >= 1
    assert len(served.lookups) == asked_first


def test_a_remembered_name_the_server_does_not_serve_is_forgotten_and_looked_up_again(
    served: _Served,
) -> None:
    served.memo.parent.mkdir(parents=True, exist_ok=True)
    served.memo.write_text(json.dumps({served.url: {"name": "gone", "at": time.time()}}))

    answer = served.edit_held()

    assert _denied_naming_bob(answer)
    assert json.loads(served.memo.read_text())[served.url]["name"] == "project"
