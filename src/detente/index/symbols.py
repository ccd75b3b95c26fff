"""The symbol index of a repository: per commit, from git blobs, cached by blob OID.

``SymbolIndex(repo).at(commit)`` lists every file of the commit's tree (``git ls-tree``),
reads only the blobs it has never parsed (``git cat-file --batch``) and parses those with
tree-sitter. A blob's symbols depend on its bytes and its language only, so they are cached
by ``(blob OID, language)``: indexing the next commit re-parses just the files that
changed (incremental), and a file moved without edits costs nothing. Commit trees are
immutable, so a commit's table is cached too (a small LRU).

Bare names resolve through the index (:meth:`SymbolIndex.resolve`): ``RetryPolicy.backoff``
becomes ``src/settlement/retry.py::RetryPolicy.backoff`` when exactly one symbol has that
qualified name (or ends with it); several candidates are a ``validation_error`` (HTTP 422)
listing them.
"""

from __future__ import annotations

import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from detente.domain.overlap.paths import normalize_path
from detente.domain.overlap.symbols import SEPARATOR, split_symbol
from detente.errors import ValidationError
from detente.index.extract import Symbol, extract_symbols
from detente.index.languages import language_of
from detente.vcs.blobs import read_blobs, read_tree
from detente.vcs.git import Git

__all__ = ["SymbolIndex", "SymbolTable"]

_Cached = tuple[tuple[str, str, int, int, int, int], ...]
_COMMITS_KEPT = 16
_MAX_CANDIDATES = 20


@dataclass(frozen=True)
class SymbolTable:
    """Every file and symbol of one commit.

    Attributes:
        commit: the full commit OID.
        files: every file path of the commit's tree, sorted.
        symbols: path -> that file's symbols in source order (indexed files only).
    """

    commit: str
    files: tuple[str, ...]
    symbols: dict[str, tuple[Symbol, ...]]

    def all(self) -> Iterable[Symbol]:
        """Every symbol, by path then source order."""
        for path in sorted(self.symbols):
            yield from self.symbols[path]

    def find(self, name: str) -> Symbol | None:
        """The symbol named ``path::Qualified.name`` exactly, or None."""
        path, qualname = split_symbol(name)
        if path is None:
            return None
        return next((s for s in self.symbols.get(path, ()) if s.qualname == qualname), None)

    def matching(self, qualname: str) -> list[Symbol]:
        """Symbols whose qualified name is ``qualname`` or ends with ``.qualname``."""
        suffix = "." + qualname
        return [s for s in self.all() if s.qualname == qualname or s.qualname.endswith(suffix)]


class SymbolIndex:
    """Symbols of one git repository at any commit (thread-safe).

    Args:
        repo: a directory inside the repository (any worktree).
        git: the git wrapper to read it with (default ``Git(repo)``); a hook passes its
            own, which sees a push's quarantined objects.
    """

    def __init__(self, repo: Path, *, git: Git | None = None) -> None:
        self._git = git or Git(repo)
        self._lock = threading.Lock()
        self._blobs: dict[tuple[str, str], _Cached] = {}
        self._tables: OrderedDict[str, SymbolTable] = OrderedDict()
        self.parsed_blobs = 0
        """How many blobs were parsed so far (the cache's misses)."""

    @property
    def git(self) -> Git:
        """The git wrapper the index reads the repository with."""
        return self._git

    def commit_oid(self, rev: str) -> str:
        """The full OID of the commit ``rev`` names.

        Raises:
            ValidationError: ``validation_error`` (field ``commit``) when it names no commit.
        """
        result = self._git.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
        if result.returncode != 0:
            raise ValidationError(f"{rev!r} does not name a commit", field="commit")
        return result.stdout.strip()

    def at(self, rev: str) -> SymbolTable:
        """The symbol table of a commit (built on first use, then cached).

        Raises:
            ValidationError: ``validation_error`` when ``rev`` names no commit.
            GitError: ``vcs_error`` when git fails.
        """
        commit = self.commit_oid(rev)
        with self._lock:
            table = self._tables.get(commit)
            if table is not None:
                self._tables.move_to_end(commit)
                return table
        table = self._build(commit)
        with self._lock:
            self._tables[commit] = table
            while len(self._tables) > _COMMITS_KEPT:
                self._tables.popitem(last=False)
        return table

    def files(self, rev: str) -> frozenset[str]:
        """Every file path of a commit's tree."""
        return frozenset(self.at(rev).files)

    def symbols_of(self, path: str, source: bytes) -> list[Symbol] | None:
        """Symbols of bytes that are not (yet) a blob, e.g. a worktree file."""
        return extract_symbols(path, source)

    def resolve(self, name: str, rev: str, *, field: str = "symbols") -> str:
        """The canonical ``path::Qualified.name`` of a claimed symbol.

        Names are NFC-normalised first, as paths are (an NFD ``Café`` is the same name).
        A name already of the form ``path::Qualified.name`` is normalised and kept even
        when the commit does not define it yet (a claim may name what it will create). A
        bare qualified name is looked up: one definition whose qualified name equals it or
        ends with ``.name`` resolves to it.

        Raises:
            ValidationError: ``validation_error`` (``field`` set) when a bare name matches no
                symbol, or several (the ``candidates`` extra lists them, at most 20).
        """
        path, qualname = split_symbol(unicodedata.normalize("NFC", name))
        if not qualname:
            raise ValidationError(f"{field}: {name!r} names no symbol after '::'", field=field)
        if path is not None:
            return f"{normalize_path(path, field=field)}{SEPARATOR}{qualname}"
        table = self.at(rev)
        exact = [s for s in table.matching(qualname) if s.qualname == qualname]
        found = exact or table.matching(qualname)
        if len(found) == 1:
            return found[0].name
        if not found:
            raise ValidationError(
                f"{field}: no symbol {qualname!r} at {table.commit[:12]}; name a new one as "
                f"'path{SEPARATOR}{qualname}'",
                field=field,
            )
        candidates = [s.name for s in found]
        raise ValidationError(
            f"{field}: {qualname!r} is ambiguous at {table.commit[:12]}: "
            f"{len(candidates)} candidates ({', '.join(candidates[:5])}"
            f"{', ...' if len(candidates) > 5 else ''}); name one as 'path{SEPARATOR}name'",
            field=field,
            candidates=candidates[:_MAX_CANDIDATES],
        )

    def resolve_all(self, names: Sequence[str], rev: str, *, field: str) -> tuple[str, ...]:
        """:meth:`resolve` for each name (``field[i]`` in errors), duplicates removed."""
        out = [self.resolve(n, rev, field=f"{field}[{i}]") for i, n in enumerate(names)]
        return tuple(dict.fromkeys(out))

    def _build(self, commit: str) -> SymbolTable:
        entries = read_tree(self._git, commit)
        wanted: dict[str, str] = {}
        with self._lock:
            for path, oid in entries:
                language = language_of(path)
                if language is not None and (oid, language) not in self._blobs:
                    wanted.setdefault(oid, path)
        if wanted:
            contents = read_blobs(self._git, wanted)
            parsed: dict[tuple[str, str], _Cached] = {}
            for oid, path in wanted.items():
                symbols = extract_symbols(path, contents[oid])
                language = language_of(path)
                assert language is not None
                parsed[(oid, language)] = tuple(
                    (s.qualname, s.kind, s.start_byte, s.end_byte, s.start_line, s.end_line)
                    for s in symbols or ()
                )
            with self._lock:
                self._blobs.update(parsed)
                self.parsed_blobs += len(parsed)
        table: dict[str, tuple[Symbol, ...]] = {}
        with self._lock:
            for path, oid in entries:
                language = language_of(path)
                if language is None:
                    continue
                cached = self._blobs.get((oid, language))
                if cached:
                    table[path] = tuple(Symbol(path, *row) for row in cached)
        return SymbolTable(commit=commit, files=tuple(p for p, _ in entries), symbols=table)
