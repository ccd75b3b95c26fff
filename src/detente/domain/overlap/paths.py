"""Normalisation and syntax of claim path patterns.

A path pattern is a repo-relative glob with ``/`` separators (see ``API.md``, "Claims").
This module turns what a client sends into one canonical spelling, rejects what cannot be
a repo-relative pattern, and parses the canonical spelling into segments of atoms that
:mod:`detente.domain.overlap.nfa` compiles into an automaton.

Choices made here (every one is deliberate and tested):

* Unicode: patterns and paths are NFC-normalised. With ``case_insensitive=True`` they are
  also case-folded (``str.casefold``, then NFC again) so ``SRC/A.py`` and ``src/a.py`` are
  one target. Folding applies to the pattern text, classes included (``[A-Z]`` becomes
  ``[a-z]``).
* Backslash: every ``\\`` is a separator and becomes ``/`` (a Windows client sends
  ``src\\a.py``). There is no escape character, so ``\\`` inside ``[...]`` is a separator
  too, which leaves the class unbalanced and the pattern rejected.
* Literal metacharacters: like a git pathspec, a pattern also matches the one path spelled
  exactly like it (``app/[id]/page.tsx`` matches the file ``app/[id]/page.tsx`` as well as
  ``app/i/page.tsx``; see :mod:`~detente.domain.overlap.globs`). To match the file whose
  name holds ``*``, ``?`` or ``[`` and not its glob reading, write each of them as a
  one-character class: ``app/[[]id]/page.tsx`` (:func:`escape` spells any path that way).
* Limits: a pattern is at most :data:`MAX_PATTERN_LENGTH` characters with at most
  :data:`MAX_WILDCARDS` wildcards (``*``, ``?``, ``[...]`` and ``**`` each count one); a
  path is at most :data:`MAX_PATH_LENGTH` characters. They bound the work an automaton
  does per pattern; real claims stay far below them.
* ``./`` prefixes, ``/./`` segments and duplicate ``/`` are removed.
* A trailing ``/`` (or a trailing ``/.``) means "the whole directory"; its canonical form is
  ``dir/**``, which matches every path strictly under ``dir/`` (not ``dir`` itself: a
  directory is not a file). Consecutive ``**`` segments collapse into one.
* Rejected with ``validation_error``: an empty pattern (also one that is empty once ``./``
  and ``/`` are removed, such as ``./``; claim the whole repository with ``**``), a ``..``
  segment, an absolute path (leading ``/`` or ``\\``, or a drive letter such as ``C:``), a
  leading ``!`` (negation is not supported), a ``.git`` segment (git never tracks one),
  a segment with leading or trailing white space (``' '``, ``'a.py '``: almost always a
  typo, and a second spelling of the same file), control characters (Unicode category Cc,
  NUL included) and lone surrogates, in a claim pattern also Unicode format characters
  (category Cf: zero-width and bidirectional controls, :mod:`detente.domain.text_rules`),
  an unbalanced or empty ``[`` class, a reversed range such
  as ``[z-a]``, and ``**`` mixed into a segment (``a**b``, ``***``, ``**.py``): gitignore
  would read those as ``*`` while a user most likely meant a recursive match, so the
  client is told instead of guessed for.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

from detente.domain.text_rules import format_char
from detente.errors import ValidationError

__all__ = [
    "ANY",
    "GLOBSTAR",
    "MAX_PATH_LENGTH",
    "MAX_PATTERN_LENGTH",
    "MAX_WILDCARDS",
    "STAR",
    "Atom",
    "CharClass",
    "PatternSyntaxError",
    "Segment",
    "Wild",
    "escape",
    "has_wildcard",
    "normalize_path",
    "normalize_pattern",
    "parse_segments",
]


class Wild(enum.Enum):
    """Wildcard atoms of the pattern syntax."""

    STAR = "*"
    """Any run of non-``/`` characters, including none."""
    ANY = "?"
    """Exactly one non-``/`` character."""
    GLOBSTAR = "**"
    """A whole ``**`` segment: any number of whole segments."""


STAR: Final = Wild.STAR
ANY: Final = Wild.ANY
GLOBSTAR: Final = Wild.GLOBSTAR


@dataclass(frozen=True, slots=True)
class CharClass:
    """A ``[...]`` class as written: inclusive code point ranges, maybe negated.

    ``[!...]`` and ``[^...]`` both negate. The class never matches ``/``.
    """

    negated: bool
    ranges: tuple[tuple[int, int], ...]


Atom: TypeAlias = str | Literal[Wild.STAR, Wild.ANY] | CharClass
"""One element of a segment: a literal character, ``*``, ``?`` or a class."""

Segment: TypeAlias = tuple[Atom, ...] | Literal[Wild.GLOBSTAR]
"""A ``/``-separated segment: a non-empty run of atoms, or ``**``."""


class PatternSyntaxError(ValueError):
    """A segment is not valid glob syntax; the message is the reason."""


_WILDCARD_CHARS: Final = frozenset("*?[")

#: Longest path pattern accepted, in characters (Linux ``PATH_MAX``).
MAX_PATTERN_LENGTH: Final = 4096
#: Most wildcards one pattern may hold: ``*``, ``?``, a ``[...]`` class, a ``**`` segment.
MAX_WILDCARDS: Final = 32
#: Longest concrete path accepted, in characters (Linux ``PATH_MAX``).
MAX_PATH_LENGTH: Final = 4096
_DRIVE = re.compile(r"[A-Za-z]:")
_FORBIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cs"})


def normalize_pattern(
    raw: str, *, case_insensitive: bool = False, field: str = "paths", policy: bool = True
) -> str:
    """Return the canonical spelling of a claim path pattern.

    Args:
        raw: the pattern as a client sent it, e.g. ``".\\\\src\\\\"`` or ``"docs/"``.
        case_insensitive: fold case (``str.casefold``) for repositories whose file system
            ignores case.
        field: the request field the pattern came from; named in error details.
        policy: apply the input policy: the length and wildcard limits, no ``.git`` or
            white-space-padded segment. False for a pattern the log already holds: replay
            must read every pattern accepted under an earlier policy (the glob search's
            work budget still bounds what such a pattern costs).

    Returns:
        The canonical pattern: NFC, ``/`` separators, no ``.`` or empty segments, a trailing
        directory written ``dir/**``, consecutive ``**`` segments collapsed. Normalising
        a canonical pattern returns it unchanged.

    Raises:
        ValidationError: code ``validation_error`` (``field`` set) when the pattern is
            empty, absolute, starts with ``!``, has a ``..`` segment, a control character,
            an unbalanced or empty class, a reversed range, or ``**`` inside a segment.
    """
    segments, directory = _clean(raw, case_insensitive=case_insensitive, field=field, policy=policy)
    canonical: list[str] = []
    wildcards = 0
    for text in segments:
        if text and "*" not in text and "?" not in text and "[" not in text:
            canonical.append(text)  # a literal segment: nothing to parse or count
            continue
        try:
            parsed = _parse_segment(text)
        except PatternSyntaxError as exc:
            raise _invalid(field, raw, str(exc)) from None
        if parsed is GLOBSTAR and canonical and canonical[-1] == "**":
            continue
        wildcards += 1 if parsed is GLOBSTAR else sum(not isinstance(a, str) for a in parsed)
        canonical.append(text)
    if directory and canonical[-1] != "**":
        canonical.append("**")
        wildcards += 1
    if policy and wildcards > MAX_WILDCARDS:
        raise _invalid(
            field, _shown(raw), f"has {wildcards} wildcards; at most {MAX_WILDCARDS} are allowed"
        )
    return "/".join(canonical)


def normalize_path(raw: str, *, case_insensitive: bool = False, field: str = "paths") -> str:
    """Return the canonical spelling of a concrete repo-relative file path.

    The same rules as :func:`normalize_pattern` except that ``*``, ``?`` and ``[`` are
    ordinary characters (a path is matched literally, never as a glob) and that a path
    naming a directory (trailing ``/``) is rejected.

    Args:
        raw: the path as a client sent it, e.g. ``"src\\\\a.py"``.
        case_insensitive: fold case as :func:`normalize_pattern` does.
        field: the request field the path came from; named in error details.

    Returns:
        The canonical path: NFC, ``/`` separators, no ``.`` or empty segments.

    Raises:
        ValidationError: code ``validation_error`` (``field`` set) when the path is empty,
            absolute, has a ``..`` segment or a control character, or ends with ``/``.
    """
    segments, directory = _clean(raw, case_insensitive=case_insensitive, field=field, path=True)
    if directory:
        raise _invalid(field, raw, "names a directory (trailing '/'), not a file", kind="path")
    return "/".join(segments)


def parse_segments(pattern: str) -> tuple[Segment, ...]:
    """Parse a canonical pattern (see :func:`normalize_pattern`) into segments.

    Args:
        pattern: a normalised pattern.

    Returns:
        One :data:`Segment` per ``/``-separated segment.

    Raises:
        PatternSyntaxError: a segment is empty or not valid glob syntax.
    """
    return tuple(_parse_segment(text) for text in pattern.split("/"))


def escape(path: str) -> str:
    """The pattern that matches exactly ``path``: ``*``, ``?`` and ``[`` become classes.

    Args:
        path: a concrete repo-relative path, e.g. ``"app/[id]/page.tsx"``.

    Returns:
        A pattern whose glob reading matches that path and no other, e.g.
        ``"app/[[]id]/page.tsx"`` (by the literal rule it also matches a file spelled
        exactly like the pattern itself, as a git pathspec would).
    """
    return "".join(f"[{ch}]" if ch in _WILDCARD_CHARS else ch for ch in path)


def has_wildcard(pattern: str) -> bool:
    """Whether a canonical pattern contains any glob syntax (``*``, ``?`` or ``[``)."""
    return not _WILDCARD_CHARS.isdisjoint(pattern)


def _clean(
    raw: str, *, case_insensitive: bool, field: str, path: bool = False, policy: bool = True
) -> tuple[list[str], bool]:
    """Common normalisation: returns the non-empty segments and the "is a directory" flag.

    ``policy`` False skips the input policy (see :func:`normalize_pattern`), keeping the
    structural rules every canonical pattern satisfies.
    """
    kind = "path" if path else "path pattern"
    limit = MAX_PATH_LENGTH if path else MAX_PATTERN_LENGTH
    if policy and len(raw) > limit:  # checked before any work on the text
        raise _invalid(
            field, _shown(raw), f"is {len(raw)} characters long; at most {limit}", kind=kind
        )
    text = unicodedata.normalize("NFC", raw)
    if case_insensitive:
        text = unicodedata.normalize("NFC", text.casefold())
    if not text:
        raise _invalid(field, raw, "is empty", kind=kind)
    for ch in text:
        if unicodedata.category(ch) in _FORBIDDEN_CATEGORIES:
            raise _invalid(field, raw, f"contains the control character {ch!r}", kind=kind)
    text = text.replace("\\", "/")
    if text.startswith("/"):
        raise _invalid(field, raw, "is absolute; use a repo-relative path", kind=kind)
    parts = text.split("/")
    directory = parts[-1] in ("", ".")
    segments = [part for part in parts if part not in ("", ".")]
    if not segments:
        raise _invalid(field, raw, "is empty once './' and '/' are removed", kind=kind)
    if ".." in segments:
        raise _invalid(field, raw, "contains a '..' segment", kind=kind)
    if policy:
        _check_policy(raw, segments, field=field, kind=kind)
    if _DRIVE.match(segments[0]):
        raise _invalid(field, raw, "starts with a drive letter (absolute)", kind=kind)
    if not path and segments[0].startswith("!"):
        raise _invalid(field, raw, "starts with '!' (negation is not supported)", kind=kind)
    return segments, directory


def _check_policy(raw: str, segments: list[str], *, field: str, kind: str) -> None:
    """The input policy on segments (see :func:`normalize_pattern`'s ``policy``)."""
    if any(part.casefold() == ".git" for part in segments):
        # git itself never tracks a path through a `.git` component (any case)
        raise _invalid(field, raw, "names the '.git' directory, which git never tracks", kind=kind)
    for part in segments:
        if part != part.strip():
            raise _invalid(
                field,
                raw,
                f"has a segment with leading or trailing white space ({part!r})",
                kind=kind,
            )
    invisible = format_char(raw, free_text=False) if kind == "path pattern" else None
    if invisible is not None:
        # a claim target is shown to every other party: an invisible or reordering
        # character would make two different targets print alike (text_rules)
        raise _invalid(
            field,
            raw,
            f"contains the invisible format character U+{ord(invisible):04X}",
            kind=kind,
        )


def _parse_segment(text: str) -> Segment:
    if not text:
        raise PatternSyntaxError("has an empty segment")
    if text == "**":
        return GLOBSTAR
    atoms: list[Atom] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "*":
            if atoms and atoms[-1] is STAR:
                raise PatternSyntaxError(
                    f"has '**' inside the segment {text!r}; '**' must be a whole segment"
                )
            atoms.append(STAR)
            i += 1
        elif ch == "?":
            atoms.append(ANY)
            i += 1
        elif ch == "[":
            cls, i = _parse_class(text, i)
            atoms.append(cls)
        else:
            atoms.append(ch)
            i += 1
    return tuple(atoms)


def _parse_class(text: str, start: int) -> tuple[CharClass, int]:
    """Parse the class opening at ``text[start] == '['``; return it and the index after."""
    n = len(text)
    j = start + 1
    negated = j < n and text[j] in "!^"
    if negated:
        j += 1
    ranges: list[tuple[int, int]] = []
    first = True
    while True:
        if j >= n:
            raise PatternSyntaxError(f"has an unbalanced '[' in the segment {text!r}")
        ch = text[j]
        if ch == "]" and not first:
            return CharClass(negated, tuple(ranges)), j + 1
        first = False
        if j + 2 < n and text[j + 1] == "-" and text[j + 2] != "]":
            lo, hi = ord(ch), ord(text[j + 2])
            if lo > hi:
                raise PatternSyntaxError(f"has the reversed range {text[j : j + 3]!r}")
            ranges.append((lo, hi))
            j += 3
        else:
            ranges.append((ord(ch), ord(ch)))
            j += 1


def _shown(raw: str) -> str:
    """A long input cut for an error message (the message must stay readable)."""
    return raw if len(raw) <= 80 else f"{raw[:60]}...({len(raw)} characters)"


def _invalid(field: str, raw: str, reason: str, *, kind: str = "path pattern") -> ValidationError:
    return ValidationError(f"{field}: the {kind} {raw!r} {reason}", field=field)
