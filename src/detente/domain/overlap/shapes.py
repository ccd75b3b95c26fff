"""Answers read off a pattern's shape, without running its automaton.

Most claimed patterns are made of literal text, ``*``, ``?`` and ``**`` only
(``src/app.py``, ``docs/**``, ``lib/*.py``, ``**/*.go``). For those shapes three questions
the overlap index asks on every query have direct answers:

- :func:`shape_witness`: the cheapest path a pattern matches, in the order of
  :func:`~detente.domain.overlap.search.cheapest_common_word` (fewest segments starting
  with ``.``, then the shortest, then ``x`` as the filler), without building the NFA or
  searching it (a cold search costs hundreds of microseconds per pattern, which made the
  first query to meet a pattern the slow one);
- :func:`deep_tail`: for ``L/**/*<tail>`` (``**/*.go``, ``lib/**/*.py``) the literal
  ``tail`` every matched path ends with: such a pattern holds every path under ``L/``
  ending with ``tail``, so containment is a prefix and a suffix test;
- :func:`segment_filter`: a test of one concrete path segment against one pattern
  segment, used to walk the index's trie along a query, and by :func:`segments_clash`,
  which proves two patterns disjoint when a literal segment of one is not matched by the
  other's segment at the same depth (``lib/*.py`` and ``lib/sub/**``).

Every function returns None when the shape is not one it knows; the caller then uses the
general automaton. Pure: no IO, no clock.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from detente.domain.overlap.paths import ANY, GLOBSTAR, STAR, Segment

__all__ = ["deep_tail", "segment_filter", "segments_clash", "shape_witness", "tail_witness"]

#: The filler character of a witness: the best-ranked one of the search (readable, lower
#: case, never ``.`` or ``/``).
FILLER = "x"


def shape_witness(segments: Sequence[Segment]) -> str | None:
    """The cheapest path the glob reading of ``segments`` matches, or None for a shape
    this function does not decide (character classes, a segment that would be ``.`` or
    ``..``).

    ``**`` matches no segment (one ``x`` segment when it ends the pattern, which must
    match below its directory); ``*`` matches nothing, ``?`` matches ``x``; a segment
    whose first atom is ``*`` and that would otherwise start with ``.`` gets an ``x``
    there (a dot segment costs more than one character).

    Args:
        segments: a parsed canonical pattern (``parse_segments``).

    Returns:
        The path, e.g. ``"lib/x.py"`` for ``lib/**/*.py`` and ``"docs/x"`` for ``docs/**``.
    """
    out: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment is GLOBSTAR:
            if index == last:
                out.append(FILLER)
            continue
        text: list[str] = []
        for atom in segment:
            if isinstance(atom, str):
                text.append(atom)
            elif atom is ANY:
                text.append(FILLER)
            elif atom is not STAR:
                return None  # a character class
        spelled = "".join(text)
        if segment[0] is STAR and (not spelled or spelled.startswith(".")):
            spelled = FILLER + spelled
        if spelled in (".", ".."):
            return None
        out.append(spelled)
    return "/".join(out)


def deep_tail(segments: Sequence[Segment]) -> str | None:
    """``tail`` when ``segments`` read ``L/**/*<tail>`` (``L`` literal segments, maybe
    none; ``tail`` literal text, maybe empty), else None.

    Such a pattern matches exactly the paths below ``L/`` (every path when ``L`` is empty)
    whose text ends with ``tail``.
    """
    if len(segments) < 2 or segments[-2] is not GLOBSTAR:
        return None
    return _star_tail(segments[-1], segments[:-2])


def shallow_tail(segments: Sequence[Segment]) -> str | None:
    """``tail`` when ``segments`` read ``L/*<tail>`` (``L`` literal segments, maybe none;
    ``tail`` literal text, maybe empty), else None.

    Such a pattern matches exactly the paths one segment below ``L/`` whose text ends with
    ``tail`` (``*`` takes any run, a leading ``.`` included; a path's segments are never
    empty).
    """
    if not segments:
        return None
    return _star_tail(segments[-1], segments[:-1])


def _star_tail(last: Segment, literal: Sequence[Segment]) -> str | None:
    """``tail`` when ``last`` reads ``*<tail>`` (literal text) and every segment of
    ``literal`` is literal, else None."""
    if last is GLOBSTAR or not last or last[0] is not STAR:
        return None
    tail = last[1:]
    if not all(isinstance(atom, str) for atom in tail):
        return None
    for segment in literal:
        if segment is GLOBSTAR or not all(isinstance(atom, str) for atom in segment):
            return None
    return "".join(atom for atom in tail if isinstance(atom, str))


@functools.lru_cache(maxsize=4096)
def segment_filter(segment: Segment) -> Callable[[str], bool] | None:
    """A test of one concrete segment against a non-``**`` pattern segment, or None when
    the segment holds a character class (the caller then keeps every segment).

    Args:
        segment: one parsed segment (a tuple of atoms).

    Returns:
        A function ``name -> bool``: whether the glob atoms match the whole ``name``.
    """
    if segment is GLOBSTAR:
        return None
    parts: list[str] = []
    for atom in segment:
        if isinstance(atom, str):
            parts.append(re.escape(atom))
        elif atom is STAR:
            parts.append("[^/]*")
        elif atom is ANY:
            parts.append("[^/]")
        else:
            return None
    compiled = re.compile("".join(parts), re.DOTALL)
    return lambda name: compiled.fullmatch(name) is not None


def tail_witness(prefix: str, tail: str) -> str:
    """The cheapest path ``<prefix><one segment ending with tail>``: what ``P/**`` and
    ``L/**/*<tail>`` share when ``P/`` is below ``L/`` (``prefix`` is ``"P/"``)."""
    segment = tail if tail and not tail.startswith(".") else FILLER + tail
    return prefix + segment


def segments_clash(a: Sequence[Segment], b: Sequence[Segment]) -> bool:
    """Whether the glob readings of two patterns are disjoint for a reason visible segment
    by segment: at some depth before either reaches ``**``, one has a literal segment the
    other's segment does not match, or neither has ``**`` and their segment counts differ.

    False means "not proved disjoint" (the caller searches).
    """
    for sa, sb in zip(a, b, strict=False):
        if sa is GLOBSTAR or sb is GLOBSTAR:
            return False
        la, lb = _literal(sa), _literal(sb)
        if la is not None and lb is not None:
            if la != lb:
                return True
            continue
        if la is not None or lb is not None:
            accepts = segment_filter(sb if la is not None else sa)
            if accepts is not None and not accepts(la if la is not None else str(lb)):
                return True
    return len(a) != len(b) and GLOBSTAR not in a and GLOBSTAR not in b


def _literal(segment: Segment) -> str | None:
    if segment is GLOBSTAR or not all(isinstance(atom, str) for atom in segment):
        return None
    return "".join(atom for atom in segment if isinstance(atom, str))
