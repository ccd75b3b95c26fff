"""``detente init``: idempotent, merging, and given back byte for byte by ``--remove``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from detente.cli.main import app

#: A repository that already configures its harnesses its own way.
EXISTING = {
    ".claude/settings.json": '{"model": "opus",\n "hooks": {"PreToolUse": [{"matcher": "Bash",'
    ' "hooks": [{"type": "command", "command": "./lint.sh"}]}]}}',
    ".mcp.json": '{"mcpServers": {"db": {"command": "db-mcp"}}}\n',
    ".codex/config.toml": 'model = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs"\n',
    ".gemini/settings.json": '{"theme": "dark"}',
    "AGENTS.md": "# Agents\n\nRun the tests first.\n",
}


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    top = tmp_path / "project"
    top.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=top, check=True)
    for rel, text in files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text)
    return top


def _snapshot(top: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(top)): p.read_bytes()
        for p in sorted(top.rglob("*"))
        if p.is_file() and ".git/" not in f"{p.relative_to(top)}/"[:5]
    } | {"pre-commit": _hook(top), "post-commit": _hook(top, "post-commit")}


def _hook(top: Path, name: str = "pre-commit") -> bytes:
    hook = top / ".git" / "hooks" / name
    return hook.read_bytes() if hook.exists() else b""


def _init(top: Path, *args: str) -> tuple[int, dict[str, object]]:
    done = CliRunner().invoke(app, ["--repo", str(top), "init", *args, "--json"])
    return done.exit_code, json.loads(done.stdout.strip().splitlines()[-1])


def test_init_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    top = _repo(tmp_path, EXISTING)
    first_code, first = _init(top)
    after_first = _snapshot(top)

    code, second = _init(top)

    assert (first_code, code) == (0, 0)
    assert any(f["changed"] for f in first["files"])  # type: ignore[index, union-attr]
    assert not any(f["changed"] for f in second["files"])  # type: ignore[index, union-attr]
    assert _snapshot(top) == after_first


def test_init_merges_and_keeps_every_setting_it_did_not_write(tmp_path: Path) -> None:
    top = _repo(tmp_path, EXISTING)

    _init(top)

    claude = json.loads((top / ".claude/settings.json").read_text())
    assert claude["model"] == "opus"
    commands = [h["hooks"][0]["command"] for h in claude["hooks"]["PreToolUse"]]
    assert commands == ["./lint.sh", "detente hook-harness claude pre-tool"]
    mcp = json.loads((top / ".mcp.json").read_text())["mcpServers"]
    assert mcp["db"] == {"command": "db-mcp"} and mcp["detente"]["args"] == ["mcp"]
    gemini = json.loads((top / ".gemini/settings.json").read_text())
    assert gemini["theme"] == "dark" and "BeforeTool" in gemini["hooks"]
    toml = (top / ".codex/config.toml").read_text()
    assert toml.startswith(EXISTING[".codex/config.toml"]) and "[mcp_servers.detente]" in toml
    import tomllib

    assert set(tomllib.loads(toml)["mcp_servers"]) == {"docs", "detente"}
    agents = (top / "AGENTS.md").read_text()
    assert agents.startswith(EXISTING["AGENTS.md"]) and "detente:init:begin" in agents
    assert (top / ".git/hooks/pre-commit").read_text().count("detente.hooks pre-commit") == 1


def test_remove_restores_byte_identical_files_and_deletes_what_init_created(
    tmp_path: Path,
) -> None:
    top = _repo(tmp_path, EXISTING)
    before = _snapshot(top)
    _init(top)

    code, removed = _init(top, "--remove")

    assert code == 0
    assert _snapshot(top) == before
    assert not (top / ".detente").exists() and not (top / ".cursor").exists()
    assert {f["action"] for f in removed["files"]} <= {"restore", "delete"}  # type: ignore[union-attr, index]


def test_remove_after_a_person_edited_a_file_takes_out_only_detentes_entries(
    tmp_path: Path,
) -> None:
    top = _repo(tmp_path, EXISTING)
    _init(top)
    settings = json.loads((top / ".gemini/settings.json").read_text())
    settings["theme"] = "light"
    (top / ".gemini/settings.json").write_text(json.dumps(settings))

    _init(top, "--remove")

    assert json.loads((top / ".gemini/settings.json").read_text()) == {"theme": "light"}


def test_dry_run_prints_the_changes_and_writes_nothing(tmp_path: Path) -> None:
    top = _repo(tmp_path, EXISTING)
    before = _snapshot(top)

    done = CliRunner().invoke(app, ["--repo", str(top), "init", "--dry-run"])

    assert done.exit_code == 0
    assert "+++ b/.claude/settings.json" in done.stdout
    assert "detente hook-harness claude pre-tool" in done.stdout
    assert _snapshot(top) == before


def test_agents_chooses_the_harnesses(tmp_path: Path) -> None:
    top = _repo(tmp_path, {})

    code, _ = _init(top, "--agents", "codex")

    assert code == 0
    assert (top / ".codex/hooks.json").exists() and (top / "AGENTS.md").exists()
    assert not (top / ".claude").exists() and not (top / "CLAUDE.md").exists()


@pytest.mark.parametrize(
    ("files", "args"),
    [
        ({".mcp.json": "{not json"}, ()),
        ({}, ("--agents", "claude,vim")),
        ({".codex/config.toml": 'model = "unclosed\n'}, ("--agents", "codex")),
        ({".codex/config.toml": 'mcp_servers = { db = { command = "db" } }\n'}, ()),
        ({".claude/settings.json": '[{"hooks": "mine"}]\n'}, ()),
        ({".gemini/settings.json": '"dark"'}, ("--agents", "gemini")),
        ({".cursor/hooks.json": "[]"}, ("--agents", "cursor")),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    tmp_path: Path, files: dict[str, str], args: tuple[str, ...]
) -> None:
    top = _repo(tmp_path, files)
    before = _snapshot(top)

    code, problem = _init(top, *args)

    assert code == 2 and problem["code"] == "validation_error"
    assert _snapshot(top) == before


def test_a_settings_file_whose_top_level_is_not_an_object_is_named_in_the_refusal(
    tmp_path: Path,
) -> None:
    top = _repo(tmp_path, {".claude/settings.json": "[1, 2]"})

    code, problem = _init(top, "--agents", "claude")

    assert code == 2
    assert ".claude/settings.json" in str(problem["detail"])
    assert "array" in str(problem["detail"]) and "not an object" in str(problem["detail"])
    assert (top / ".claude/settings.json").read_text() == "[1, 2]"


def test_verify_with_no_harness_configured_fails_and_says_to_run_init(tmp_path: Path) -> None:
    top = _repo(tmp_path, {})

    done = CliRunner().invoke(app, ["--repo", str(top), "init", "--verify", "--json"])
    text = CliRunner().invoke(app, ["--repo", str(top), "init", "--verify"])

    report = json.loads(done.stdout)
    assert done.exit_code == 1 and text.exit_code == 1
    assert all(not entry["configured"] for entry in report["harnesses"].values())
    assert "no harness hooks are configured" in report["detail"]
    assert "detente init" in text.output and "nothing to verify" in text.output


def test_verify_reports_per_harness_that_every_hook_fired_and_the_canaries_were_denied(
    tmp_path: Path,
) -> None:
    import os
    import sys

    top = _repo(tmp_path, {})
    _init(top)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "detente"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m detente "$@"\n')
    shim.chmod(0o755)
    import detente

    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(Path(detente.__file__).resolve().parents[1]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "detente", "--repo", str(top), "init", "--verify", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )

    report = json.loads(done.stdout)["harnesses"]
    assert done.returncode == 0, done.stdout + done.stderr
    for harness in ("claude", "codex", "cursor", "gemini"):
        assert report[harness]["configured"] is True
        assert len(report[harness]["fired"]) == 3
        assert report[harness]["denied"] == [
            "edit of detente's own file",
            "shell write to detente.toml",
        ]
        assert report[harness]["gap"]
        assert "fail open" in report[harness]["warnings"][0]


@pytest.mark.parametrize(
    "entry",
    [
        'mcp_servers.detente.command = "/opt/detente"\n',
        '[mcp_servers]\ndetente = { command = "/opt/detente" }\n',
        '[mcp_servers.detente]\ncommand = "/opt/detente"\n',
    ],
)
def test_a_codex_server_entry_the_person_wrote_in_any_toml_spelling_is_kept_as_it_is(
    tmp_path: Path, entry: str
) -> None:
    import tomllib

    top = _repo(tmp_path, {".codex/config.toml": entry})

    code, _ = _init(top, "--agents", "codex")

    text = (top / ".codex" / "config.toml").read_text()
    assert code == 0 and text == entry
    assert tomllib.loads(text)["mcp_servers"]["detente"]["command"] == "/opt/detente"


def test_a_detente_server_entry_the_person_wrote_in_json_is_kept_whole(tmp_path: Path) -> None:
    mine = '{"mcpServers": {"detente": {"command": "/opt/detente-wrapper"}}}\n'
    top = _repo(tmp_path, {".mcp.json": mine, ".gemini/settings.json": mine})

    code, _ = _init(top, "--agents", "claude,gemini")

    gemini = json.loads((top / ".gemini" / "settings.json").read_text())
    assert code == 0 and (top / ".mcp.json").read_text() == mine
    assert gemini["mcpServers"] == {"detente": {"command": "/opt/detente-wrapper"}}
    assert "BeforeTool" in gemini["hooks"]

    code, _ = _init(top, "--remove")

    assert code == 0 and (top / ".gemini" / "settings.json").read_text() == mine


def test_remove_after_a_person_edited_keeps_what_they_had_before_init_even_if_ours_too(
    tmp_path: Path,
) -> None:
    theirs = {
        "mcpServers": {"detente": {"command": "detente", "args": ["mcp"]}},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]},
    }
    top = _repo(tmp_path, {".gemini/settings.json": json.dumps(theirs)})
    _init(top, "--agents", "gemini")
    settings = top / ".gemini" / "settings.json"
    edited = json.loads(settings.read_text()) | {"theme": "dark"}
    settings.write_text(json.dumps(edited))

    code, _ = _init(top, "--remove")

    assert code == 0 and json.loads(settings.read_text()) == theirs | {"theme": "dark"}


def test_init_writes_the_post_commit_merge_check_and_remove_takes_it_back(
    tmp_path: Path,
) -> None:
    top = _repo(tmp_path, EXISTING)
    _init(top)
    assert b"detente.hooks post-commit" in _hook(top, "post-commit")

    code, _ = _init(top, "--remove")

    assert code == 0
    assert _hook(top, "post-commit") == b""
