"""The checks' records, folded from ``claim.merge_checked`` and ``claim.drifted``.

The events go on a stream of their own (``checks/<claimId>``), not the claim's: a
check is an advisory about the claim's work, so recording one never changes the claim's
revision (an agent's next ``renew`` or ``scope-change`` is not refused because a hook
checked its branch meanwhile).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from detente.clock import format_time
from detente.domain.events import CHECK_EVENT_TYPES, CLAIM_DRIFTED, CLAIM_MERGE_CHECKED

__all__ = [
    "CHECK_EVENT_TYPES",
    "CLAIM_DRIFTED",
    "CLAIM_MERGE_CHECKED",
    "CheckBook",
    "ClaimChecks",
    "MergeCheck",
    "PredictedConflict",
    "checks_subject",
    "checks_to_wire",
]


def checks_subject(claim_id: str) -> str:
    """The stream of a claim's checks: ``checks/<claimId>``."""
    return f"checks/{claim_id}"


@dataclass(frozen=True)
class PredictedConflict:
    """A textual conflict ``git merge`` would stop at.

    Attributes:
        against: the other claim's id, or ``ref:<refname>`` for the integration branch.
        files: the conflicted paths.
        symbols: the claims' declared symbols in those files (``path::Name``).
        hunks: ``(path, line, text)`` of the conflicting regions (the witness).
    """

    against: str
    files: tuple[str, ...]
    symbols: tuple[str, ...] = ()
    hunks: tuple[tuple[str, int, str], ...] = ()

    def to_wire(self) -> dict[str, Any]:
        """``{against, files[], symbols[], hunks[{path, line, text}]}``."""
        return {
            "against": self.against,
            "files": list(self.files),
            "symbols": list(self.symbols),
            "hunks": [{"path": p, "line": n, "text": t} for p, n, t in self.hunks],
        }

    @staticmethod
    def from_wire(raw: dict[str, Any]) -> PredictedConflict:
        return PredictedConflict(
            against=str(raw["against"]),
            files=tuple(str(f) for f in raw.get("files", ())),
            symbols=tuple(str(s) for s in raw.get("symbols", ())),
            hunks=tuple(
                (str(h["path"]), int(h["line"]), str(h["text"])) for h in raw.get("hunks", ())
            ),
        )


@dataclass(frozen=True)
class MergeCheck:
    """The newest merge check of a claim's branch.

    Attributes:
        head: the branch head checked (full OID).
        at: when it was recorded.
        changed: the paths the branch changes since its base.
        checked: what it was merged with: claim ids, and ``ref:<refname>``.
        conflicts: the predicted conflicts (empty: every merge is clean).
        meeting_ids: the rooms the conflicts opened or joined.
        order: its place among the repository's merge checks, in log order (the newer
            of two checks is the one with the higher order, whatever their times).
    """

    head: str
    at: datetime
    changed: tuple[str, ...]
    checked: tuple[str, ...]
    conflicts: tuple[PredictedConflict, ...]
    meeting_ids: tuple[str, ...] = ()
    order: int = 0


@dataclass(frozen=True)
class ClaimChecks:
    """A claim's advisories: its newest merge check and the paths it drifted into."""

    merge: MergeCheck | None = None
    drifted: tuple[str, ...] = ()
    drift_at: datetime | None = None


def checks_to_wire(checks: ClaimChecks | None) -> dict[str, Any]:
    """``{mergeCheck: {head, at, changed[], checked[], conflicts[], meetingIds[]} | null,
    drifted[], driftCheckedAt}`` (null fields when never checked)."""
    checks = checks or ClaimChecks()
    merge = checks.merge
    return {
        "mergeCheck": None
        if merge is None
        else {
            "head": merge.head,
            "at": format_time(merge.at),
            "changed": list(merge.changed),
            "checked": list(merge.checked),
            "conflicts": [c.to_wire() for c in merge.conflicts],
            "meetingIds": list(merge.meeting_ids),
        },
        "drifted": list(checks.drifted),
        "driftCheckedAt": format_time(checks.drift_at) if checks.drift_at else None,
    }


class CheckBook(dict[str, ClaimChecks]):
    """Claim id -> its :class:`ClaimChecks`, folded from the check events."""

    def __init__(self) -> None:
        super().__init__()
        #: How many merge checks were folded (each check's ``order``).
        self.merge_checks = 0

    def apply(self, event_type: str, data: dict[str, Any], at: datetime) -> None:
        """Fold one ``claim.merge_checked`` or ``claim.drifted`` event."""
        claim_id = str(data["claimId"])
        old = self.get(claim_id, ClaimChecks())
        if event_type == CLAIM_MERGE_CHECKED:
            self.merge_checks += 1
            merge = MergeCheck(
                head=str(data["head"]),
                at=at,
                changed=tuple(str(p) for p in data.get("changed", ())),
                checked=tuple(str(c) for c in data.get("checked", ())),
                conflicts=tuple(PredictedConflict.from_wire(c) for c in data.get("conflicts", ())),
                meeting_ids=tuple(str(m) for m in data.get("meetingIds", ())),
                order=self.merge_checks,
            )
            self[claim_id] = replace(old, merge=merge)
        elif event_type == CLAIM_DRIFTED:
            drifted = tuple(str(p) for p in data.get("drifted", ()))
            self[claim_id] = replace(old, drifted=drifted, drift_at=at)

    def touched(self, claim_id: str) -> tuple[str, ...]:
        """The paths the claim's branch changed at its newest merge check."""
        found = self.get(claim_id)
        return found.merge.changed if found is not None and found.merge is not None else ()
