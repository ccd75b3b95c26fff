"""Compilation of a parsed path pattern: its literal outline and its automaton.

:func:`~detente.domain.overlap.paths.parse_segments` turns a normalised pattern into
segments of atoms; this module derives from them what :class:`CompiledPattern
<detente.domain.overlap.globs.CompiledPattern>` needs:

* the literal outline: the :func:`literal_segments` a pattern starts with, and the
  :func:`literal_prefix` and :func:`literal_suffix` every matching path starts and ends
  with;
* an epsilon-free NFA (:func:`build_nfa`, a Thompson-style construction followed by
  epsilon elimination) whose transitions are labelled with exact
  :class:`~detente.domain.overlap.charsets.CharSet` labels. State 0 is the start state and
  a set of states is an ``int`` bit mask (see :func:`bits`); :func:`successors` and
  :func:`label_bounds` read the transitions leaving such a set;
* the fewest transitions from each state to acceptance (:func:`distances_to_accept`), the
  heuristic of the witness search in :mod:`~detente.domain.overlap.globs`.

The glob semantics the automaton implements are documented in
:mod:`~detente.domain.overlap.globs`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Final

from detente.domain.overlap.charsets import SEGMENT_CHARS, SLASH, CharSet
from detente.domain.overlap.paths import ANY, GLOBSTAR, STAR, Atom, CharClass, Segment

__all__ = [
    "UNREACHABLE",
    "Transitions",
    "bits",
    "build_nfa",
    "distances_to_accept",
    "label_bounds",
    "literal_prefix",
    "literal_segments",
    "literal_suffix",
    "successors",
]

Transitions = tuple[tuple[CharSet, int], ...]
"""The transitions leaving one state: (label, target state), one per target."""
UNREACHABLE: Final = 1 << 30
"""The distance of a state from which no accepting state can be reached."""


def bits(mask: int) -> Iterable[int]:
    """The states (bit indices) of the state set ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def literal_segments(segments: Sequence[Segment]) -> tuple[str, ...]:
    """The texts of the leading segments that contain no wildcard."""
    lead: list[str] = []
    for segment in segments:
        text = _literal_text(segment)
        if text is None:
            break
        lead.append(text)
    return tuple(lead)


def _literal_text(segment: Segment) -> str | None:
    if segment is GLOBSTAR:
        return None
    if all(isinstance(atom, str) for atom in segment):
        return "".join(atom for atom in segment if isinstance(atom, str))
    return None


def literal_prefix(segments: Sequence[Segment]) -> str:
    """Literal text every match starts with (the '/' after a literal segment is certain)."""
    out: list[str] = []
    for segment in segments:
        if segment is GLOBSTAR:
            return "".join(out)
        for atom in segment:
            if not isinstance(atom, str):
                return "".join(out)
            out.append(atom)
        out.append("/")
    return "".join(out)[:-1]  # a fully literal pattern: no '/' after the last segment


def literal_suffix(segments: Sequence[Segment]) -> str:
    """Literal text every match ends with (a '/' before a segment is certain unless the
    segment before it is ``**``, which may match no segment at all)."""
    out: list[str] = []
    for index in range(len(segments) - 1, -1, -1):
        segment = segments[index]
        if segment is GLOBSTAR:
            break
        for atom in reversed(segment):
            if not isinstance(atom, str):
                return "".join(reversed(out))
            out.append(atom)
        if index == 0 or segments[index - 1] is GLOBSTAR:
            break
        out.append("/")
    return "".join(reversed(out))


@functools.lru_cache(maxsize=4096)
def _charset(atom: Atom) -> CharSet:
    if isinstance(atom, str):
        return CharSet.of(atom)
    if isinstance(atom, CharClass):
        members = CharSet(atom.ranges)
        return SEGMENT_CHARS - members if atom.negated else SEGMENT_CHARS & members
    return SEGMENT_CHARS  # ANY


def build_nfa(segments: Sequence[Segment]) -> tuple[tuple[Transitions, ...], int]:
    """Thompson-style construction, then epsilon elimination.

    Returns the transitions of each state (labels merged per target) and the bit mask of
    accepting states; state 0 is the start state.
    """
    edges: list[list[tuple[CharSet, int]]] = [[]]
    eps: list[list[int]] = [[]]

    def new_state() -> int:
        edges.append([])
        eps.append([])
        return len(edges) - 1

    def edge(src: int, label: CharSet, dst: int) -> None:
        if label:
            edges[src].append((label, dst))

    cur = 0
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment is GLOBSTAR:
            inner = new_state()
            edge(cur, SEGMENT_CHARS, inner)
            edge(inner, SEGMENT_CHARS, inner)
            if index < last:
                # (segment "/")* and carry on at the start of the next segment.
                edge(inner, SLASH, cur)
            else:
                # segment ("/" segment)*: strictly under the directory.
                after_slash = new_state()
                edge(inner, SLASH, after_slash)
                edge(after_slash, SEGMENT_CHARS, inner)
                cur = inner
            continue
        atoms: tuple[Atom, ...] = segment
        if atoms == (STAR,):
            atoms = (ANY, STAR)  # a segment is never empty
        for atom in atoms:
            nxt = new_state()
            if atom is STAR:
                eps[cur].append(nxt)
                edge(nxt, SEGMENT_CHARS, nxt)
            else:
                edge(cur, _charset(atom), nxt)
            cur = nxt
        if index < last:
            nxt = new_state()
            edge(cur, SLASH, nxt)
            cur = nxt
    accept = cur

    trans: list[Transitions] = []
    accepting = 0
    for state in range(len(edges)):
        if not eps[state]:
            trans.append(_merge_by_target(edges[state]))
            accepting |= (state == accept) << state
            continue
        closure = {state}
        stack = [state]
        while stack:
            for reached in eps[stack.pop()]:
                if reached not in closure:
                    closure.add(reached)
                    stack.append(reached)
        trans.append(_merge_by_target([e for member in closure for e in edges[member]]))
        if accept in closure:
            accepting |= 1 << state
    return tuple(trans), accepting


def distances_to_accept(trans: Sequence[Transitions], accepting: int) -> tuple[int, ...]:
    """Fewest transitions from each state to an accepting one (reverse breadth-first)."""
    incoming: list[list[int]] = [[] for _ in trans]
    for source, edges in enumerate(trans):
        for _, target in edges:
            incoming[target].append(source)
    dist = [UNREACHABLE] * len(trans)
    frontier = list(bits(accepting))
    for state in frontier:
        dist[state] = 0
    while frontier:
        nxt: list[int] = []
        for state in frontier:
            for source in incoming[state]:
                if dist[source] == UNREACHABLE:
                    dist[source] = dist[state] + 1
                    nxt.append(source)
        frontier = nxt
    return tuple(dist)


def successors(trans: Sequence[Transitions], mask: int, ch: str) -> int:
    """The set of states (a bit mask) reached from the state set ``mask`` by reading ``ch``."""
    nxt = 0
    for state in bits(mask):
        for label, target in trans[state]:
            if ch in label:
                nxt |= 1 << target
    return nxt


def label_bounds(trans: Sequence[Transitions], mask: int) -> tuple[int, ...]:
    """Every ``lo`` and ``hi + 1`` of the intervals labelling the transitions leaving ``mask``,
    sorted: the characters between two consecutive bounds all lead to the same states."""
    found: set[int] = set()
    for state in bits(mask):
        for label, _ in trans[state]:
            for lo, hi in label.ranges:
                found.add(lo)
                found.add(hi + 1)
    return tuple(sorted(found))


def _merge_by_target(edges: Sequence[tuple[CharSet, int]]) -> Transitions:
    if len(edges) <= 1:
        return tuple(edges)
    by_target: dict[int, CharSet] = {}
    for label, target in edges:
        known = by_target.get(target)
        by_target[target] = label if known is None else known | label
    return tuple((label, target) for target, label in sorted(by_target.items()))
