"""What the dashboard reads: one snapshot of every record, in the API's wire shapes.

The reads are the application layer's (:mod:`detente.operations.page_reads`, through
the declared read operations); everything after them works on the camelCase records of
API.md, so the views and templates do not change with the read path.
"""

from __future__ import annotations

from detente.operations.page_reads import Snapshot, claim_overlaps, now, read_snapshot

__all__ = ["Snapshot", "claim_overlaps", "now", "read_snapshot"]
