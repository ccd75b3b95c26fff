"""The hook never blocks an agent by failing: a malformed payload is allowed and logged,
detente unreachable allows and says so, unless the repository fails closed."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import pytest

from detente.harness.command import main, run


def _repo(tmp_path: Path, toml: str | None = None) -> Path:
    top = tmp_path / "project"
    top.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=top, check=True)
    (top / "src").mkdir()
    (top / "src" / "a.py").write_text("x = 1\n")
    if toml is not None:
        (top / "detente.toml").write_text(toml)
    return top


def _edit(top: Path) -> str:
    return json.dumps(
        {
            "session_id": "s1",
            "cwd": str(top),
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(top / "src" / "a.py"), "content": "x = 2\n"},
        }
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[1, 2]",
        '{"tool_name": "Edit", "tool_input": {}}',
        pytest.param("[" * 100_000, id="nested-deeper-than-the-decoder-recurses"),
        pytest.param('{"a": ' * 100_000 + "1" + "}" * 100_000, id="deeply-nested-object"),
    ],
)
@pytest.mark.parametrize("harness", ["claude", "codex", "cursor", "gemini"])
def test_a_malformed_payload_is_allowed_and_logged(
    tmp_path: Path, text: str, harness: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Listen on the harness logger itself: an earlier test may have configured detente's
    # logging so that its records no longer propagate to the root logger.
    logger = logging.getLogger("detente.harness")
    caplog.set_level(logging.WARNING, logger="detente.harness")
    logger.addHandler(caplog.handler)
    try:
        code, out, err = run(harness, "pre-tool", text, cwd=tmp_path)
    finally:
        logger.removeHandler(caplog.handler)

    assert code == 0
    assert "deny" not in out
    assert "malformed" in err
    assert any("malformed payload" in r.getMessage() for r in caplog.records)


def test_an_unreachable_server_allows_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = _repo(tmp_path)
    monkeypatch.setenv("DETENTE_URL", "http://127.0.0.1:9")

    code, out, _ = run("claude", "pre-tool", _edit(top), cwd=top)

    doc = json.loads(out)
    assert code == 0
    assert "permissionDecision" not in doc.get("hookSpecificOutput", {})
    assert "detente unreachable" in doc["systemMessage"]


def test_an_unreachable_server_denies_where_the_repository_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = _repo(tmp_path, '[harness]\nfailure = "closed"\n')
    monkeypatch.setenv("DETENTE_URL", "http://127.0.0.1:9")

    code, out, _ = run("gemini", "pre-tool", _edit(top), cwd=top)

    doc = json.loads(out)
    assert code == 0
    assert doc["decision"] == "deny" and "fails closed" in doc["reason"]


def test_a_repository_detente_does_not_coordinate_is_allowed_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = _repo(tmp_path)
    monkeypatch.setenv("DETENTE_LOCAL", "1")

    code, out, err = run("claude", "pre-tool", _edit(top), cwd=top)

    assert (code, out, err) == (0, "", "")
    assert not (top / ".git" / "detente").exists()  # no store was created


def test_unknown_arguments_are_a_non_blocking_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["claude"]) == 1
    assert main(["vim", "pre-tool"]) == 1
    assert "usage: detente hook-harness" in capsys.readouterr().err


@pytest.mark.parametrize("harness", ["claude", "codex", "cursor", "gemini"])
def test_a_directory_whose_name_cannot_be_read_is_allowed_without_a_crash(
    tmp_path: Path, harness: str
) -> None:
    payload = json.loads(_edit(_repo(tmp_path)))
    payload["cwd"] = str(tmp_path / ("a" * 5000))  # longer than the system takes

    code, out, err = run(harness, "pre-tool", json.dumps(payload), cwd=tmp_path)

    assert code == 0
    assert "deny" not in out and "Traceback" not in err


def test_an_invalid_detente_toml_is_not_reported_as_detente_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from detente.client.connect import open_local

    top = _repo(tmp_path)
    with open_local(top):
        pass  # the repository's store
    (top / "detente.toml").write_text('[harness]\nunclaimed = "sometimes"\n')
    monkeypatch.setenv("DETENTE_LOCAL", "1")

    code, out, _ = run("claude", "pre-tool", _edit(top), cwd=top)

    notice = json.loads(out)["systemMessage"]
    assert code == 0 and "could not check" in notice and "unreachable" not in notice
    assert "unclaimed" in notice


@pytest.mark.timeout(30)
def test_a_shell_command_too_long_to_read_is_allowed_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    top = _repo(tmp_path)
    payload = {
        "session_id": "s1",
        "cwd": str(top),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "echo " + "a" * 4_000_000 + " > src/a.py"},
    }
    logger = logging.getLogger("detente.harness")
    caplog.set_level(logging.WARNING, logger="detente.harness")
    logger.addHandler(caplog.handler)
    try:
        code, out, _ = run("claude", "pre-tool", json.dumps(payload), cwd=top)
    finally:
        logger.removeHandler(caplog.handler)

    doc = json.loads(out)
    assert code == 0
    assert "permissionDecision" not in doc.get("hookSpecificOutput", {})
    assert "too long to read" in doc["systemMessage"] and "allowed" in doc["systemMessage"]
    assert any("too long to read" in r.getMessage() for r in caplog.records)


_CLOSED = '[harness]\nfailure = "closed"\n'


def _named(top: Path, name: str) -> str:
    payload = json.loads(_edit(top))
    payload["tool_input"]["file_path"] = name
    return json.dumps(payload)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("src/a\0.py", id="nul"),
        pytest.param("src/\ud800.py", id="lone-surrogate"),
        pytest.param("src/" + "a/" * 5000 + "x.py", id="longer-than-path-max"),
    ],
)
@pytest.mark.parametrize("harness", ["claude", "codex", "cursor", "gemini"])
def test_a_file_name_no_edit_can_write_is_a_malformed_payload_even_where_it_fails_closed(
    tmp_path: Path, name: str, harness: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = _repo(tmp_path, _CLOSED)
    monkeypatch.setenv("DETENTE_URL", "http://127.0.0.1:9")  # unreachable: must not matter

    code, out, err = run(harness, "pre-tool", _named(top, name), cwd=top)

    assert code == 0
    assert "deny" not in out
    assert "malformed" in err and "unreachable" not in out + err


def test_a_name_too_long_for_the_file_system_is_allowed_where_it_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from detente.client.connect import open_local

    top = _repo(tmp_path, _CLOSED)
    with open_local(top):
        pass  # the repository's store: detente is reachable
    monkeypatch.setenv("DETENTE_LOCAL", "1")

    code, out, _ = run("claude", "pre-tool", _named(top, "src/" + "n" * 1000 + ".py"), cwd=top)

    assert code == 0
    assert "deny" not in out and "unreachable" not in out
