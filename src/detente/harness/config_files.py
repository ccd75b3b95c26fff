"""What ``detente init`` writes for each harness, and how it merges into what is there.

Each harness gets its hooks (every gated event runs ``detente hook-harness <harness>
<event>``), its MCP server entry (``detente mcp``) and the coordination section of
``AGENTS.md`` / ``CLAUDE.md`` as a detente-generated region. JSON files are merged:
objects key by key, arrays by appending an entry not already there; a value the file
already sets is kept (:func:`merge_json`). ``.codex/config.toml`` and the Markdown files
get a marked block (:func:`with_block`), replaced in place on a later run. Removal is
the inverse (:func:`unmerge_json`, :func:`without_block`).

Sources of the shapes: Claude Code https://code.claude.com/docs/en/hooks (``hooks`` in
``.claude/settings.json``, MCP servers in ``.mcp.json``); Codex ``.codex/hooks.json``
(the grouped shape Claude Code uses) and ``[mcp_servers.<id>]`` in ``.codex/config.toml``;
Cursor https://cursor.com/docs/agent/hooks (``.cursor/hooks.json`` ``{version: 1,
hooks}``, ``.cursor/mcp.json``); Gemini CLI https://geminicli.com/docs/hooks/reference
(``hooks`` and ``mcpServers`` in ``.gemini/settings.json``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "BLOCK_BEGIN",
    "BLOCK_END",
    "agents_section",
    "files_for",
    "hook_command",
    "merge_json",
    "unmerge_json",
    "with_block",
    "without_block",
]

#: The program the hooks and the MCP entries run (on the agent's PATH).
PROGRAM = "detente"
BLOCK_BEGIN = "detente:init:begin"
BLOCK_END = "detente:init:end"
_MCP = {"command": PROGRAM, "args": ["mcp"]}


def hook_command(harness: str, event: str) -> str:
    """The command line of one hook."""
    return f"{PROGRAM} hook-harness {harness} {event}"


def _grouped(harness: str, matcher: str | None, event: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "hooks": [{"type": "command", "command": hook_command(harness, event)}]
    }
    if matcher is not None:
        entry = {"matcher": matcher, **entry}
    return entry


def files_for(harness: str) -> dict[str, dict[str, Any]]:
    """Repo-relative JSON file -> the document detente merges into it, for ``harness``."""
    if harness == "claude":
        hooks = {
            "PreToolUse": [
                _grouped("claude", "Edit|Write|MultiEdit|NotebookEdit|Bash", "pre-tool")
            ],
            "SessionStart": [_grouped("claude", None, "session-start")],
            "Stop": [_grouped("claude", None, "stop")],
            "SessionEnd": [_grouped("claude", None, "session-end")],
        }
        return {
            ".claude/settings.json": {"hooks": hooks},
            ".mcp.json": {"mcpServers": {"detente": _MCP}},
        }
    if harness == "codex":
        hooks = {
            "PreToolUse": [_grouped("codex", "apply_patch|Bash|shell|exec_command", "pre-tool")],
            "SessionStart": [_grouped("codex", None, "session-start")],
            "Stop": [_grouped("codex", None, "stop")],
        }
        return {".codex/hooks.json": {"hooks": hooks}}
    if harness == "cursor":
        pre = hook_command("cursor", "pre-tool")
        hooks = {
            "preToolUse": [{"command": pre, "matcher": "Write|StrReplace|Edit|Delete|MultiEdit"}],
            "beforeShellExecution": [{"command": pre}],
            "sessionStart": [{"command": hook_command("cursor", "session-start")}],
            "stop": [{"command": hook_command("cursor", "stop")}],
            "sessionEnd": [{"command": hook_command("cursor", "session-end")}],
        }
        return {
            ".cursor/hooks.json": {"version": 1, "hooks": hooks},
            ".cursor/mcp.json": {"mcpServers": {"detente": _MCP}},
        }
    if harness == "gemini":
        hooks = {
            "BeforeTool": [_grouped("gemini", "write_file|replace|run_shell_command", "pre-tool")],
            "SessionStart": [_grouped("gemini", None, "session-start")],
            "AfterAgent": [_grouped("gemini", None, "stop")],
            "SessionEnd": [_grouped("gemini", None, "session-end")],
        }
        return {".gemini/settings.json": {"hooks": hooks, "mcpServers": {"detente": _MCP}}}
    raise ValueError(f"unknown harness {harness!r}")


CODEX_TOML = f"""[mcp_servers.detente]
command = "{PROGRAM}"
args = ["mcp"]
"""


def agents_section() -> str:
    """The coordination section of ``AGENTS.md`` / ``CLAUDE.md``."""
    return """## Coordinating with other agents (detente)

Several agents and people work in this repository at once; detente coordinates them.

- Before you edit, claim what you will change: the MCP tool `claim_open`, or
  `detente claim open -o "what you will achieve" -p 'src/area/**'`.
- Your harness's hooks check every edit before it happens: an edit of a file another
  live claim holds is refused with the holder, their objective, their lease and the
  commands to run (wait, ask for a split or a handoff in their meeting room, or work
  elsewhere). Do not try to get around a refusal through the shell: the shell gate and
  the git hooks refuse the same edit.
- When done, complete with evidence (`detente claim complete ...`) or release the
  claim (`detente claim abandon ...`) so others may edit the files.
- Do not edit detente's own files (`.claude/settings.json`, `.codex/`, `.cursor/`,
  `.gemini/settings.json`, `.mcp.json`, `detente.toml`, `.detente/`): they are refused.
"""


def _is_ours_in(item: Any, items: list[Any]) -> bool:
    return any(item == other for other in items)


#: Objects whose entries are whole values: a server the person already named is theirs.
_WHOLE_ENTRIES = ("mcpServers",)


def merge_json(current: Any, ours: Mapping[str, Any], *, whole: bool = False) -> Any:
    """``current`` (a parsed JSON object, or None) with ``ours`` merged in: objects key by
    key, arrays by appending entries not already present, a scalar only where absent; an
    entry of ``mcpServers`` is a whole value (never merged into the person's own)."""
    out: dict[str, Any] = dict(current) if isinstance(current, dict) else {}
    for key, value in ours.items():
        if key not in out:
            out[key] = json.loads(json.dumps(value))
        elif whole:
            continue
        elif isinstance(value, dict) and isinstance(out[key], dict):
            out[key] = merge_json(out[key], value, whole=key in _WHOLE_ENTRIES)
        elif isinstance(value, list) and isinstance(out[key], list):
            out[key] = list(out[key]) + [v for v in value if not _is_ours_in(v, out[key])]
    return out


def added_by_merge(original: Any, ours: Mapping[str, Any], *, whole: bool = False) -> Any:
    """What :func:`merge_json` of ``ours`` into ``original`` (the file before detente)
    added: ``ours`` without every value the person already had, so that
    :func:`unmerge_json` never takes out their own."""
    if not isinstance(original, dict):
        return dict(ours)
    out: dict[str, Any] = {}
    for key, value in ours.items():
        if key not in original:
            out[key] = value
        elif whole:
            continue
        elif isinstance(value, dict) and isinstance(original[key], dict):
            inner = added_by_merge(original[key], value, whole=key in _WHOLE_ENTRIES)
            if inner:
                out[key] = inner
        elif isinstance(value, list) and isinstance(original[key], list):
            items = [v for v in value if not _is_ours_in(v, original[key])]
            if items:
                out[key] = items
    return out


def unmerge_json(current: Any, ours: Mapping[str, Any], *, whole: bool = False) -> Any:
    """``current`` without what :func:`merge_json` added (objects and arrays left empty by
    the removal are dropped; an ``mcpServers`` entry only where it is detente's whole)."""
    if not isinstance(current, dict):
        return current
    out = dict(current)
    for key, value in ours.items():
        if key not in out:
            continue
        if whole:
            if out[key] == value:
                del out[key]
        elif isinstance(value, dict) and isinstance(out[key], dict):
            out[key] = unmerge_json(out[key], value, whole=key in _WHOLE_ENTRIES)
            if not out[key]:
                del out[key]
        elif isinstance(value, list) and isinstance(out[key], list):
            out[key] = [v for v in out[key] if not _is_ours_in(v, value)]
            if not out[key]:
                del out[key]
        elif out[key] == value:
            del out[key]
    return out


def _markers(markdown: bool) -> tuple[str, str]:
    if markdown:
        return f"<!-- {BLOCK_BEGIN} (generated by `detente init`) -->", f"<!-- {BLOCK_END} -->"
    return f"# {BLOCK_BEGIN} (generated by `detente init`)", f"# {BLOCK_END}"


def with_block(text: str | None, body: str, *, markdown: bool) -> str:
    """``text`` with detente's marked block holding ``body`` (replaced where present,
    appended after a blank line otherwise)."""
    begin, end = _markers(markdown)
    block = f"{begin}\n{body.rstrip()}\n{end}\n"
    current = text or ""
    start = current.find(begin)
    if start >= 0:
        stop = current.find(end, start)
        if stop >= 0:
            after = current[stop + len(end) :]
            return current[:start] + block + after.removeprefix("\n")
    if not current:
        return block
    sep = "" if current.endswith("\n\n") else ("\n" if current.endswith("\n") else "\n\n")
    return current + sep + block


def without_block(text: str, *, markdown: bool) -> str:
    """``text`` without detente's marked block (and the blank line before it)."""
    begin, end = _markers(markdown)
    start = text.find(begin)
    stop = text.find(end, start) if start >= 0 else -1
    if start < 0 or stop < 0:
        return text
    head, tail = text[:start], text[stop + len(end) :].removeprefix("\n")
    if not tail and head.endswith("\n\n"):
        head = head[:-1]
    return head + tail
