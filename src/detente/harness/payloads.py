"""Each harness's hook payload read into one :class:`HookEvent`.

The shapes (the fixtures under ``tests/fixtures/harness/`` name each source):

- Claude Code (https://code.claude.com/docs/en/hooks): ``{session_id, cwd,
  hook_event_name, tool_name, tool_input}``; ``Edit``/``Write``/``MultiEdit`` carry
  ``tool_input.file_path`` (``old_string``/``new_string``, ``content``, ``edits[]``),
  ``NotebookEdit`` ``notebook_path``, ``Bash`` ``command``; ``Stop`` carries
  ``stop_hook_active``.
- Codex (``.codex/hooks.json``, the grouped shape Claude Code uses): the same fields;
  ``apply_patch`` carries the patch envelope in ``tool_input.command``, a shell tool
  (``Bash``, ``shell``, ``exec_command``) its command as a string or an argv list.
- Cursor (``.cursor/hooks.json``, https://cursor.com/docs/agent/hooks):
  ``{conversation_id, hook_event_name, workspace_roots[]}``; ``beforeShellExecution``
  ``{command, cwd}``; ``preToolUse`` ``{tool_name, tool_input{file_path}}``
  (``Write``/``StrReplace``/``Edit``/``Delete``); ``beforeReadFile`` ``{file_path}``.
- Gemini CLI (https://geminicli.com/docs/hooks/reference): ``{session_id, cwd,
  hook_event_name, tool_name, tool_input}``; ``write_file`` / ``replace`` carry
  ``file_path`` (``content``; ``old_string``/``new_string``), ``run_shell_command``
  ``command``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from detente.harness.patch_paths import patch_changes, patch_paths

__all__ = ["EVENTS", "Change", "HookEvent", "PayloadError", "read_event"]

#: The ``<event>`` argument of ``detente hook-harness <harness> <event>``.
EVENTS = ("pre-tool", "session-start", "stop", "session-end")

Kind = Literal["edit", "shell", "start", "stop", "end", "other"]

_EDIT_TOOLS = {
    "claude": {"Edit", "Write", "MultiEdit", "NotebookEdit"},
    "codex": {"apply_patch", "Edit", "Write"},
    "cursor": {"Write", "StrReplace", "Edit", "Delete", "MultiEdit"},
    "gemini": {"write_file", "replace"},
}
_SHELL_TOOLS = {"Bash", "shell", "exec_command", "local_shell", "Shell", "run_shell_command"}


class PayloadError(ValueError):
    """The payload is not what the harness documents (allowed, and logged)."""


class Change(NamedTuple):
    """One textual change to a file, when the payload says what it replaces.

    Attributes:
        old: the text replaced (None: the whole file is written, ``new`` is its content).
        new: the replacement text.
        every: every occurrence of ``old`` is replaced (Claude's and Cursor's
            ``replace_all``, Gemini's ``expected_replacements`` above 1), not one.
    """

    old: str | None
    new: str
    every: bool = False


class HookEvent(NamedTuple):
    """A harness event, harness-neutral.

    Attributes:
        harness: ``claude``, ``codex``, ``cursor`` or ``gemini``.
        event: the ``<event>`` argument (:data:`EVENTS`).
        kind: ``edit``, ``shell``, ``start``, ``stop``, ``end`` or ``other`` (allowed
            without a question).
        session: the harness's session id (Cursor: the conversation id), or None.
        cwd: the directory the agent works in.
        paths: the files an edit writes, as the payload names them.
        command: a shell command's text.
        changes: path -> what the edit replaces, when the payload says (symbol judging).
        stop_active: Claude's ``stop_hook_active`` (a stop hook already continued it).
        tool: the tool name, for the answer's wording.
    """

    harness: str
    event: str
    kind: Kind
    session: str | None
    cwd: Path
    paths: tuple[str, ...] = ()
    command: str | None = None
    changes: Mapping[str, tuple[Change, ...]] = MappingProxyType({})
    stop_active: bool = False
    tool: str | None = None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def read_event(harness: str, event: str, payload: Any, *, cwd: Path) -> HookEvent:
    """The :class:`HookEvent` of one payload.

    Args:
        harness: the harness the hook was written for.
        event: the ``<event>`` argument.
        payload: the JSON document read from stdin.
        cwd: the hook process's directory (used when the payload names none).

    Raises:
        PayloadError: not a JSON object, an edit naming no file, or a file name no edit
            can write (see :func:`_check_name`).
    """
    if not isinstance(payload, dict):
        raise PayloadError("the payload is not a JSON object")
    session = _text(payload.get("session_id")) or _text(payload.get("conversation_id"))
    roots = payload.get("workspace_roots")
    where = _text(payload.get("cwd")) or (
        roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
    )
    base = Path(where) if where else cwd
    common: dict[str, Any] = {"harness": harness, "event": event, "session": session, "cwd": base}
    if event == "session-start":
        return HookEvent(kind="start", **common)
    if event == "stop":
        return HookEvent(kind="stop", stop_active=payload.get("stop_hook_active") is True, **common)
    if event == "session-end":
        return HookEvent(kind="end", **common)
    name = _text(payload.get("hook_event_name")) or ""
    if name == "beforeShellExecution" or (harness == "cursor" and "command" in payload):
        return HookEvent(kind="shell", command=_text(payload.get("command")), **common)
    if name == "beforeReadFile":
        return HookEvent(kind="other", tool="read", **common)
    tool = _text(payload.get("tool_name")) or ""
    raw_input = payload.get("tool_input")
    tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
    if tool in _SHELL_TOOLS:
        command = tool_input.get("command")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        text = _text(command)
        if text and "*** Begin Patch" in text:  # apply_patch run through the shell
            return _patch_event(text, tool, common)
        return HookEvent(kind="shell", command=text, tool=tool, **common)
    if tool in _EDIT_TOOLS.get(harness, set()) or tool in set().union(*_EDIT_TOOLS.values()):
        if tool == "apply_patch":
            patch = _text(tool_input.get("command")) or _text(tool_input.get("patch")) or ""
            return _patch_event(patch, tool, common)
        path = (
            _text(tool_input.get("file_path"))
            or _text(tool_input.get("notebook_path"))
            or _text(tool_input.get("path"))
        )
        if not path:
            raise PayloadError(f"{tool}: tool_input names no file")
        _check_name(path, tool)
        return HookEvent(
            kind="edit", paths=(path,), changes={path: _changes(tool_input)}, tool=tool, **common
        )
    return HookEvent(kind="other", tool=tool or None, **common)


def _patch_event(patch: str, tool: str, common: dict[str, Any]) -> HookEvent:
    paths = patch_paths(patch)
    if not paths:
        raise PayloadError(f"{tool}: the patch names no file")
    for path in paths:
        _check_name(path, tool)
    changes = {p: tuple(Change(o, n) for o, n in c) for p, c in patch_changes(patch).items()}
    return HookEvent(kind="edit", paths=tuple(paths), changes=changes, tool=tool, **common)


#: The longest file name a payload may give, in bytes (Linux's ``PATH_MAX``): no file
#: system opens a longer one, so the edit cannot happen as named.
MAX_PATH_BYTES = 4096


def _check_name(path: str, tool: str) -> None:
    """Refuse, as a malformed payload, a file name no edit can write: one holding a NUL,
    one that is not valid Unicode (a lone surrogate), one longer than
    :data:`MAX_PATH_BYTES`."""
    if "\0" in path:
        raise PayloadError(f"{tool}: the file name holds a NUL character")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise PayloadError(f"{tool}: the file name is not valid Unicode") from None
    if size > MAX_PATH_BYTES:
        raise PayloadError(f"{tool}: the file name is {size} bytes long (at most {MAX_PATH_BYTES})")


def _changes(tool_input: Mapping[str, Any]) -> tuple[Change, ...]:
    """What the edit replaces: ``old_string``/``new_string``, ``edits[]``, or a whole
    ``content`` (empty: unknown, the file is judged whole)."""
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    if isinstance(old, str) and isinstance(new, str) and old:
        return (Change(old, new, _every(tool_input)),)
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        out = []
        for edit in edits:
            if not isinstance(edit, dict):
                return ()
            o, n = edit.get("old_string"), edit.get("new_string")
            if not (isinstance(o, str) and isinstance(n, str) and o):
                return ()
            out.append(Change(o, n, _every(edit)))
        return tuple(out)
    content = tool_input.get("content")
    if isinstance(content, str):
        return (Change(None, content),)
    return ()


def _every(edit: Mapping[str, Any]) -> bool:
    """Whether an edit replaces every occurrence of its text (``replace_all``, or an
    ``expected_replacements`` other than 1)."""
    count = edit.get("expected_replacements")
    return edit.get("replace_all") is True or (count is not None and count != 1)
