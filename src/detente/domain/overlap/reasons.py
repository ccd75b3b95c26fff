"""The one-line reason an overlap report gives for a pair of claims (pure)."""

from __future__ import annotations

from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.overlap.model import OverlapKind, OverlapTarget

__all__ = ["UNDECIDED_REASON", "overlap_reason"]

#: The reason given for a pair of patterns the search could not decide: it blocks.
UNDECIDED_REASON = (
    "undecided within budget (the pattern search gave up); treated as overlapping. "
    "Narrow the patterns (fewer wildcards) to let detente decide"
)


def overlap_reason(
    other: Claim, kinds: tuple[OverlapKind, ...], targets: list[OverlapTarget]
) -> str:
    """Why ``other`` (of ``kinds``) meets the analysed targets: the first of ``targets``
    named, how many more, and what its status means for the reader."""
    first = targets[0]
    kind = kinds[0]
    if first.witness is None:
        text = (
            f"{first.mine!r} and {first.theirs!r} (held by {other.agent.name}): {UNDECIDED_REASON}"
        )
    elif kind is OverlapKind.PATH:
        text = (
            f"{first.mine!r} and {first.theirs!r} (held by {other.agent.name}) "
            f"both match {first.witness!r}"
        )
    elif kind is OverlapKind.MEMORY:
        text = f"both change memory {first.witness!r} ({other.agent.name})"
    elif kind in (OverlapKind.SYMBOL, OverlapKind.MODULE) and first.mine != first.theirs:
        text = (
            f"{first.mine!r} and {first.theirs!r} (held by {other.agent.name}) "
            f"both cover {kind.value} {first.witness!r}"
            if kind is OverlapKind.SYMBOL or "/" not in first.witness
            else f"{first.mine!r} and {first.theirs!r} (held by {other.agent.name}) "
            f"both match {first.witness!r}"
        )
    else:
        text = f"both change {kind.value} {first.mine!r} ({other.agent.name})"
    more = len(targets) - 1
    if more:
        text += f" and {more} more target{'s' if more > 1 else ''}"
    if other.status is ClaimStatus.EXPIRED:
        text += (
            f"; their lease expired, so the work is frozen, not released: take it over "
            f"(detente claim takeover {other.id}) or wait for it to be abandoned"
        )
    elif other.status is not ClaimStatus.ACTIVE:
        text += f"; their claim is {other.status.value}"
    return text
