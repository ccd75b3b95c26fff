"""Pages of ``GET /v1/claims`` (``limit``, ``cursor``) and the ``include`` set of
``GET /v1/claims/{id}``: the parsing both transports share.

Claims are listed in ``(createdAt, id)`` order, newest last. A cursor names the last claim
of the page it ends (base64url of ``[createdAt, id]``, opaque to clients), so the next page
starts strictly after it: a claim opened while a client pages through the list shows up on
a later page, and no claim is listed twice or skipped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from detente.domain.claims.query import ClaimFilters
from detente.errors import ValidationError

if TYPE_CHECKING:  # a remote client reads the query's keys, not the claim model
    from datetime import datetime

    from detente.domain.claims.model import Claim

__all__ = [
    "INCLUDE_DEFAULT",
    "INCLUDE_OPTIONS",
    "MAX_CLAIMS_PAGE",
    "ClaimQuery",
    "check_limit",
    "decode_cursor",
    "encode_cursor",
    "page_of",
    "parse_include",
]

#: The largest ``limit`` of one page of claims.
MAX_CLAIMS_PAGE = 1000


class ClaimQuery(ClaimFilters, total=False):
    """The query of ``GET /v1/claims``: the filters and one page of the answer.

    Keys (besides :class:`~detente.domain.claims.query.ClaimFilters`'):
        limit: page size (1..:data:`MAX_CLAIMS_PAGE`); None: every claim.
        cursor: the previous page's ``nextCursor``; None: from the first claim.
    """

    limit: int | None
    cursor: str | None


#: What ``GET /v1/claims/{id}?include=`` may add to the claim view.
INCLUDE_OPTIONS = ("work", "semantic")
#: What is included when ``include`` is not given (the response of API v1 before it).
INCLUDE_DEFAULT = frozenset({"semantic"})


def parse_include(include: str | None) -> frozenset[str]:
    """The parts ``include`` asks for.

    Args:
        include: comma-separated names out of :data:`INCLUDE_OPTIONS` (``""``: none);
            None means :data:`INCLUDE_DEFAULT`.

    Raises:
        ValidationError: ``validation_error`` (field ``include``) naming an unknown part.
    """
    if include is None:
        return INCLUDE_DEFAULT
    parts = frozenset(p.strip() for p in include.split(",") if p.strip())
    unknown = sorted(parts.difference(INCLUDE_OPTIONS))
    if unknown:
        raise ValidationError(
            f"include: unknown part {unknown[0]!r} (choose from {', '.join(INCLUDE_OPTIONS)})",
            field="include",
        )
    return parts


def encode_cursor(claim: Claim) -> str:
    """The cursor of the page that ends with ``claim``."""
    import base64  # here and below on use: a remote client imports the declarations only

    raw = json.dumps([claim.created_at.isoformat(), claim.id], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """``(createdAt, id)`` of the claim a cursor names.

    Raises:
        ValidationError: ``validation_error`` (field ``cursor``) for anything that is not
            a cursor this server made.
    """
    import base64
    import binascii
    from datetime import datetime

    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created, claim_id = json.loads(raw)
        if not isinstance(created, str) or not isinstance(claim_id, str):
            raise ValueError(cursor)
        return datetime.fromisoformat(created), claim_id
    except (ValueError, TypeError, binascii.Error):
        raise ValidationError("cursor: not a cursor of this list", field="cursor") from None


def check_limit(limit: int | None) -> int | None:
    """``limit`` if it is a page size (1..:data:`MAX_CLAIMS_PAGE`), None for no limit.

    Raises:
        ValidationError: ``validation_error`` (field ``limit``) out of range.
    """
    if limit is not None and not 1 <= limit <= MAX_CLAIMS_PAGE:
        raise ValidationError(f"limit must be 1..{MAX_CLAIMS_PAGE}", field="limit")
    return limit


def page_of(
    claims: Sequence[Claim], *, limit: int | None, cursor: str | None
) -> tuple[list[Claim], str | None]:
    """One page of ``claims`` (sorted by ``(created_at, id)``) and the next page's cursor.

    Args:
        claims: the filtered claims in list order.
        limit: the page size; None means every claim after ``cursor``.
        cursor: where the previous page ended; None starts at the first claim.

    Returns:
        ``(page, next_cursor)``; ``next_cursor`` is None on the last page.

    Raises:
        ValidationError: a bad ``limit`` or ``cursor``.
    """
    limit = check_limit(limit)
    start = 0
    if cursor is not None:
        import bisect

        after = decode_cursor(cursor)
        start = bisect.bisect_right(claims, after, key=lambda c: (c.created_at, c.id))
    end = len(claims) if limit is None else min(len(claims), start + limit)
    page = list(claims[start:end])
    return page, encode_cursor(page[-1]) if page and end < len(claims) else None
