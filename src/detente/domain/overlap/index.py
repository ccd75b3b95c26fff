"""An index of claimed path patterns that finds overlaps without scanning every claim.

Entries are ``(key, pattern)`` pairs; a key (a claim id) may hold many patterns. Each
pattern sits in a trie of literal path segments at the node of its leading literal
segments (``lib/ansible/modules/*.py`` at ``lib/ansible/modules``, ``**/*.yml`` at the
root, an exact path at its own node). Every path a pattern matches starts with the
pattern's leading literal segments, so two patterns can only meet when one's node is an
ancestor of (or the same as) the other's. A query walks the trie along its own
segments: a literal segment follows one child, a ``*``/``?`` segment only the children
whose names it matches (a character class keeps every child), and ``**`` takes every entry
of the subtree below; the entries *on* every node reached are candidates. So
``lib/*.py`` never looks at ``lib/sub/x.py``, and an exact path only at its own node and
its ancestors.

A second filter is the literal extension: when every path a pattern matches ends with
``".py"`` it cannot meet a pattern whose paths all end with ``".yml"``. Entries are
bucketed by extension (``None`` when unknown) both on their own node and in each
ancestor's view of the entries below it, so ``**/*.yml`` never even looks at ``x/a.py``.

A ``dir/**`` query contains every entry below ``dir``'s node: those it takes in bulk,
already sorted, from the node's list of answers
(:mod:`~detente.domain.overlap.subtree_answers`). Other candidates are verified with the
exact automaton intersection, which also gives the witness path; a pair the search
cannot decide within its budget is reported with no witness (``None``) and counts as
overlapping. :meth:`PatternIndex.matching` answers the
simpler question "which patterns match this concrete path" with the same filters and
:meth:`CompiledPattern.matches`. An entry may carry carve-outs (patterns cut out of it by
a split resolution, :mod:`~detente.domain.overlap.carveouts`): a carved-out path is
matched by nothing in the entry, and overlaps are searched outside the carve-outs of
both sides. The index is pure: no IO, no clock.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from detente.domain.overlap.carveouts import intersect_carved
from detente.domain.overlap.globs import (
    Budget,
    CompiledPattern,
    Undecided,
    compile_pattern,
    intersect_compiled,
)
from detente.domain.overlap.paths import GLOBSTAR
from detente.domain.overlap.shapes import segment_filter
from detente.domain.overlap.subtree_answers import Answer, discard, insert, merged, without_key

__all__ = ["PatternIndex"]

_Entry = tuple[str, str]
#: ``pattern -> keys holding it``: the entries of one node (or subtree) and extension.
_Group = dict[str, set[str]]
_Buckets = dict[str | None, _Group]


#: What a new node has below it: nothing, in containers shared by every leaf and never
#: written to (a node gets its own when its first child or answer below arrives; an empty
#: container is replaced, never filled, so a restored snapshot's shared ones stay empty).
_NO_CHILDREN: dict[str, _Node] = {}
_NO_ANSWERS: list[Answer] = []
_NO_BUCKETS: _Buckets = {}


class _Node:
    """A trie node: ``own`` the entries on it, ``deeper`` those strictly below it (the
    entries of the subtree are both: a leaf, most nodes of a large index, keeps its
    entries once), ``below`` the answers of the uncarved ones strictly below."""

    __slots__ = ("below", "children", "deeper", "own")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = _NO_CHILDREN
        self.own: _Buckets = {}
        self.deeper: _Buckets = _NO_BUCKETS
        self.below: list[Answer] = _NO_ANSWERS  # entries strictly below, uncarved (sorted)

    def put_deeper(self, bucket: str | None, pattern: str, holders: set[str]) -> None:
        """List ``pattern`` (held by ``holders``) among the entries strictly below."""
        if not self.deeper:
            self.deeper = {}
        _put(self.deeper, bucket, pattern, holders)

    def child(self, segment: str) -> _Node:
        """The child named ``segment``, created when missing."""
        if not self.children:
            self.children = {}
        node = self.children.get(segment)
        if node is None:
            node = self.children[segment] = _Node()
        return node

    def add_below(self, answer: Answer) -> None:
        """Insert the answer of an entry below this node into :attr:`below`."""
        if not self.below:
            self.below = []
        insert(self.below, answer)


class PatternIndex:
    """Path patterns of live claims, indexed for overlap queries.

    Patterns are stored in their canonical form (``normalize_pattern`` without case
    folding: fold before adding when the repository is case-insensitive), and the
    ``their_pattern`` of every result is that canonical form.
    """

    def __init__(self) -> None:
        self._root = _Node()
        self._by_key: dict[str, set[str]] = {}
        self._compiled: dict[str, CompiledPattern] = {}
        # pattern -> the keys holding it: one set per pattern, the very set every group
        # of its node and of the nodes above lists it with (entries are grouped by pattern)
        self._holders: dict[str, set[str]] = {}
        self._carved: dict[_Entry, tuple[CompiledPattern, ...]] = {}
        self._carved_keys: dict[str, set[str]] = {}  # pattern -> keys with carve-outs
        self._size = 0

    def __len__(self) -> int:
        """The number of ``(key, pattern)`` entries."""
        return self._size

    def patterns(self, key: str) -> frozenset[str]:
        """The canonical patterns held by ``key`` (empty when it holds none)."""
        return frozenset(self._by_key.get(key, ()))

    def carve_outs(self, key: str, pattern: str) -> tuple[str, ...]:
        """The carve-outs of one entry (empty: none, or no such entry)."""
        return tuple(c.pattern for c in self._carved.get((key, pattern), ()))

    def add(self, key: str, pattern: str, carve_outs: Sequence[str] = ()) -> None:
        """Index one pattern of a key; adding an entry already present does nothing.

        Args:
            key: the holder, e.g. a claim id.
            pattern: a path pattern (normalised on the way in).
            carve_outs: patterns cut out of this entry (see the module docstring).

        Raises:
            ValidationError: code ``validation_error`` when the pattern is invalid.
        """
        compiled = compile_pattern(pattern)
        canonical = compiled.pattern
        held = self._by_key.setdefault(key, set())
        if canonical in held:
            return
        held.add(canonical)
        if carve_outs:
            self._carved[(key, canonical)] = tuple(compile_pattern(c) for c in carve_outs)
            self._carved_keys.setdefault(canonical, set()).add(key)
        holders = self._holders.get(canonical)
        first = holders is None
        if holders is None:
            holders = self._holders[canonical] = set()
            self._compiled[canonical] = compiled
        holders.add(key)
        bucket = compiled.extension
        answer = (key, canonical, canonical if compiled.is_literal else compiled.witness())
        node = self._root
        for segment in compiled.literal_segments:
            if first:
                node.put_deeper(bucket, canonical, holders)
            if not carve_outs:
                node.add_below(answer)
            node = node.child(segment)
        if first:
            _put(node.own, bucket, canonical, holders)
        self._size += 1

    def remove(self, key: str, pattern: str) -> None:
        """Remove one entry.

        Args:
            key: the holder.
            pattern: the pattern as added (any spelling with the same canonical form).

        Raises:
            KeyError: the entry is not in the index.
            ValidationError: code ``validation_error`` when the pattern is invalid.
        """
        compiled = compile_pattern(pattern)
        canonical = compiled.pattern
        held = self._by_key.get(key)
        if held is None or canonical not in held:
            raise KeyError((key, pattern))
        held.discard(canonical)
        carved = self._carved.pop((key, canonical), None) is not None
        if carved:
            _discard_key(self._carved_keys, canonical, key)
        if not held:
            del self._by_key[key]
        holders = self._holders[canonical]
        holders.discard(key)
        bucket = compiled.extension
        path = [self._root]
        for segment in compiled.literal_segments:
            path.append(path[-1].children[segment])
        if not holders:  # the pattern's last holder: its groups drop it
            del self._holders[canonical]
            del self._compiled[canonical]
            _discard(path[-1].own, bucket, canonical)
            for node in path[:-1]:
                _discard(node.deeper, bucket, canonical)
        if not carved:
            for node in path[:-1]:
                discard(node.below, key, canonical)
        for depth in range(len(path) - 1, 0, -1):
            if path[depth].own or path[depth].deeper:
                break
            del path[depth - 1].children[compiled.literal_segments[depth - 1]]
        self._size -= 1

    def remove_key(self, key: str) -> int:
        """Remove every entry of a key.

        Args:
            key: the holder.

        Returns:
            How many entries were removed (0 when the key held none).
        """
        held = sorted(self._by_key.get(key, ()))
        for pattern in held:
            self.remove(key, pattern)
        return len(held)

    def candidates(self, pattern: str) -> set[str]:
        """Keys that may hold a pattern overlapping ``pattern`` (a superset, cheap).

        Args:
            pattern: a path pattern (normalised on the way in).

        Returns:
            The keys of every entry the trie and extension filters could not rule out.

        Raises:
            ValidationError: code ``validation_error`` when the pattern is invalid.
        """
        groups = self._candidate_groups(compile_pattern(pattern))
        return {key for group in groups for keys in group.values() for key in keys}

    def overlapping(
        self,
        pattern: str,
        *,
        exclude: str | None = None,
        budget: Budget | None = None,
        carve_outs: Sequence[str] = (),
    ) -> list[tuple[str, str, str | None]]:
        """Every entry whose pattern overlaps ``pattern``, with a witness path.

        Args:
            pattern: a path pattern (normalised on the way in).
            exclude: a key to leave out, typically the querying claim's own id.
            carve_outs: patterns cut out of ``pattern`` (the entries' own carve-outs
                apply too): the witness lies outside both.
            budget: search work shared by every pair decided here (default: each pair
                gets its own :data:`~detente.domain.overlap.SEARCH_BUDGET`).

        Returns:
            ``(key, their_pattern, witness)`` tuples sorted by key then pattern, where
            ``witness`` is a path both patterns match (see ``intersect``), or ``None``
            when the search could not decide within its budget (then the pair is
            listed: undecided counts as overlapping, never as disjoint).

        Raises:
            ValidationError: code ``validation_error`` when the pattern is invalid.
        """
        query = compile_pattern(pattern)
        if query.is_subtree and not carve_outs:
            return self._subtree_overlaps(query, exclude, budget)
        return self._decided(query, self._candidate_groups(query), exclude, budget, carve_outs)

    def _subtree_overlaps(
        self, query: CompiledPattern, exclude: str | None, budget: Budget | None
    ) -> list[Answer]:
        """:meth:`overlapping` for ``dir/**``: the entries on the nodes from the root to
        ``dir`` decided one by one, the uncarved ones below ``dir`` taken in bulk."""
        groups: list[_Group] = []
        node: _Node | None = self._root
        for segment in query.literal_segments:
            assert node is not None
            groups.extend(node.own.values())
            node = node.children.get(segment)
            if node is None:
                return self._decided(query, groups, exclude, budget, ())
        assert node is not None
        groups.extend(node.own.values())
        bulk = without_key(node.below, exclude)
        lead = query.literal_segments
        carved_below: list[_Group] = [  # carved entries below: few, decided one by one
            {theirs: {key}}
            for key, theirs in self._carved
            if key != exclude and _strictly_below(self._compiled[theirs].literal_segments, lead)
        ]
        decided = self._decided(query, [*groups, *carved_below], exclude, budget, ())
        return merged(bulk, decided)

    def _decided(
        self,
        query: CompiledPattern,
        groups: list[_Group],
        exclude: str | None,
        budget: Budget | None,
        carve_outs: Sequence[str],
    ) -> list[Answer]:
        """The overlaps among the entries of ``groups``, each pattern decided, sorted."""
        pattern = query.pattern
        found: list[Answer] = []
        carved = self._carved
        # Entries are grouped by pattern (many claims hold ``lib/**``): each distinct
        # pattern is decided once, and its keys join the result in one step.
        for group in groups:
            for theirs, keys in group.items():
                if carve_outs or (carved and theirs in self._carved_keys):
                    plain: list[str | None] = []  # the uncarved pair, decided once
                    for key in keys:  # carve-outs are per entry
                        if key == exclude:
                            continue
                        cut = carved.get((key, theirs), ())
                        if carve_outs or cut:
                            meets, carved_witness = _carved_witness(
                                pattern, carve_outs, theirs, cut, budget
                            )
                            if meets:
                                found.append((key, theirs, carved_witness))
                            continue
                        if not plain:
                            plain.append(_decide(query, self._compiled[theirs], budget))
                        if plain[0] != "":
                            found.append((key, theirs, plain[0]))
                    continue
                decided = _decide(query, self._compiled[theirs], budget)
                if decided == "":
                    continue
                if exclude in keys:
                    found.extend((key, theirs, decided) for key in keys if key != exclude)
                else:
                    found.extend((key, theirs, decided) for key in keys)
        # (key, pattern) pairs are unique, so the witness never takes part in the order.
        found.sort()
        return found

    def matching(self, path: str, *, exclude: str | None = None) -> list[tuple[str, str]]:
        """Every entry whose pattern covers the concrete ``path`` (matches it, or claims
        the directory ``path`` itself names: a submodule's gitlink).

        The path is read literally (``app/[id]/page.tsx`` is that file): this is the
        question a write check, a commit guard or memory authority asks.

        Args:
            path: a normalised repo-relative path (see ``normalize_path``).
            exclude: a key to leave out.

        Returns:
            ``(key, their_pattern)`` tuples sorted by key then pattern.
        """
        segments = path.split("/")
        extension = path.rsplit(".", 1)[1] if "." in path else None
        groups: list[_Group] = []
        node = self._root
        for segment in segments:
            groups.extend(_compatible(node.own, extension))
            child = node.children.get(segment)
            if child is None:
                break
            node = child
        else:
            groups.extend(_compatible(node.own, extension))
        found = [
            (key, theirs)
            for group in groups
            for theirs, keys in group.items()
            if self._compiled[theirs].covers(path)
            for key in keys
            if key != exclude
            and not any(c.covers(path) for c in self._carved.get((key, theirs), ()))
        ]
        return sorted(found)

    def _candidate_groups(self, query: CompiledPattern) -> list[_Group]:
        """The groups of every entry the query may meet (see the module docstring): a
        literal segment follows one child, a wildcard segment the children whose names it
        matches, ``**`` takes the whole subtree. The groups are disjoint (each entry is
        on one node; the nodes reached at one depth are distinct and none is below
        another), so no entry is listed twice, and a pattern is in one group at most."""
        extension = query.extension
        found: list[_Group] = []
        lead = query.literal_segments
        level = [self._root]
        for depth, segment in enumerate(query.segments):
            if segment is GLOBSTAR:
                for node in level:
                    found.extend(_compatible(node.own, extension))
                    found.extend(_compatible(node.deeper, extension))
                return found
            for node in level:
                found.extend(_compatible(node.own, extension))
            if depth < len(lead):
                child = level[0].children.get(lead[depth])
                level = [child] if child is not None else []
            else:
                accepts = segment_filter(segment)
                level = [
                    child
                    for node in level
                    for name, child in node.children.items()
                    if accepts is None or accepts(name)
                ]
            if not level:
                return found
        for node in level:
            found.extend(_compatible(node.own, extension))
        return found

    def __iter__(self) -> Iterator[tuple[str, str]]:
        """Every ``(key, pattern)`` entry, sorted."""
        return iter(sorted((key, p) for key, held in self._by_key.items() for p in held))


def _strictly_below(segments: tuple[str, ...], lead: tuple[str, ...]) -> bool:
    """Whether a node's segments name a node strictly below the node of ``lead``."""
    return len(segments) > len(lead) and segments[: len(lead)] == lead


def _carved_witness(
    mine: str,
    my_cuts: Sequence[str],
    theirs: str,
    their_cuts: Sequence[CompiledPattern],
    budget: Budget | None,
) -> tuple[bool, str | None]:
    """``(they meet, witness)`` of two carved patterns (undecided: they meet, no witness)."""
    try:
        found = intersect_carved(
            mine, my_cuts, theirs, [c.pattern for c in their_cuts], budget=budget
        )
    except Undecided:
        return True, None
    return found is not None, found


def _decide(query: CompiledPattern, theirs: CompiledPattern, budget: Budget | None) -> str | None:
    """The witness of a pair, None when undecided (counts as overlapping), ``""`` when
    disjoint (no valid path is empty)."""
    try:
        witness = intersect_compiled(query, theirs, budget=budget)
    except Undecided:
        return None
    return "" if witness is None else witness


def _compatible(buckets: _Buckets, extension: str | None) -> list[_Group]:
    """The groups whose patterns may share a path with a query of this extension.

    Paths ending with ``".a"`` and with ``".b"`` (``a``, ``b`` without ``.``) exist only
    when ``a == b``, so a known extension rules out every other known extension.
    """
    if extension is None:
        return list(buckets.values())
    return [group for name in (extension, None) if (group := buckets.get(name)) is not None]


def _put(buckets: _Buckets, name: str | None, pattern: str, holders: set[str]) -> None:
    buckets.setdefault(name, {})[pattern] = holders


def _discard(buckets: _Buckets, name: str | None, pattern: str) -> None:
    group = buckets[name]
    del group[pattern]
    if not group:
        del buckets[name]


def _discard_key(group: dict[str, set[str]], pattern: str, key: str) -> None:
    keys = group[pattern]
    keys.discard(key)
    if not keys:
        del group[pattern]
