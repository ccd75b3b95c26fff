"""Checks of command input shared by every aggregate: text, TTLs, target lists, revisions.

They raise the stable errors of :mod:`detente.errors`: ``validation_error`` naming the
field, and ``revision_conflict`` carrying the current record.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from detente.domain.claims.model import ContractChange
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.policy import Policy
from detente.domain.state import RepoState
from detente.domain.text_rules import (
    BIDI_CONTROLS,
    control_char,
    format_char,
    section_key_problem,
    visible,
)
from detente.errors import (
    NotFoundError,
    RevisionConflict,
    ValidationError,
)

if TYPE_CHECKING:
    from detente.domain.claims.commands import ContractSeed


class Revisioned(Protocol):
    """A record under compare-and-swap: its id, revision and the event that made it."""

    @property
    def id(self) -> str: ...

    @property
    def revision(self) -> int: ...

    @property
    def last_event_id(self) -> str | None: ...


R = TypeVar("R", bound=Revisioned)
T = TypeVar("T")


def found(record: T | None, detail: str, **extra: Any) -> T:
    """``record``, or ``not_found`` with ``detail`` and ``extra`` when it is None."""
    if record is None:
        raise NotFoundError(detail, **extra)
    return record


def check_revision(
    kind: str, record: R, expected: int, to_wire: Callable[[R], Mapping[str, Any]]
) -> None:
    """The compare in compare-and-swap: ``revision_conflict`` unless ``expected`` is
    ``record.revision``.

    Args:
        kind: the record's kind for the message (``claim``, ``meeting``).
        record: the current record.
        expected: the revision the caller read.
        to_wire: the record's canonical wire shape (built only on a mismatch).

    Raises:
        RevisionConflict: ``revision_conflict`` carrying the current record, ``expected``,
            ``actual`` and the id of the event that made the record current.
    """
    actual = record.revision
    if expected != actual:
        raise RevisionConflict(
            f"{kind} {record.id} is at revision {actual}, not {expected}: "
            "re-read it and decide again",
            expected=expected,
            actual=actual,
            current=to_wire(record),
            event_ids=[record.last_event_id] if record.last_event_id else [],
        )


def text_field(
    value: str, fld: str, policy: Policy, *, required: bool = True, identifier: bool = False
) -> str:
    """A stripped text field, checked by the one text rule of :mod:`detente.domain.text_rules`.

    Args:
        value: the text as sent.
        fld: the field named in errors.
        policy: gives the longest text (``max_text``).
        required: refuse a text that is empty, or blank once its invisible format
            characters are removed (``"\u200b"`` reads as ``""``).
        identifier: a name (path, symbol, agent, contract area): no format character
            (category Cf) at all, and no tab or newline; otherwise free text, where only
            the bidirectional controls are refused.

    Raises:
        ValidationError: ``validation_error`` naming ``fld``: empty (when required),
            overlong, a control character or a refused format character.
    """
    value = value.strip()
    if required and not visible(value):
        raise ValidationError(f"{fld} must not be empty", field=fld)
    bad = control_char(value, free_text=not identifier)
    if bad is not None:
        raise ValidationError(f"{fld} contains a control character ({bad!r})", field=fld)
    bad = format_char(value, free_text=not identifier)
    if bad is not None:
        what = "a bidirectional control" if bad in BIDI_CONTROLS else "an invisible format"
        raise ValidationError(
            f"{fld} contains {what} character (U+{ord(bad):04X}), which would make it "
            "print differently from what is stored",
            field=fld,
        )
    if len(value) > policy.max_text:
        raise ValidationError(f"{fld} is longer than {policy.max_text} characters", field=fld)
    return value


def section_key(key: str, fld: str) -> str:
    """A memory section key, checked by :func:`~detente.domain.text_rules.section_key_problem`.

    Raises:
        ValidationError: ``validation_error`` naming ``fld``.
    """
    problem = section_key_problem(key)
    if problem is not None:
        raise ValidationError(f"{fld}: section key {key!r} {problem}", field=fld)
    return key


def ttl_field(ttl: int, fld: str, policy: Policy) -> int:
    if isinstance(ttl, bool) or not isinstance(ttl, int):
        raise ValidationError(f"{fld} must be an integer number of seconds", field=fld)
    if not policy.min_ttl_seconds <= ttl <= policy.max_ttl_seconds:
        raise ValidationError(
            f"{fld} must be between {policy.min_ttl_seconds} and {policy.max_ttl_seconds} "
            f"seconds, got {ttl}",
            field=fld,
        )
    return ttl


#: Most wildcards all the patterns of one list may hold together (each pattern holds at
#: most :data:`~detente.domain.overlap.paths.MAX_WILDCARDS`). Every later claim's overlap
#: analysis walks these automata, so one claim of a thousand wildcard-heavy globs would
#: slow every opening after it; literal paths and ``dir/**`` cost one or nothing.
MAX_LIST_WILDCARDS = 512

#: Characters one request field's patterns may hold in all (128 KiB). Every pattern is
#: normalised, compiled and indexed inside the repository's transaction, so one claim of
#: a thousand 800-character paths held every other command of the repository for seconds
#: (a heartbeat queued behind it was answered ``lease_expired``); a thousand ordinary paths
#: of up to 128 characters fit.
MAX_LIST_CHARS = 128 * 1024

_WILDCARD = re.compile(r"\*+|\?|\[")


def pattern_list(state: RepoState, raw: Sequence[str], fld: str, policy: Policy) -> tuple[str, ...]:
    """Normalised, de-duplicated patterns of one request field.

    Raises:
        ValidationError: ``validation_error`` naming ``fld`` (more than
            ``policy.max_targets`` targets, more than :data:`MAX_LIST_CHARS` characters
            or more than :data:`MAX_LIST_WILDCARDS` wildcards in all) or ``fld[i]`` (an
            invalid pattern).
    """
    if len(raw) > policy.max_targets:
        raise ValidationError(f"{fld} lists more than {policy.max_targets} targets", field=fld)
    size = sum(len(item) for item in raw if isinstance(item, str))
    if size > MAX_LIST_CHARS:
        raise ValidationError(
            f"{fld} holds {size} characters in all, more than {MAX_LIST_CHARS}: claim "
            "directories ('lib/**') instead of listing very many long paths",
            field=fld,
        )
    out: list[str] = []
    for i, item in enumerate(raw):
        pattern = normalize_pattern(
            item, case_insensitive=state.case_insensitive, field=f"{fld}[{i}]"
        )
        if pattern not in out:
            out.append(pattern)
    wildcards = sum(len(_WILDCARD.findall(p)) for p in out)
    if wildcards > MAX_LIST_WILDCARDS:
        raise ValidationError(
            f"{fld} holds {wildcards} wildcards in all, more than {MAX_LIST_WILDCARDS}: "
            "claim directories ('lib/**') or literal paths instead of many wildcard globs",
            field=fld,
        )
    return tuple(out)


def name_list(raw: Sequence[str], fld: str, policy: Policy) -> tuple[str, ...]:
    out: list[str] = []
    for i, item in enumerate(raw):
        value = text_field(item, f"{fld}[{i}]", policy, identifier=True)
        if value not in out:
            out.append(value)
    return tuple(out)


def identifier_list(raw: Sequence[str], fld: str, policy: Policy) -> tuple[str, ...]:
    """Symbol or module names: :func:`name_list`, each NFC-normalised as paths are
    (:mod:`detente.domain.overlap.paths`), so an NFD spelling of ``Café.résumé`` is the
    same name (Python itself reads identifiers NFKC-normalised, PEP 3131)."""
    return tuple(
        dict.fromkeys(unicodedata.normalize("NFC", n) for n in name_list(raw, fld, policy))
    )


def symbol_list(raw: Sequence[str], fld: str, policy: Policy) -> tuple[str, ...]:
    """Symbol names (:func:`identifier_list`): ``path::Qualified.name`` or a bare
    ``Qualified.name``. A symbol is one definition in one file, so the file part is a path,
    never a glob: ``*`` or ``?`` in it is refused (``[`` stays, as in ``app/[id]/page.tsx``,
    the literal reading paths have).

    Raises:
        ValidationError: ``validation_error`` naming ``fld[i]``.
    """
    names = identifier_list(raw, fld, policy)
    for i, name in enumerate(names):
        path, sep, qualname = name.partition("::") if "::" in name else ("", "", name)
        if qualname and not all(_SYMBOL_PART.fullmatch(p) for p in qualname.split(".")):
            raise ValidationError(
                f"{fld}[{i}] {name!r}: a qualified name is identifiers joined by '.' (no "
                "empty part, no whitespace, no second '::'), e.g. 'src/x.py::Retry.backoff'",
                field=f"{fld}[{i}]",
            )
        if sep and ("*" in path or "?" in path):
            raise ValidationError(
                f"{fld}[{i}] {name!r}: a symbol names one file, and {path.strip()!r} is a "
                "glob; claim the files as paths, or name each symbol as "
                f"'path::{qualname.strip()}'",
                field=f"{fld}[{i}]",
            )
    return names


#: One identifier of a symbol's qualified name (a definition's name in any language).
_SYMBOL_PART = re.compile(r"[^\s.:]+")

_MODULE_PART = re.compile(r"[^\s*?\[\]{}\\:]+")


def module_list(raw: Sequence[str], fld: str, policy: Policy) -> tuple[str, ...]:
    """Validate module names: a Python dotted name (``ansible.galaxy``) or a package
    directory relative to the repository (``internal/storage``, ``web/src/``).

    Each part between ``.`` or ``/`` must be non-empty and free of whitespace, wildcards
    (``* ? [ ] { }``), ``\\`` and ``:``; an absolute name or a ``..`` part is refused (a
    module is a place in the repository, and these would cover nothing or another place).

    Raises:
        ValidationError: ``validation_error`` naming ``fld[i]``.
    """
    names = identifier_list(raw, fld, policy)
    for i, name in enumerate(names):
        body = name[:-1] if name.endswith("/") else name
        parts = re.split(r"[./]", body)
        problem = None
        if name.startswith("/"):
            problem = "is absolute: name a package directory inside the repository"
        elif any(p == "" for p in parts):
            problem = "has an empty part (a leading, trailing or doubled '.' or '/', or '..')"
        elif not all(_MODULE_PART.fullmatch(p) for p in parts):
            problem = "may not hold whitespace, wildcards (* ? [ ] { }), '\\' or ':'"
        if problem is not None:
            raise ValidationError(
                f"{fld}[{i}] {name!r} {problem}; a module is a dotted name "
                "(ansible.galaxy) or a package directory (internal/storage)",
                field=f"{fld}[{i}]",
            )
    return names


def contract_list(
    raw: Sequence[ContractSeed], fld: str, policy: Policy
) -> tuple[ContractChange, ...]:
    """Validate expected contract changes: an area (string) or ``{type, area, change}``
    (``area`` required). Returns them deduplicated, in order.

    Raises:
        ValidationError: ``validation_error`` naming ``fld[i]`` or ``fld[i].area``.
    """
    out: list[ContractChange] = []
    for i, item in enumerate(raw):
        if isinstance(item, ContractChange):
            change = item
        elif isinstance(item, str):
            change = ContractChange(area=text_field(item, f"{fld}[{i}]", policy, identifier=True))
        elif isinstance(item, Mapping):
            extra = sorted(set(item) - {"type", "area", "change"})
            if extra:
                raise ValidationError(
                    f"{fld}[{i}] has unknown fields {', '.join(extra)} "
                    "(expected {type, area, change})",
                    field=f"{fld}[{i}]",
                )
            kind, what = item.get("type"), item.get("change")
            change = ContractChange(
                area=text_field(
                    item.get("area") or "", f"{fld}[{i}].area", policy, identifier=True
                ),
                type=(
                    text_field(str(kind), f"{fld}[{i}].type", policy, identifier=True)
                    if kind
                    else None
                ),
                change=text_field(str(what), f"{fld}[{i}].change", policy) if what else None,
            )
        else:
            raise ValidationError(
                f"{fld}[{i}] must be an area or {{type, area, change}}", field=f"{fld}[{i}]"
            )
        if change not in out:
            out.append(change)
    return tuple(out)


def test_names(
    raw: Sequence[str] | Mapping[str, Sequence[str]], fld: str, policy: Policy
) -> tuple[tuple[str, ...], dict[str, list[str]] | None]:
    """``testResponsibility``: a list of test names, or ``{unit: [...], integration: [...],
    migration: [...]}``. Returns ``(every name, the object normalised or None)``.

    Raises:
        ValidationError: ``validation_error`` naming the field.
    """
    if isinstance(raw, Mapping):
        for kind, names in raw.items():
            if isinstance(names, str) or not isinstance(names, Sequence):
                raise ValidationError(
                    f"{fld}.{kind} must be a list of test names", field=f"{fld}.{kind}"
                )
        plan = {
            text_field(str(kind), fld, policy, identifier=True): list(
                name_list(names, f"{fld}.{kind}", policy)
            )
            for kind, names in raw.items()
        }
        names = tuple(dict.fromkeys(n for group in plan.values() for n in group))
        return names, plan
    return name_list(raw, fld, policy), None
