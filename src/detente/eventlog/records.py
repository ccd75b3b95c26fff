"""Projection rows: the current record of one aggregate, stored beside the log."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RecordRow:
    """A projection row: the current wire record of one claim, meeting, ...

    Attributes:
        kind: the record kind (``claim``, ``meeting``, ``agent``, ``memory``, ``patch``,
            ``deployment``, ``resource``); with ``id`` the row's key.
        id / repo: the record's id and repository.
        revision: the record's stream revision (the CAS value clients send back).
        status: a short status for filtering.
        body: the API.md wire record (JSON object).
    """

    kind: str
    id: str
    repo: str
    revision: int
    status: str
    body: Mapping[str, Any]


@dataclass(frozen=True)
class LeaseRow:
    """The current lease of one claim, kept beside the log and moved by compare-and-swap
    when a renewal only moves a deadline (no chained event: ``docs/architecture.md``,
    "Heartbeats that cost what they change").

    Attributes:
        claim_id / repo: the claim and its repository (the row's key is ``claim_id``).
        lease_id: the lease the row extends (a row never names another claim's lease).
        revision: the lease revision after the renewal (monotonic per claim; the store
            refuses a row whose revision is not above the one it holds).
        ttl_seconds: the renewal's TTL (seconds).
        expires_at: the new absolute deadline (RFC 3339 UTC, as events spell times).
        at: when the renewal was decided (the batch's lease time).
        stamp: the store's change counter for lease rows (monotonic over the whole store,
            assigned in the writing transaction); a reader folds rows above the highest
            stamp it has seen.
    """

    claim_id: str
    repo: str
    lease_id: str
    revision: int
    ttl_seconds: int
    expires_at: str
    at: str
    stamp: int = 0
