"""The patch queue through the service: content-addressed, listed until integrated or discarded."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.domain.gates.patches import DiscardPatch, PublishPatch
from detente.errors import RevisionConflict, ValidationError
from detente.vcs.patches import format_patch
from gates_support import commit, completion, git, hermetic, make_repo, make_service

from support import seed


@pytest.fixture(autouse=True)
def _hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic(tmp_path, monkeypatch)


def test_patches_are_content_addressed_listed_and_leave_the_queue_when_integrated_or_discarded(
    tmp_path: Path,
) -> None:
    path, m0 = make_repo(tmp_path / "repo")
    service = make_service(path, tmp_path / "detente.db")
    alice = service.claims.open_claim(replace(seed("a.py"), base_commit=m0)).claim
    bob = service.claims.open_claim(replace(seed("b.py", agent="bob"), base_commit=m0)).claim
    a_head = commit(path, {"a.py": "a = 2\n"}, "alice", parent=m0, when=10, ref="refs/heads/a")
    b_head = commit(path, {"b.py": "b = 2\n"}, "bob", parent=m0, when=10, ref="refs/heads/b")
    a_mbox, b_mbox = format_patch(path, m0, a_head), format_patch(path, m0, b_head)

    a_patch, created = service.patches.publish_patch(PublishPatch(alice.id, m0, a_mbox))
    again, created_again = service.patches.publish_patch(PublishPatch(alice.id, m0, a_mbox))
    b_patch, _ = service.patches.publish_patch(PublishPatch(bob.id, m0, b_mbox))
    assert created and not created_again and again.id == a_patch.id
    assert a_patch.files == ("a.py",) and a_patch.commits == 1 and len(a_patch.sha256) == 64
    assert [p.id for p in service.patches.list_patches()] == sorted([a_patch.id, b_patch.id])
    with pytest.raises(ValidationError) as not_a_patch:
        service.patches.publish_patch(PublishPatch(alice.id, m0, "just text\n"))
    assert not_a_patch.value.field == "mbox"

    service.gates.complete(alice.id, completion(alice, a_head, m0, ("a.py",)))
    with pytest.raises(RevisionConflict):
        service.patches.discard_patch(DiscardPatch(b_patch.id, expected_revision=7))
    service.patches.discard_patch(DiscardPatch(b_patch.id, 1, "superseded"))

    assert service.patches.list_patches() == []
    assert {p.id: p.status for p in service.patches.list_patches(status="all")} == {
        a_patch.id: "integrated",
        b_patch.id: "discarded",
    }
    assert service.patches.get_patch(a_patch.id).mbox == a_mbox
    assert git(path, "rev-parse", "refs/heads/main") == a_head
    assert service.audit().ok


def test_a_discard_reason_with_a_bidi_control_is_refused_and_the_patch_stays_published(
    tmp_path: Path,
) -> None:
    path, m0 = make_repo(tmp_path / "repo")
    service = make_service(path, tmp_path / "detente.db")
    alice = service.claims.open_claim(replace(seed("a.py"), base_commit=m0)).claim
    head = commit(path, {"a.py": "a = 2\n"}, "alice", parent=m0, when=10, ref="refs/heads/a")
    patch, _ = service.patches.publish_patch(
        PublishPatch(alice.id, m0, format_patch(path, m0, head))
    )

    with pytest.raises(ValidationError) as refused:
        service.patches.discard_patch(DiscardPatch(patch.id, 1, "superseded \u202e by bob"))

    assert refused.value.field == "reason"
    assert [p.id for p in service.patches.list_patches()] == [patch.id]
