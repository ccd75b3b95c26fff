"""``detente init --verify``: canary payloads through every hook ``detente init`` wrote.

For each harness whose hook file is present, the command configured for its gated
event and its session start is read back from that file and run with canaries: an edit
of detente's own configuration through the harness's edit tool (a Codex patch for
Codex), a shell write to ``detente.toml``, and a session start. An edit of detente's
files is denied without any claim, so the canaries need no set-up and change nothing
(the session start registers a session ``<harness>-detente-verify``). The report says,
per harness, which fired and which denied, and the known gaps.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from detente.harness import HARNESSES
from detente.harness.config_files import files_for

__all__ = ["GAPS", "verify"]

#: What each harness's hooks do not cover, and what does.
GAPS = {
    "claude": "edits through Bash are judged by the shell gate where paths can be read; "
    "the git pre-commit hook judges the rest",
    "codex": "hooks run only in a trusted project (older releases: [features] codex_hooks = "
    "true); apply_patch denials are not enforced on every platform: the shell gate and the "
    "git hooks cover them",
    "cursor": "project hooks load once the workspace is trusted; afterFileEdit cannot refuse, "
    "so edits are gated by preToolUse and the git hooks",
    "gemini": "hooks must be enabled in settings (hooks.enabled in older releases); edits "
    "through run_shell_command are judged by the shell gate",
}


def _canaries(harness: str, top: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """``(name, event, payload)`` per canary."""
    sid = "detente-verify"
    own = {
        "claude": ".claude/settings.json",
        "codex": ".codex/hooks.json",
        "cursor": ".cursor/hooks.json",
        "gemini": ".gemini/settings.json",
    }[harness]
    target = str(top / own)
    base: dict[str, Any] = {"session_id": sid, "cwd": str(top)}
    if harness == "cursor":
        base = {"conversation_id": sid, "workspace_roots": [str(top)]}
    if harness == "claude":
        edit = {
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {"file_path": target, "old_string": "{", "new_string": "{ "},
        }
        shell = {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "echo x > detente.toml"},
        }
    elif harness == "codex":
        patch = f"*** Begin Patch\n*** Update File: {own}\n@@\n-{{\n+{{ \n*** End Patch\n"
        edit = {
            "hook_event_name": "PreToolUse",
            "tool_name": "apply_patch",
            "tool_input": {"command": patch},
        }
        shell = {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "echo x > detente.toml"},
        }
    elif harness == "cursor":
        edit = {
            "hook_event_name": "preToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": target, "content": "{}"},
        }
        shell = {
            "hook_event_name": "beforeShellExecution",
            "command": "echo x > detente.toml",
            "cwd": str(top),
        }
    else:
        edit = {
            "hook_event_name": "BeforeTool",
            "tool_name": "write_file",
            "tool_input": {"file_path": target, "content": "{}"},
        }
        shell = {
            "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": "echo x > detente.toml"},
        }
    start = {"hook_event_name": "SessionStart", "source": "startup"}
    return [
        ("edit of detente's own file", "pre-tool", {**base, **edit}),
        ("shell write to detente.toml", "pre-tool", {**base, **shell}),
        ("session start", "session-start", {**base, **start}),
    ]


def denied(harness: str, code: int, out: str) -> bool:
    """Whether an answer refuses, in ``harness``'s contract."""
    try:
        doc = json.loads(out) if out.strip() else {}
    except ValueError:
        doc = {}
    if harness == "cursor":
        return code == 2 or doc.get("permission") == "deny"
    if harness == "gemini":
        return code == 2 or doc.get("decision") == "deny"
    spec = doc.get("hookSpecificOutput") or {}
    return code == 2 or spec.get("permissionDecision") == "deny"


def configured(top: Path, harness: str) -> dict[str, str]:
    """Event -> the command the harness's hook file runs for it (read from the file)."""
    out: dict[str, str] = {}
    for rel in files_for(harness):
        try:
            doc = json.loads((top / rel).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for groups in (doc.get("hooks") or {}).values():
            for group in groups if isinstance(groups, list) else []:
                entries = group.get("hooks", [group]) if isinstance(group, dict) else []
                for entry in entries:
                    command = entry.get("command", "") if isinstance(entry, dict) else ""
                    words = command.split()
                    if len(words) >= 4 and words[1] == "hook-harness" and words[2] == harness:
                        out.setdefault(words[3], command)
    return out


def verify(top: Path, *, timeout: float = 30.0) -> dict[str, Any]:
    """``{harness: {configured, fired[], denied[], failed[], gap, warnings[]}}`` for every
    harness."""
    from detente.harness.context import policy

    try:
        fails_open = policy(top).get("failure") != "closed"
    except Exception:  # an invalid detente.toml: the hooks fall back to failing open
        fails_open = True
    warning = (
        "the hooks fail open: with detente unreachable they allow edits ([harness] failure = "
        '"closed" in detente.toml refuses them instead)'
    )
    report: dict[str, Any] = {}
    for harness in HARNESSES:
        commands = configured(top, harness)
        entry: dict[str, Any] = {
            "configured": bool(commands),
            "fired": [],
            "denied": [],
            "failed": [],
            "gap": GAPS[harness],
            "warnings": [warning] if fails_open else [],
        }
        report[harness] = entry
        for name, event, payload in _canaries(harness, top) if commands else []:
            command = commands.get(event)
            if command is None:
                entry["failed"].append(f"{name}: no {event} hook configured")
                continue
            try:
                done = subprocess.run(
                    command,
                    shell=True,
                    input=json.dumps(payload),
                    capture_output=True,
                    text=True,
                    cwd=top,
                    timeout=timeout,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                entry["failed"].append(f"{name}: {exc}")
                continue
            if done.returncode not in (0, 2):
                entry["failed"].append(
                    f"{name}: exit {done.returncode}: {done.stderr.strip()[:200]}"
                )
                continue
            entry["fired"].append(name)
            if denied(harness, done.returncode, done.stdout):
                entry["denied"].append(name)
            elif event == "pre-tool":
                entry["failed"].append(f"{name}: allowed (expected a refusal)")
    return report
