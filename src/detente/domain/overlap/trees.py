"""Tree-aware severity: judge a path overlap by the files that exist at the base commits.

Two glob patterns can intersect only in paths nobody has: ``src/detente/*/routes/*.py``
and ``src/detente/vcs/**`` share ``src/detente/vcs/routes/a.py``, a file that does not
exist. Blocking on such a witness spawns meetings about nothing. So a path overlap is
judged against the trees of both claims' base commits (:class:`TreeView`):

* ``existing``: some file of either tree is covered by both targets; it becomes the
  witness (witnesses prefer existing files) and the overlap blocks;
* ``literal``: no such file, but one claim names a literal path the other covers (a file
  it means to create: ``src/api/app.py`` against ``src/api/**``): it blocks;
* ``potential``: both sides are wildcards and they meet only in paths that exist at
  neither base commit: the overlap is reported with severity ``potential`` (advisory,
  never blocking);
* ``generated``: every shared path found is a generated artifact (``linguist-generated``
  in a ``.gitattributes`` file at any depth, or a ``[generated]`` pattern in
  ``detente.toml``): generated files are rebuilt, not merged, so they create no overlap
  at all.

Which paths are generated follows git's attribute precedence (:attr:`TreeView.rules`):
the last matching rule wins, a nested ``.gitattributes`` after its parents', so
``vendor/.gitattributes`` can unset what the root one set. A *first-class* artifact
(:class:`Artifact`, ``[[generated.artifacts]]`` in ``detente.toml``) also names its
generator inputs: who may write it is judged on those inputs
(:mod:`detente.domain.generated_authority`).

When no tree is known (a repository without a checkout, an unknown commit) the overlap
keeps its plain glob verdict and blocks. Pure: the trees are data handed in by the
service (read from git by :mod:`detente.vcs.trees`; commit trees never change).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from detente.domain.overlap.globs import compile_pattern, covers, matches
from detente.domain.overlap.paths import has_wildcard

__all__ = ["Artifact", "Judge", "TreeSource", "TreeView", "Verdict", "judge"]


class Verdict(StrEnum):
    """How a path overlap stands against the base trees (see the module docstring)."""

    EXISTING = "existing"
    LITERAL = "literal"
    POTENTIAL = "potential"
    GENERATED = "generated"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Artifact:
    """A first-class generated artifact: a committed file rebuilt from its inputs.

    Attributes:
        path: the artifact's canonical path pattern (usually one literal file).
        inputs: canonical path patterns of the generator's inputs.
    """

    path: str
    inputs: tuple[str, ...]


@dataclass(frozen=True)
class TreeView:
    """The files of one commit and its generated-artifact patterns.

    Attributes:
        commit: the commit OID.
        files: every path of its tree, sorted: files, symlinks and submodules (gitlinks,
            a path a directory pattern ``D/**`` of its own name covers).
        generated: canonical path patterns of generated artifacts (used when ``rules`` is
            empty: every one sets the mark).
        rules: ``(pattern, generated?)`` in precedence order, the last match deciding
            (git attribute order: parents' files before nested ones, lines in order).
        artifacts: first-class artifacts (always generated), with their inputs.
    """

    commit: str
    files: tuple[str, ...]
    generated: tuple[str, ...] = ()
    rules: tuple[tuple[str, bool], ...] = ()
    artifacts: tuple[Artifact, ...] = ()

    def is_generated(self, path: str) -> bool:
        """Whether ``path`` is a generated artifact at this commit."""
        if self.artifact(path) is not None:
            return True
        rules = self.rules or tuple((p, True) for p in self.generated)
        for pattern, value in reversed(rules):
            if matches(pattern, path):
                return value
        return False

    def artifact(self, path: str) -> Artifact | None:
        """The first-class artifact ``path`` is, if any (the last declared wins)."""
        for found in reversed(self.artifacts):
            if matches(found.path, path):
                return found
        return None


class TreeSource(Protocol):
    """Where the domain gets a commit's :class:`TreeView` (None when it cannot know)."""

    def view(self, commit: str) -> TreeView | None: ...


def judge(
    mine: Sequence[str], theirs: Sequence[str], witness: str, views: Sequence[TreeView]
) -> tuple[Verdict, str]:
    """Judge one path overlap against the base trees.

    Args:
        mine: the path patterns standing for my target (one pattern, or a module's).
        theirs: the path patterns standing for their target.
        witness: a path both cover, found by the glob intersection.
        views: the trees of the two base commits that are known (empty: no knowledge).

    Returns:
        ``(verdict, witness)``: the witness is an existing file for ``existing``, else the
        one given.
    """
    if not views:
        return Verdict.UNKNOWN, witness
    shared = _existing_shared(mine, theirs, views)
    if shared is not None:
        return Verdict.EXISTING, shared
    if _generated(views, witness):
        return Verdict.GENERATED, witness
    literal = _literal_met(mine, theirs) or _literal_met(theirs, mine)
    if literal is not None:
        return Verdict.LITERAL, literal
    return Verdict.POTENTIAL, witness


def _literal_met(mine: Sequence[str], theirs: Sequence[str]) -> str | None:
    """A literal path of ``mine`` (a file its claim means to create) that ``theirs``
    covers: a real overlap even though the file does not exist yet."""
    for pattern in mine:
        if not has_wildcard(pattern) and any(covers(q, pattern) for q in theirs):
            return pattern
    return None


def _generated(views: Sequence[TreeView], path: str) -> bool:
    """Generated at either base commit."""
    return any(v.is_generated(path) for v in views)


def _existing_shared(
    mine: Sequence[str], theirs: Sequence[str], views: Sequence[TreeView]
) -> str | None:
    """The first existing, non-generated file both sides cover (by path order)."""
    best: str | None = None
    for view in views:
        for pattern in mine:
            for path in _under(view.files, pattern):
                if best is not None and path >= best:
                    break
                if any(covers(q, path) for q in theirs) and not _generated(views, path):
                    best = path
                    break
    return best


def _under(files: tuple[str, ...], pattern: str) -> Sequence[str]:
    """The files that may match ``pattern``: those under its leading literal directory."""
    prefix = "/".join(compile_pattern(pattern).literal_segments)
    candidates: Sequence[str]
    if not prefix:
        candidates = files
    else:
        lo = bisect.bisect_left(files, prefix)
        hi = bisect.bisect_left(files, prefix + "0")  # '0' follows '/': past "prefix/..."
        candidates = files[lo:hi]
    return [path for path in candidates if covers(pattern, path)]


class Judge:
    """:func:`judge` for one analysis: my base commit fixed, views fetched once each.

    Args:
        source: where trees come from (None: no knowledge, every verdict ``unknown``).
        my_base: the base commit of the claim being analysed (None when it has none).
    """

    def __init__(self, source: TreeSource | None, my_base: str | None) -> None:
        self._source = source
        self._my_base = my_base
        self._views: dict[str, TreeView | None] = {}

    def _view(self, commit: str | None) -> TreeView | None:
        if self._source is None or commit is None:
            return None
        if commit not in self._views:
            self._views[commit] = self._source.view(commit)
        return self._views[commit]

    def __call__(
        self, their_base: str | None, mine: Sequence[str], theirs: Sequence[str], witness: str
    ) -> tuple[Verdict, str]:
        """The verdict on one overlap with a claim based on ``their_base``."""
        views: list[TreeView] = []
        for commit in dict.fromkeys((self._my_base, their_base)):
            view = self._view(commit)
            if view is not None:
                views.append(view)
        return judge(mine, theirs, witness, views)
