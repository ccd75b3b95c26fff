"""A Codex ``apply_patch`` envelope names its files on header lines; its hunks say what
they replace."""

from __future__ import annotations

from detente.harness.patch_paths import patch_changes, patch_paths

PATCH = """*** Begin Patch
*** Update File: src/a.py
@@ def a():
-    return 1
+    return 2
*** Add File: src/new.py
+x = 1
*** Delete File: src/old.py
  *** Update File: src/indented.py
*** Move to: src/renamed.py
@@
-y
+z
*** End Patch
"""


def test_every_added_updated_deleted_and_moved_to_file_is_named_once_in_order() -> None:
    assert patch_paths(PATCH) == [
        "src/a.py",
        "src/new.py",
        "src/old.py",
        "src/indented.py",
        "src/renamed.py",
    ]


def test_a_hunk_replaces_its_context_and_minus_lines_with_its_context_and_plus_lines() -> None:
    changes = patch_changes(PATCH)

    assert changes["src/a.py"] == (("    return 1\n", "    return 2\n"),)
    assert changes["src/new.py"] == ((None, "x = 1\n"),)
    assert "src/old.py" not in changes  # a deletion: judged whole
    assert "src/indented.py" not in changes  # moved: judged whole


def test_text_without_headers_names_no_file() -> None:
    assert patch_paths("echo hello\n") == []
