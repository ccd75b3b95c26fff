"""The files a Codex ``apply_patch`` envelope touches.

The envelope (Codex's ``apply_patch`` tool; in a hook payload ``tool_input.command``)
names each file on a header line: ``*** Add File: P``, ``*** Update File: P``,
``*** Delete File: P``, and a rename as ``*** Move to: Q`` after an update. Codex reads a
header with its surrounding whitespace trimmed, so an indented header counts too.
"""

from __future__ import annotations

__all__ = ["patch_paths"]

_HEADERS = ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")


def patch_paths(patch: str) -> list[str]:
    """Every path the patch adds, updates, deletes or moves to, in order, once each.

    Args:
        patch: the envelope text (``*** Begin Patch`` ... ``*** End Patch``).

    Returns:
        The paths as written (relative to the session's working directory, or absolute).
    """
    found: dict[str, None] = {}
    for raw in patch.splitlines():
        line = raw.strip()
        for header in _HEADERS:
            if line.startswith(header):
                path = line[len(header) :].strip()
                if path:
                    found[path] = None
    return list(found)
