"""Commit trees for tree-aware severity: files and generated-artifact patterns, from git.

:class:`GitTrees` is the IO side of :class:`detente.domain.overlap.trees.TreeSource`: for
a commit it lists the tree's files (``git ls-tree``) and reads the generated-artifact
patterns *of that commit*:

* every ``.gitattributes`` of the tree, the root one and nested ones: paths with
  ``linguist-generated`` (or ``linguist-generated=true``) set; ``-linguist-generated``,
  ``!linguist-generated`` or ``=false`` unsets it. As in git, a pattern is relative to
  the directory of its file, a pattern without ``/`` matches a name at any depth below
  it, and the last matching line wins, a nested file's lines after its parents'
  (:attr:`~detente.domain.overlap.trees.TreeView.rules`);
* ``detente.toml`` at the repository root: ``[generated] patterns = ["gen/**", ...]``,
  and first-class artifacts with their generator inputs::

      [[generated.artifacts]]
      path = "docs/openapi.json"
      inputs = ["src/detente/api/**"]

A commit's tree never changes, so views are cached by commit OID (a small LRU). A
pattern that is not a valid claim pattern, or a ``detente.toml`` that is not valid TOML,
is skipped: a repository file must not make every overlap check fail.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from detente.domain.overlap.paths import normalize_pattern
from detente.domain.overlap.trees import Artifact, TreeView
from detente.errors import ValidationError
from detente.vcs.blobs import read_blobs, read_tree_paths
from detente.vcs.git import Git, GitError

__all__ = [
    "GitTrees",
    "gitattributes_generated",
    "gitattributes_rules",
    "toml_artifacts",
    "toml_generated",
]

_KEPT = 32
_SET = frozenset({"linguist-generated", "linguist-generated=true", "linguist-generated=1"})
_UNSET = frozenset({"-linguist-generated", "linguist-generated=false", "!linguist-generated"})


class GitTrees:
    """Tree views of one repository's commits (thread-safe).

    Args:
        repo: a directory inside the repository.
        extra_generated: canonical patterns of generated artifacts the server's
            configuration adds to every commit's own (``[generated] patterns`` of the
            served ``detente.toml``).
        extra_artifacts: first-class artifacts the served configuration declares; a
            commit's own declarations come after them (and win for the same path).
    """

    def __init__(
        self,
        repo: Path,
        extra_generated: tuple[str, ...] = (),
        extra_artifacts: tuple[Artifact, ...] = (),
    ) -> None:
        self._git = Git(repo)
        self._extra = extra_generated
        self._extra_artifacts = extra_artifacts
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
        entries, blobs_of = read_tree_paths(self._git, commit)  # one ls-tree for both
        files = {p for p, _ in blobs_of}
        wanted = {
            p: oid
            for p, oid in entries
            if p in files
            and (p == "detente.toml" or p == ".gitattributes" or p.endswith("/.gitattributes"))
        }
        blobs = read_blobs(self._git, wanted.values())
        rules: list[tuple[str, bool]] = [(p, True) for p in self._extra]
        if "detente.toml" in wanted:
            rules += [(p, True) for p in toml_generated(blobs[wanted["detente.toml"]])]
        # Parents before nested files (fewer segments first), so deeper lines win.
        attributes = sorted(
            (p for p in wanted if p != "detente.toml"), key=lambda p: (p.count("/"), p)
        )
        for path in attributes:
            directory = path.rpartition("/")[0]
            rules += gitattributes_rules(blobs[wanted[path]], directory)
        artifacts = list(self._extra_artifacts)
        if "detente.toml" in wanted:
            artifacts += toml_artifacts(blobs[wanted["detente.toml"]])
        return TreeView(
            commit=commit,
            files=tuple(p for p, _ in entries),
            generated=tuple(dict.fromkeys(p for p, on in rules if on)),
            rules=tuple(rules),
            artifacts=tuple(artifacts),
        )


def gitattributes_rules(text: bytes, directory: str = "") -> list[tuple[str, bool]]:
    """``(pattern, set?)`` for every ``linguist-generated`` line of a ``.gitattributes``.

    Args:
        text: the file's bytes.
        directory: the file's directory (``""`` for the root one): its patterns are
            relative to it.

    Returns:
        Canonical patterns in line order, True where the line sets the mark and False
        where it unsets it.
    """
    rules: list[tuple[str, bool]] = []
    for raw in text.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith('"'):
            continue
        pattern, *attrs = line.split()
        canonical = _canonical(pattern, directory)
        if canonical is None:
            continue
        for attr in attrs:
            if attr in _SET:
                rules.append((canonical, True))
            elif attr in _UNSET:
                rules.append((canonical, False))
    return rules


def gitattributes_generated(text: bytes, directory: str = "") -> list[str]:
    """Canonical patterns left marked ``linguist-generated`` by one ``.gitattributes``
    (a pattern a later line unsets is dropped)."""
    marked: dict[str, None] = {}
    for pattern, on in gitattributes_rules(text, directory):
        if on:
            marked[pattern] = None
        else:
            marked.pop(pattern, None)
    return list(marked)


def _generated_table(text: bytes) -> dict[str, Any]:
    import tomllib  # on use: a read of claims never parses a commit's detente.toml

    try:
        config = tomllib.loads(text.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError:
        return {}
    section = config.get("generated")
    return section if isinstance(section, dict) else {}


def _patterns(raw: object, field: str) -> list[str]:
    """The valid canonical patterns of a TOML array (anything else skipped)."""
    if not isinstance(raw, list):
        return []
    out = []
    for pattern in raw:
        if isinstance(pattern, str):
            try:
                out.append(normalize_pattern(pattern, field=field))
            except ValidationError:
                continue
    return out


def toml_generated(text: bytes) -> list[str]:
    """Canonical patterns of ``[generated] patterns`` in a ``detente.toml``."""
    return _patterns(_generated_table(text).get("patterns"), "generated.patterns")


def toml_artifacts(text: bytes) -> list[Artifact]:
    """First-class artifacts (``[[generated.artifacts]]`` with ``path`` and ``inputs``).

    An entry without a valid path or without one valid input is skipped.
    """
    raw = _generated_table(text).get("artifacts")
    out: list[Artifact] = []
    for entry in raw if isinstance(raw, list) else []:
        if not isinstance(entry, dict):
            continue
        path = _patterns([entry.get("path")], "generated.artifacts.path")
        inputs = _patterns(entry.get("inputs"), "generated.artifacts.inputs")
        if path and inputs:
            out.append(Artifact(path[0], tuple(dict.fromkeys(inputs))))
    return out


def _canonical(pattern: str, directory: str = "") -> str | None:
    """A gitattributes pattern as a claim pattern, relative to the file's ``directory``
    (git: a pattern without ``/`` matches a name at any depth below it)."""
    anchored = pattern.startswith("/")
    body = pattern.lstrip("/")
    if not anchored and "/" not in body.rstrip("/"):
        body = f"**/{body}"
    if directory:
        body = f"{directory}/{body}"
    try:
        return normalize_pattern(body, field="gitattributes")
    except ValidationError:
        return None
