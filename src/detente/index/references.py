"""Blast radius: where touched symbols are referenced, found with tree-sitter, bounded.

Starting from a set of symbols, every source file of the commit whose bytes mention a
symbol's name is parsed, and each identifier node spelling that name (``identifier``,
``property_identifier``, ``field_identifier``, ``type_identifier``) outside the symbol's
own definition is a reference. The definition enclosing a reference is itself affected:
at the next depth its references are searched in turn.

These are name matches, not type-resolved references: ``backoff`` matches every
``.backoff`` of any class. Names every class has (``__init__`` and other dunders,
``constructor``, ``new``, ``toString``...) are not followed at all. The result is evidence
for a conversation, bounded by ``depth`` and ``limit`` with the truncation stated, never a
proof.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from detente.domain.overlap.symbols import split_symbol
from detente.index.extract import Symbol
from detente.index.languages import grammar_for, language_of
from detente.index.symbols import SymbolIndex, SymbolTable
from detente.vcs.blobs import read_blobs, read_tree

__all__ = ["BlastRadius", "Reference", "blast_radius"]

_IDENTIFIERS = frozenset(
    {
        "identifier",
        "property_identifier",
        "field_identifier",
        "type_identifier",
        "shorthand_property_identifier",
    }
)

#: Names every class has: a match by name says nothing about this one.
_UNSEARCHED = frozenset({"constructor", "new", "New", "init", "main", "String", "toString"})


@dataclass(frozen=True)
class Reference:
    """One place that names a touched symbol.

    Attributes:
        symbol: the referenced symbol (``path::Qualified.name``).
        path: the file of the reference.
        line: its line (1-based).
        within: the innermost definition around it, or None at file level.
        depth: 1 for a reference to a starting symbol, 2 for one to a definition holding
            a depth-1 reference, ...
    """

    symbol: str
    path: str
    line: int
    within: str | None
    depth: int

    def to_wire(self) -> dict[str, object]:
        return {
            "symbol": self.symbol,
            "path": self.path,
            "line": self.line,
            "within": self.within,
            "depth": self.depth,
        }


@dataclass(frozen=True)
class BlastRadius:
    """References found, and whether a bound cut the search short."""

    references: tuple[Reference, ...]
    depth: int
    limit: int
    truncated: bool
    reason: str | None = None
    affected: tuple[str, ...] = field(default_factory=tuple)

    def to_wire(self) -> dict[str, object]:
        return {
            "references": [r.to_wire() for r in self.references],
            "affected": list(self.affected),
            "depth": self.depth,
            "limit": self.limit,
            "truncated": self.truncated,
            "truncation": self.reason,
            "method": "tree-sitter identifier matches by name (not type-resolved)",
        }


def blast_radius(
    index: SymbolIndex, commit: str, start: Iterable[str], *, depth: int = 2, limit: int = 50
) -> BlastRadius:
    """References to ``start`` symbols and, transitively, to the definitions holding them.

    Args:
        index: the repository's symbol index.
        commit: where to look.
        start: symbol names (``path::Qualified.name``).
        depth: how many hops to follow (1 = direct references only).
        limit: the most references to report.

    Returns:
        The bounded :class:`BlastRadius`; ``truncated`` says whether ``limit`` or
        ``depth`` cut it short.
    """
    table = index.at(commit)
    sources = _sources(index, table)
    seen = set(start)
    frontier = sorted(seen)
    found: list[Reference] = []
    affected: list[str] = []
    truncated = False
    reason: str | None = None
    level = 0
    while frontier and level < depth:
        level += 1
        following: list[str] = []
        for name in frontier:
            for ref in _references_to(table, sources, name, level):
                if len(found) >= limit:
                    truncated, reason = True, f"more than {limit} references"
                    break
                found.append(ref)
                if ref.within is not None and ref.within not in seen:
                    seen.add(ref.within)
                    following.append(ref.within)
                    affected.append(ref.within)
            if truncated:
                break
        if truncated:
            break
        frontier = sorted(following)
    if not truncated and frontier and level >= depth:
        truncated, reason = True, f"depth {depth} reached with {len(frontier)} symbols unexplored"
    return BlastRadius(tuple(found), depth, limit, truncated, reason, tuple(affected))


def _sources(index: SymbolIndex, table: SymbolTable) -> dict[str, bytes]:
    entries = [(p, o) for p, o in read_tree(index.git, table.commit) if language_of(p)]
    blobs = read_blobs(index.git, (o for _, o in entries))
    return {path: blobs[oid] for path, oid in entries}


def _references_to(
    table: SymbolTable, sources: dict[str, bytes], name: str, level: int
) -> list[Reference]:
    path, qualname = split_symbol(name)
    short = qualname.rsplit(".", 1)[-1]
    if short in _UNSEARCHED or (short.startswith("__") and short.endswith("__")):
        return []
    needle = short.encode()
    own = table.find(name)
    out: list[Reference] = []
    for file, source in sorted(sources.items()):
        if needle not in source:
            continue
        for line, byte in _identifier_lines(file, source, needle):
            if own is not None and file == path and own.start_byte <= byte < own.end_byte:
                continue  # the definition itself (and recursion inside it)
            within = _innermost(table.symbols.get(file, ()), byte)
            out.append(Reference(name, file, line, within.name if within else None, level))
    return out


def _identifier_lines(path: str, source: bytes, needle: bytes) -> list[tuple[int, int]]:
    language = language_of(path)
    loaded = grammar_for(language) if language else None
    if loaded is None:
        return []
    _, parser = loaded
    found: list[tuple[int, int]] = []
    stack: list[Any] = [parser.parse(source).root_node]
    while stack:
        node = stack.pop()
        if node.type in _IDENTIFIERS and node.text == needle:
            found.append((node.start_point[0] + 1, node.start_byte))
        elif node.child_count:
            stack.extend(node.children)
    return sorted(found)


def _innermost(symbols: Sequence[Symbol], byte: int) -> Symbol | None:
    best: Symbol | None = None
    for symbol in symbols:
        if symbol.start_byte <= byte < symbol.end_byte and (
            best is None or symbol.start_byte >= best.start_byte
        ):
            best = symbol
    return best
