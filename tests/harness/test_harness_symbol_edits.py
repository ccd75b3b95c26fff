"""What an edit would do to a file's symbols, read from the payload before it happens: an
edit that may reach more than the first occurrence of its text is never judged by the
first one alone."""

from __future__ import annotations

from pathlib import Path

from detente.harness.payloads import read_event
from detente.harness.symbol_edits import planned_edit

SHARED = "def alpha():\n    return 1\n\n\ndef beta():\n    return 1\n"


def _edit(tmp_path: Path, harness: str, tool: str, tool_input: dict[str, object]) -> object:
    file = tmp_path / "src" / "shared.py"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(SHARED)
    payload = {"session_id": "S", "cwd": str(tmp_path), "tool_name": tool, "tool_input": tool_input}
    event = read_event(harness, "pre-tool", payload, cwd=tmp_path)
    return planned_edit(file, "src/shared.py", event.changes[event.paths[0]])


def test_a_replace_all_edit_touches_every_symbol_holding_the_text(tmp_path: Path) -> None:
    edit = {"file_path": "src/shared.py", "old_string": "return 1", "new_string": "return 2"}

    touched = _edit(tmp_path, "claude", "Edit", {**edit, "replace_all": True})

    assert touched == (("src/shared.py::alpha", "src/shared.py::beta"), False)


def test_a_gemini_replace_of_several_occurrences_touches_each(tmp_path: Path) -> None:
    edit = {"file_path": "src/shared.py", "old_string": "return 1", "new_string": "return 2"}

    touched = _edit(tmp_path, "gemini", "replace", {**edit, "expected_replacements": 2})

    assert touched == (("src/shared.py::alpha", "src/shared.py::beta"), False)


def test_an_ambiguous_codex_hunk_is_judged_whole(tmp_path: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/shared.py\n@@ def beta():\n"
        "-    return 1\n+    return 2\n*** End Patch\n"
    )

    touched = _edit(tmp_path, "codex", "apply_patch", {"command": patch})

    assert touched is None  # the file judged whole, never by alpha alone


def test_a_unique_edit_touches_only_its_symbol(tmp_path: Path) -> None:
    edit = {
        "file_path": "src/shared.py",
        "old_string": "alpha():\n    return 1",
        "new_string": "alpha():\n    return 3",
    }

    assert _edit(tmp_path, "claude", "Edit", edit) == (("src/shared.py::alpha",), False)
