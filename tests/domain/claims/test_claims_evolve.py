"""The claim book's own folds (:mod:`detente.domain.claims.evolve`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from detente.domain.claims.model import Lease

from decisions import T0, given, open_claim


def test_a_lease_moved_by_row_keeps_every_index_and_expires_at_its_new_deadline_only() -> None:
    book = given(
        open_claim("clm_a", "src/a.py", "docs/**", modules=("billing",)),
        open_claim("clm_b", "lib/b.py", agent="bob"),
    ).state.claims
    before = book["clm_a"]
    indexes = (
        book.path_index.patterns("clm_a"),
        {k: set(v) for k, v in book.modules.items()},
        vars(book.lookups).copy(),
        set(book.memory_holders),
    )
    later = before.lease.expires_at + timedelta(seconds=30)
    lease = replace(before.lease, revision=before.lease.revision + 1, expires_at=later)

    assert book.move_deadline("clm_a", lease, at=T0, stamp=3)

    assert book["clm_a"] == replace(before, lease=lease)
    assert indexes == (
        book.path_index.patterns("clm_a"),
        {k: set(v) for k, v in book.modules.items()},
        vars(book.lookups),
        book.memory_holders,
    )
    assert "clm_a" in book.path_index.candidates("src/a.py")
    assert [c.id for c in book.due_for_expiry(before.lease.expires_at)] == ["clm_b"]
    assert [c.id for c in book.due_for_expiry(later)] == ["clm_b", "clm_a"]


def test_a_row_for_another_lease_or_an_older_revision_moves_nothing() -> None:
    book = given(open_claim("clm_a", "src/a.py")).state.claims
    held = book["clm_a"]
    stale = replace(held.lease, revision=held.lease.revision)
    other = Lease("lse_other", held.lease.revision + 1, 60, held.lease.expires_at)

    assert not book.move_deadline("clm_a", stale, at=T0)
    assert not book.move_deadline("clm_a", other, at=T0)
    assert book["clm_a"] is held
