"""The claim record's own helpers (:mod:`detente.domain.claims.model`)."""

from __future__ import annotations

from dataclasses import fields, replace
from datetime import timedelta

from detente.domain.claims.model import Lease

from decisions import given, open_claim


def test_a_claim_with_a_new_lease_equals_the_replaced_record_and_shares_every_other_field() -> None:
    claim = given(open_claim("clm_a", "src/a.py")).state.claims["clm_a"]
    lease = Lease(
        id=claim.lease.id,
        revision=claim.lease.revision + 1,
        ttl_seconds=90,
        expires_at=claim.lease.expires_at + timedelta(seconds=30),
    )

    moved = claim.with_lease(lease)

    assert moved == replace(claim, lease=lease)
    assert moved.lease is lease and claim.lease is not lease  # the original is untouched
    for f in fields(claim):
        if f.name != "lease":
            assert getattr(moved, f.name) is getattr(claim, f.name), f.name
