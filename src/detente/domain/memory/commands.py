"""Memory commands and the outcome of deciding one (pure).

A decision never touches the file: it returns an :class:`Outcome` holding the events to
append and, when the file must change, its complete new bytes. The service writes those
bytes (atomically) before it appends the events, under the repository's command
transaction, and raises ``refusal`` (if any) after committing the events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from detente.domain import events as ev
from detente.errors import DetenteError

__all__ = [
    "MAX_DOC_BYTES",
    "MAX_ENTRY_BYTES",
    "Append",
    "Merge3",
    "Outcome",
    "PatchSection",
    "Reconcile",
    "Register",
    "Render",
    "WriteFile",
]

#: Largest coordinated document (bytes); larger files are refused with validation_error.
MAX_DOC_BYTES = 1 << 20
#: Largest appended entry (bytes).
MAX_ENTRY_BYTES = 1 << 16

Merge3 = Callable[[bytes, bytes, bytes], bytes | None]
"""``(ours, base, theirs) -> merged bytes``, or None when the merge has conflicts."""


@dataclass(frozen=True)
class Register:
    """Register ``path`` as a memory document of class ``doc_class``."""

    repo: str
    path: str
    doc_class: str


@dataclass(frozen=True)
class PatchSection:
    """Replace one section's body (``body``) or apply a unified diff (``diff``) to it."""

    repo: str
    path: str
    section_key: str
    expected_section_revision: int
    expected_file_hash: str
    claim_id: str
    fencing_token: int
    body: str | None = None
    diff: str | None = None
    worktree: str | None = None


@dataclass(frozen=True)
class WriteFile:
    """Replace the whole file (section-owned: only covered sections may change)."""

    repo: str
    path: str
    expected_revision: int
    expected_file_hash: str
    claim_id: str
    fencing_token: int
    content: str
    worktree: str | None = None


@dataclass(frozen=True)
class Append:
    """Append one entry to an append-only document."""

    repo: str
    path: str
    claim_id: str
    fencing_token: int
    entry: str
    worktree: str | None = None


@dataclass(frozen=True)
class Render:
    """Render the generated regions of one document (``path``) or of all of them."""

    repo: str
    path: str | None = None
    worktree: str | None = None


@dataclass(frozen=True)
class Reconcile:
    """Resolve a reconciliation: the user's edit goes ``upstream`` or into an ``overlay``."""

    repo: str
    path: str
    decision: str
    reconciliation_id: str | None = None
    region_key: str | None = None
    expected_revision: int | None = None
    worktree: str | None = None


@dataclass
class Outcome:
    """A decision: events to append, the file's new bytes, an error to raise after commit.

    Attributes:
        events: to append (may be empty).
        data: the complete new file bytes, or None to leave the file alone.
        refusal: raised after the events are committed (a deferred edit is a ``409``
            that still records its patch artifact).
        details: extra response fields (``merged``, ``entry``, ``reconciliations``...).
    """

    events: list[ev.Event] = field(default_factory=list)
    data: bytes | None = None
    refusal: DetenteError | None = None
    details: dict[str, Any] = field(default_factory=dict)
