"""Helpers for the harness hook tests: fixtures filled in, the hook commands read back
from the files ``detente init`` wrote and run as the harness runs them, and each
harness's documented contract read off the answer (an oracle apart from detente's own
:mod:`detente.harness.answers`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import detente

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "harness"
HARNESSES = ("claude", "codex", "cursor", "gemini")


def fixture(harness: str, name: str, **values: str) -> tuple[str, str]:
    """``(event, payload JSON)`` of ``fixtures/harness/<harness>/<name>.json`` with its
    ``${KEY}`` placeholders filled in from ``values``."""
    doc = json.loads((FIXTURES / harness / f"{name}.json").read_text())

    def fill(node: Any) -> Any:
        if isinstance(node, str):
            for key, value in values.items():
                node = node.replace("${" + key + "}", value)
            return node
        if isinstance(node, list):
            return [fill(n) for n in node]
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        return node

    return str(doc["event"]), json.dumps(fill(doc["payload"]))


def hook_env(tmp: Path, base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment a harness runs its hooks in: ``detente`` on the PATH (a shim
    running this checkout's code with this interpreter), no inherited detente settings."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "detente"
    shim.write_text(
        f'#!/bin/sh\nexec {sys.executable} -c "from detente.cli.main import main; main()" "$@"\n'
    )
    shim.chmod(0o755)
    env = {
        k: v
        for k, v in (base if base is not None else dict(os.environ)).items()
        if not k.startswith("DETENTE_")
    }
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(Path(detente.__file__).resolve().parents[1])
    env.update(extra)
    return env


def written_commands(top: Path, harness: str) -> dict[str, str]:
    """The ``<event>`` -> command of each hook ``detente init`` wrote for ``harness``,
    read from its configuration file the way the harness reads it."""
    files = {
        "claude": ".claude/settings.json",
        "codex": ".codex/hooks.json",
        "cursor": ".cursor/hooks.json",
        "gemini": ".gemini/settings.json",
    }
    hooks = json.loads((top / files[harness]).read_text())["hooks"]
    names = {
        "claude": {
            "PreToolUse": "pre-tool",
            "SessionStart": "session-start",
            "Stop": "stop",
            "SessionEnd": "session-end",
        },
        "codex": {"PreToolUse": "pre-tool", "SessionStart": "session-start", "Stop": "stop"},
        "cursor": {
            "preToolUse": "pre-tool",
            "sessionStart": "session-start",
            "stop": "stop",
            "sessionEnd": "session-end",
        },
        "gemini": {
            "BeforeTool": "pre-tool",
            "SessionStart": "session-start",
            "AfterAgent": "stop",
            "SessionEnd": "session-end",
        },
    }[harness]
    out: dict[str, str] = {}
    for key, event in names.items():
        group = hooks[key][0]
        out[event] = group["command"] if harness == "cursor" else group["hooks"][0]["command"]
    if harness == "cursor":
        assert hooks["beforeShellExecution"][0]["command"] == out["pre-tool"]
    return out


def call(command: str, payload: str, cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    """Run one hook command as a harness does (a shell, the payload on stdin)."""
    done = subprocess.run(
        command,
        shell=True,
        input=payload,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def decision(harness: str, code: int, out: str) -> tuple[str, str]:
    """``(allow|deny, the text shown to the agent)`` by the harness's documented contract."""
    doc = json.loads(out) if out.strip() else {}
    if harness in ("claude", "codex"):
        assert code == 0
        spec = doc.get("hookSpecificOutput", {})
        if spec.get("permissionDecision") == "deny":
            return "deny", spec["permissionDecisionReason"]
        assert "permissionDecision" not in spec  # never grants what a person would be asked
        return "allow", spec.get("additionalContext", "") + doc.get("systemMessage", "")
    if harness == "cursor":
        if doc.get("permission") == "deny":
            assert code == 2
            return "deny", doc["agent_message"]
        assert code == 0 and doc.get("permission") == "allow"
        return "allow", doc.get("agent_message", "")
    assert code == 0
    if doc.get("decision") == "deny":
        return "deny", doc["reason"]
    spec = doc.get("hookSpecificOutput", {})
    return "allow", spec.get("additionalContext", "") + doc.get("systemMessage", "")
