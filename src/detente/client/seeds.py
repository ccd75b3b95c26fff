"""Parts of request bodies built from the short forms people and agents type.

The CLI's ``--memory`` options and the MCP ``claim_files`` tool take the same forms; this
is their one parser.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["memory_impacts"]


def memory_impacts(entries: Iterable[str]) -> list[dict[str, Any]]:
    """``['AGENTS.md#build', 'AGENTS.md#test', 'NOTES.md']`` as the API's memory impacts.

    An entry is ``PATH`` (the whole file) or ``PATH#section``; entries naming the same path
    are merged into one impact, its sections in first-seen order without repeats.

    Returns:
        ``[{path, sections[]}]`` in first-seen order of the paths.
    """
    by_path: dict[str, list[str]] = {}
    for entry in entries:
        path, _, section = entry.partition("#")
        sections = by_path.setdefault(path, [])
        if section and section not in sections:
            sections.append(section)
    return [{"path": path, "sections": sections} for path, sections in by_path.items()]
