"""Which characters a stored text may hold: the one rule every entrance applies.

Every record detente stores is shown again, on terminals, in ``meeting show``, in the
dashboard and in other agents' prompts. Three kinds of characters make what is shown
differ from what is stored:

* **control characters** (Unicode category Cc: NUL, terminal escapes, ``DEL``, C1): refused
  everywhere, except tab and newline in free text;
* **format characters** (category Cf: zero-width space/joiners U+200B-U+200D, word joiner
  U+2060, U+FEFF, soft hyphen, the bidirectional controls): invisible, so two identifiers
  that print alike could differ (``client\\u200b.ts``) and one can print reversed
  (``alice\\u202egnp.exe``, the Trojan Source attack, CVE-2021-42574). Refused in
  *identifiers* (paths, symbols, modules, agent ids and names, contract areas, section
  keys, test names);
* **bidirectional controls** (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, the
  explicit formatting characters of Unicode Standard Annex #9, section 2): reorder the text
  that follows them. Refused in *free text* (objectives, reasons) too, where the other
  format characters (a zero-width joiner inside an emoji sequence) stay allowed; a free
  text that is blank once its format characters are removed counts as empty.

The functions here only answer questions; :func:`detente.domain.validation.text_field`,
the path normaliser (:mod:`detente.domain.overlap.paths`) and the section-key check raise
the ``validation_error`` naming the field.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = [
    "BIDI_CONTROLS",
    "MAX_SECTION_KEY",
    "control_char",
    "format_char",
    "section_key_problem",
    "visible",
]

BIDI_CONTROLS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""The bidirectional formatting characters (UAX #9 section 2: ALM, LRM, RLM, the
embeddings and overrides LRE RLE PDF LRO RLO, the isolates LRI RLI FSI PDI)."""

#: Longest section key: marker keys are at most 100 characters; a heading's slug as long
#: as the memory patch body allows (``sectionKey`` max length).
MAX_SECTION_KEY: Final = 200

_SECTION_KEY_PUNCT: Final = frozenset("-._")


def control_char(value: str, *, free_text: bool) -> str | None:
    """The first control character (Cc; also a lone surrogate) of ``value``, or None.

    Tab and newline count only when ``free_text`` is False.
    """
    for ch in value:
        cat = unicodedata.category(ch)
        if cat == "Cs" or (cat == "Cc" and not (free_text and ch in "\t\n")):
            return ch
    return None


def format_char(value: str, *, free_text: bool) -> str | None:
    """The first character of ``value`` that the rule refuses as invisible, or None.

    In identifiers (``free_text`` False) that is any format character (category Cf); in
    free text only a bidirectional control (:data:`BIDI_CONTROLS`).
    """
    for ch in value:
        if ch in BIDI_CONTROLS or (not free_text and unicodedata.category(ch) == "Cf"):
            return ch
    return None


def visible(value: str) -> str:
    """``value`` without its format characters (category Cf), stripped: what a reader sees."""
    return "".join(ch for ch in value if unicodedata.category(ch) != "Cf").strip()


def section_key_problem(key: str) -> str | None:
    """What is wrong with a memory section key, or None when it is one.

    A key is what a file's outline can name (:mod:`detente.domain.memory.markdown`): an
    explicit marker's key (``[A-Za-z0-9][A-Za-z0-9._-]*``, at most 100 characters) or a
    heading's GitHub slug (letters, digits, marks, ``_`` and ``-``). One rule covers
    both: 1 to :data:`MAX_SECTION_KEY` characters, each a letter, digit, mark, ``_``,
    ``-`` or ``.``.

    Returns:
        A phrase to follow the key in a message (``"is empty"``), or None.
    """
    if not key:
        return "is empty"
    if len(key) > MAX_SECTION_KEY:
        return f"is {len(key)} characters long; at most {MAX_SECTION_KEY}"
    for ch in key:
        if ch in _SECTION_KEY_PUNCT or unicodedata.category(ch)[0] in "LNM":
            continue
        return (
            f"contains {ch!r} (U+{ord(ch):04X}); a section key is a heading's slug "
            "('## Build notes' -> build-notes) or a marker key: letters, digits, '.', '_', '-'"
        )
    return None
