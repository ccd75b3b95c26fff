"""Diff to symbols: which definitions a change touches, on both sides of the diff.

``git diff -U0 base..head`` (or ``base`` against a worktree, untracked files included)
gives hunks as line ranges; each hunk's old lines are mapped onto the symbols of the base
commit and its new lines onto the symbols of the new side. A changed line belongs to the
innermost definition around it (a line inside ``RetryPolicy.backoff`` touches that method,
not the whole class); a changed line outside every definition touches the file itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from detente.index.extract import Symbol, extract_symbols
from detente.index.innermost import innermost as _innermost
from detente.index.languages import language_of
from detente.index.symbols import SymbolIndex, SymbolTable
from detente.vcs.git import Git

__all__ = ["Hunk", "TouchedFile", "diff_hunks", "touched", "touched_staged"]

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Hunk:
    """One hunk: ``old_count`` lines from ``old_start`` became ``new_count`` from ``new_start``."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int


@dataclass(frozen=True)
class TouchedFile:
    """What a change did to one file.

    Attributes:
        path: the path on the new side (the old path for a deletion).
        old_path: the path on the base side (None for a new file).
        symbols: the innermost definitions touched, ``path::Qualified.name``, sorted.
        outside: True when some changed line lies outside every definition.
    """

    path: str
    old_path: str | None
    symbols: tuple[str, ...]
    outside: bool

    def to_wire(self) -> dict[str, object]:
        return {
            "path": self.path,
            "oldPath": self.old_path,
            "symbols": list(self.symbols),
            "outsideSymbols": self.outside,
        }


def diff_hunks(
    git: Git, base: str, head: str | None, *, cached: bool = False
) -> dict[tuple[str | None, str | None], list[Hunk]]:
    """Hunks per ``(old path, new path)`` between ``base`` and ``head`` (None: worktree;
    with ``cached``: the index, as ``git diff --cached base``).

    Renames are detected (``-M``); a new file has old path None, a deleted one new path None.
    """
    args = [
        "diff",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "-M",
        "--src-prefix=a/",
        "--dst-prefix=b/",
    ]
    if cached:
        args.append("--cached")
    args += [base, head] if head is not None else [base]
    out = git.run(*args).stdout_bytes
    files: dict[tuple[str | None, str | None], list[Hunk]] = {}
    old: str | None = None
    new: str | None = None
    for line in out.split(b"\n"):
        if line.startswith(b"diff --git "):
            old = new = None
        elif line.startswith(b"--- "):
            old = _side_path(line[4:], b"a/")
        elif line.startswith(b"+++ "):
            new = _side_path(line[4:], b"b/")
            files.setdefault((old, new), [])
        elif line.startswith(b"@@"):
            match = _HUNK.match(line)
            if match is not None:
                o, oc, n, nc = match.groups()
                files.setdefault((old, new), []).append(
                    Hunk(int(o), int(oc or b"1"), int(n), int(nc or b"1"))
                )
    return files


def touched(
    index: SymbolIndex,
    base: str,
    *,
    head: str | None = None,
    worktree: Path | None = None,
) -> list[TouchedFile]:
    """Files and innermost symbols changed from ``base`` to ``head`` or to a worktree.

    Args:
        index: the repository's symbol index.
        base: the base commit.
        head: the new side as a commit; None with ``worktree`` compares the worktree
            (uncommitted and untracked files included).
        worktree: the worktree directory when ``head`` is None.

    Returns:
        One :class:`TouchedFile` per changed file, sorted by path.

    Raises:
        ValidationError: ``validation_error`` when ``base`` or ``head`` names no commit.
        GitError: ``vcs_error`` when git fails.
    """
    git = Git(worktree) if worktree is not None else index.git
    old_table = index.at(base)
    new_table = index.at(head) if head is not None else None
    hunks = diff_hunks(git, old_table.commit, new_table.commit if new_table else None)
    if head is None and worktree is not None:
        for path in git.run("ls-files", "-z", "--others", "--exclude-standard").stdout.split("\0"):
            if path:
                hunks.setdefault((None, path), [Hunk(0, 0, 1, 1 << 30)])

    def new_side(path: str) -> Iterable[Symbol]:
        if new_table is not None:
            return new_table.symbols.get(path, ())
        return _worktree_symbols(worktree, path)

    return _mapped(old_table, hunks, new_side)


def touched_staged(index: SymbolIndex) -> list[TouchedFile]:
    """Files and innermost symbols the commit in progress changes: the index git is
    committing (``git diff --cached HEAD``; ``$GIT_INDEX_FILE`` when ``index.git``
    carries it) against ``HEAD``, the new side read from the index's blobs, not from the
    working files (a partial ``git add -p`` commits only what is staged).

    Returns:
        One :class:`TouchedFile` per staged file, sorted by path.

    Raises:
        ValidationError: ``validation_error`` when ``HEAD`` names no commit (unborn branch).
        GitError: ``vcs_error`` when git fails.
    """
    git = index.git
    old_table = index.at("HEAD")
    hunks = diff_hunks(git, old_table.commit, None, cached=True)

    def new_side(path: str) -> Iterable[Symbol]:
        if language_of(path) is None:
            return ()
        blob = git.run("cat-file", "blob", f":{path}", check=False)
        return (extract_symbols(path, blob.stdout_bytes) or []) if blob.ok else ()

    return _mapped(old_table, hunks, new_side)


def _mapped(
    old_table: SymbolTable,
    hunks: dict[tuple[str | None, str | None], list[Hunk]],
    new_side: Callable[[str], Iterable[Symbol]],
) -> list[TouchedFile]:
    """Each file's hunks mapped onto the old commit's symbols and the new side's."""
    out: list[TouchedFile] = []
    for (old_path, new_path), file_hunks in sorted(hunks.items(), key=lambda kv: _key(kv[0])):
        found: set[str] = set()
        outside = False
        if old_path is not None:
            old_symbols = old_table.symbols.get(old_path, ())
            for hunk in file_hunks:
                if hunk.old_count:
                    names, out_of = _innermost(old_symbols, hunk.old_start, hunk.old_count)
                    found |= names
                    outside |= out_of
        if new_path is not None:
            new_symbols = list(new_side(new_path))
            for hunk in file_hunks:
                if hunk.new_count:
                    names, out_of = _innermost(new_symbols, hunk.new_start, hunk.new_count)
                    found |= names
                    outside |= out_of
        if not file_hunks:
            outside = True  # a binary or mode-only change
        where = new_path or old_path
        assert where is not None
        out.append(TouchedFile(where, old_path, tuple(sorted(found)), outside))
    return out


def _worktree_symbols(worktree: Path | None, path: str) -> list[Symbol]:
    if worktree is None or language_of(path) is None:
        return []
    try:
        source = (worktree / path).read_bytes()
    except OSError:
        return []
    return extract_symbols(path, source) or []


def _side_path(raw: bytes, prefix: bytes) -> str | None:
    raw = raw.rstrip(b"\t")
    if raw == b"/dev/null":
        return None
    if raw.startswith(b'"') and raw.endswith(b'"'):
        raw = raw[1:-1]  # git quotes unusual names; escapes inside are left as they are
    return raw[len(prefix) :].decode("utf-8", "surrogateescape") if raw.startswith(prefix) else None


def _key(pair: tuple[str | None, str | None]) -> str:
    return pair[1] or pair[0] or ""
