"""The files a Codex ``apply_patch`` envelope touches.

The envelope (Codex's ``apply_patch`` tool; in a hook payload ``tool_input.command``)
names each file on a header line: ``*** Add File: P``, ``*** Update File: P``,
``*** Delete File: P``, and a rename as ``*** Move to: Q`` after an update. Codex reads a
header with its surrounding whitespace trimmed, so an indented header counts too.
"""

from __future__ import annotations

__all__ = ["patch_changes", "patch_paths"]

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


def patch_changes(patch: str) -> dict[str, tuple[tuple[str | None, str], ...]]:
    """What each file's hunks replace: path -> ``(old text, new text)`` per hunk (old None:
    an added file's whole content). A hunk's old text is its context and ``-`` lines, its
    new text its context and ``+`` lines (the envelope's ``@@`` starts a hunk). A file
    whose hunks cannot be read (a move, a deletion) is left out: judged whole."""
    out: dict[str, list[tuple[str | None, str]]] = {}
    path: str | None = None
    adding = False
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        if path is not None and (old or new):
            out.setdefault(path, []).append((None if adding else "".join(old), "".join(new)))
        old.clear()
        new.clear()

    for raw in patch.splitlines(keepends=True):
        line = raw.strip()
        if line.startswith("*** "):
            flush()
            path, adding = None, False
            if line.startswith("*** Update File:"):
                path = line[len("*** Update File:") :].strip()
            elif line.startswith("*** Add File:"):
                path, adding = line[len("*** Add File:") :].strip(), True
            elif line.startswith("*** Move to:"):
                out.pop(path or "", None)
            continue
        if path is None:
            continue
        if raw.startswith("@@"):
            flush()
            continue
        body = raw[1:] if raw[:1] in (" ", "-", "+") else raw
        if raw.startswith("-"):
            old.append(body)
        elif raw.startswith("+"):
            new.append(body)
        else:
            old.append(body)
            new.append(body)
    flush()
    return {p: tuple(c) for p, c in out.items() if all(o is None or o for o, _ in c)}
