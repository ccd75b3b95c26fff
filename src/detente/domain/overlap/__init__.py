"""Path-pattern overlap: normalisation, glob semantics, exact intersection, an index.

Two claims overlap when some file path matches a pattern of each. This package is THE
path matcher: the overlap analysis, write checks, the commit and push guards and memory
authority all ask it (:func:`matches` for one path, :meth:`PatternIndex.matching` for
"who holds this path", :meth:`PatternIndex.overlapping` for pattern against pattern). See
:mod:`~detente.domain.overlap.paths` for the pattern rules and canonical form,
:mod:`~detente.domain.overlap.globs` for the matching semantics and the witness search
(over automata built by :mod:`~detente.domain.overlap.nfa`, labelled with
:mod:`~detente.domain.overlap.charsets` sets), and :mod:`~detente.domain.overlap.index` for
the overlap index over live claims.
"""

from detente.domain.overlap.globs import (
    SEARCH_BUDGET,
    Budget,
    CompiledPattern,
    Undecided,
    compile_pattern,
    intersect,
    intersect_compiled,
    matches,
    may_overlap,
)
from detente.domain.overlap.index import PatternIndex
from detente.domain.overlap.paths import (
    MAX_PATH_LENGTH,
    MAX_PATTERN_LENGTH,
    MAX_WILDCARDS,
    escape,
    has_wildcard,
    normalize_path,
    normalize_pattern,
)
from detente.domain.overlap.search import ANALYSIS_BUDGET

__all__ = [
    "ANALYSIS_BUDGET",
    "MAX_PATH_LENGTH",
    "MAX_PATTERN_LENGTH",
    "MAX_WILDCARDS",
    "SEARCH_BUDGET",
    "Budget",
    "CompiledPattern",
    "PatternIndex",
    "Undecided",
    "compile_pattern",
    "escape",
    "has_wildcard",
    "intersect",
    "intersect_compiled",
    "matches",
    "may_overlap",
    "normalize_path",
    "normalize_pattern",
]
