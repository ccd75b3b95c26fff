"""Commit trees for tree-aware severity: files and generated-artifact patterns, from git.

:class:`GitTrees` is the IO side of :class:`detente.domain.overlap.trees.TreeSource`: for
a commit it lists the tree's files (``git ls-tree``) and reads the generated-artifact
patterns *of that commit*:

* ``.gitattributes`` at the repository root: paths with ``linguist-generated`` (or
  ``linguist-generated=true``) set; ``-linguist-generated`` or ``=false`` on the same
  pattern unsets it. As in git, a pattern without ``/`` matches a name at any depth.
  Nested ``.gitattributes`` files are not read.
* ``detente.toml`` at the repository root: ``[generated] patterns = ["gen/**", ...]``.

A commit's tree never changes, so views are cached by commit OID (a small LRU). A
pattern that is not a valid claim pattern, or a ``detente.toml`` that is not valid TOML,
is skipped: a repository file must not make every overlap check fail.
"""

from __future__ import annotations

import threading
import tomllib
from collections import OrderedDict
from pathlib import Path

from detente.domain.overlap.paths import normalize_pattern
from detente.domain.overlap.trees import TreeView
from detente.errors import ValidationError
from detente.index.blobs import read_blobs, read_tree
from detente.vcs.git import Git, GitError

__all__ = ["GitTrees", "gitattributes_generated", "toml_generated"]

_KEPT = 32
_SET = frozenset({"linguist-generated", "linguist-generated=true", "linguist-generated=1"})
_UNSET = frozenset({"-linguist-generated", "linguist-generated=false", "!linguist-generated"})


class GitTrees:
    """Tree views of one repository's commits (thread-safe).

    Args:
        repo: a directory inside the repository.
    """

    def __init__(self, repo: Path) -> None:
        self._git = Git(repo)
        self._lock = threading.Lock()
        self._views: OrderedDict[str, TreeView | None] = OrderedDict()

    def view(self, commit: str) -> TreeView | None:
        """The commit's files and generated patterns; None when git cannot read it."""
        with self._lock:
            if commit in self._views:
                self._views.move_to_end(commit)
                return self._views[commit]
        try:
            view = self._read(commit)
        except GitError:
            view = None
        with self._lock:
            self._views[commit] = view
            while len(self._views) > _KEPT:
                self._views.popitem(last=False)
        return view

    def _read(self, commit: str) -> TreeView:
        entries = read_tree(self._git, commit)
        wanted = {p: oid for p, oid in entries if p in (".gitattributes", "detente.toml")}
        blobs = read_blobs(self._git, wanted.values())
        generated: list[str] = []
        if ".gitattributes" in wanted:
            generated += gitattributes_generated(blobs[wanted[".gitattributes"]])
        if "detente.toml" in wanted:
            generated += toml_generated(blobs[wanted["detente.toml"]])
        return TreeView(
            commit=commit,
            files=tuple(p for p, _ in entries),
            generated=tuple(dict.fromkeys(generated)),
        )


def gitattributes_generated(text: bytes) -> list[str]:
    """Canonical patterns marked ``linguist-generated`` by a root ``.gitattributes``."""
    marked: dict[str, None] = {}
    for raw in text.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith('"'):
            continue
        pattern, *attrs = line.split()
        canonical = _canonical(pattern)
        if canonical is None:
            continue
        for attr in attrs:
            if attr in _SET:
                marked[canonical] = None
            elif attr in _UNSET:
                marked.pop(canonical, None)
    return list(marked)


def toml_generated(text: bytes) -> list[str]:
    """Canonical patterns of ``[generated] patterns`` in a ``detente.toml``."""
    try:
        config = tomllib.loads(text.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError:
        return []
    section = config.get("generated")
    patterns = section.get("patterns") if isinstance(section, dict) else None
    if not isinstance(patterns, list):
        return []
    out = []
    for pattern in patterns:
        if isinstance(pattern, str):
            try:
                out.append(normalize_pattern(pattern, field="generated.patterns"))
            except ValidationError:
                continue
    return out


def _canonical(pattern: str) -> str | None:
    """A gitattributes pattern as a claim pattern (git: no ``/`` means any depth)."""
    anchored = pattern.startswith("/")
    body = pattern.lstrip("/")
    if not anchored and "/" not in body.rstrip("/"):
        body = f"**/{body}"
    try:
        return normalize_pattern(body, field="gitattributes")
    except ValidationError:
        return None
