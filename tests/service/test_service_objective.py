"""Changing a claim's objective re-runs its semantic advisories (real model, real repo)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeObjective, SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.domain.events import CLAIM_OBJECTIVE_CHANGED
from detente.errors import InvalidTransition, RevisionConflict, ValidationError
from detente.service import ClaimView, RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from semantic_support import require_model
from source_repo import make_source_repo
from support import counting_ids, seed

RETRY = "Make the HTTP client retry failed requests with backoff"
RETRY_TOO = "Add retries with exponential backoff to the API client"
GERMAN = "Translate the installation guide into German"
DOCS_DE = "Write the German translation of the installation documentation"


class Repo:
    def __init__(self, root: Path, db: Path) -> None:
        self.head = make_source_repo(root)
        self.clock = FakeClock()
        self.root, self.db = root, db
        self.service = self.restart()

    def restart(self) -> Service:
        return Service(
            SqliteStore(self.db),
            self.clock,
            [RepoConfig("demo", path=self.root)],
            ids=counting_ids(),
        )

    def open(self, path: str, agent: str, objective: str) -> ClaimView:
        self.clock.advance(1)
        cmd = replace(seed(path, agent=agent, objective=objective, ttl=3600), base_commit=self.head)
        return self.service.claims.open_claim(cmd)

    def change(self, view: ClaimView, objective: str, **kw: object) -> ClaimView:
        self.clock.advance(1)
        claim = self.service.claims.get_claim(view.claim.id).claim
        cmd = ChangeObjective(claim.id, int(kw.get("revision", claim.revision)), objective)  # type: ignore[call-overload]
        return self.service.claims.change_objective(cmd)

    def similar(self, view: ClaimView) -> set[str]:
        return {o.claim_id for o in self.service.claims.get_claim(view.claim.id).semantic}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    require_model()
    return Repo(tmp_path / "repo", tmp_path / "detente.db")


def test_a_new_objective_finds_the_holder_it_now_resembles_and_drops_the_old_one(
    repo: Repo,
) -> None:
    a = repo.open("src/a.py", "alice", RETRY)
    b = repo.open("src/b.py", "bob", RETRY_TOO)
    c = repo.open("src/c.py", "carol", GERMAN)
    assert repo.similar(b) == {a.claim.id} and repo.similar(c) == set()

    changed = repo.change(b, DOCS_DE)

    assert changed.claim.objective == DOCS_DE
    assert {o.claim_id for o in changed.semantic} == {c.claim.id}
    assert repo.similar(b) == {c.claim.id}
    assert repo.similar(c) == {b.claim.id}  # both directions
    assert repo.similar(a) == set()  # b's opening record judged the old objective


def test_an_earlier_holder_whose_objective_changed_is_judged_on_its_new_objective(
    repo: Repo,
) -> None:
    a = repo.open("src/a.py", "alice", RETRY)
    b = repo.open("src/b.py", "bob", RETRY_TOO)  # b's record names a
    assert repo.similar(a) == {b.claim.id}

    repo.change(a, GERMAN)

    assert repo.similar(a) == set()
    assert repo.similar(b) == set()


def test_the_change_is_one_logged_event_and_survives_a_restart(repo: Repo) -> None:
    a = repo.open("src/a.py", "alice", RETRY)
    c = repo.open("src/c.py", "carol", GERMAN)
    changed = repo.change(a, DOCS_DE)
    assert changed.claim.revision == a.claim.revision + 1
    events = [e for e in repo.service.store.read(repo="demo") if e.type == CLAIM_OBJECTIVE_CHANGED]
    assert len(events) == 1
    assert events[0].data["previousObjective"] == RETRY
    assert events[0].data["semantic"]["similar"][0]["claimId"] == c.claim.id

    again = repo.restart().claims.get_claim(a.claim.id)
    assert again.claim.objective == DOCS_DE
    assert {o.claim_id for o in again.semantic} == {c.claim.id}


def test_a_blank_unchanged_or_stale_objective_change_is_refused_and_changes_nothing(
    repo: Repo,
) -> None:
    a = repo.open("src/a.py", "alice", RETRY)
    with pytest.raises(ValidationError) as blank:
        repo.change(a, "   ")
    assert blank.value.extra["field"] == "objective"
    with pytest.raises(ValidationError, match="unchanged"):
        repo.change(a, RETRY)
    with pytest.raises(RevisionConflict):
        repo.change(a, GERMAN, revision=a.claim.revision - 1)
    after = repo.service.claims.get_claim(a.claim.id).claim
    assert (after.objective, after.revision) == (RETRY, a.claim.revision)


def test_a_released_claim_keeps_its_objective(repo: Repo) -> None:
    a = repo.open("src/a.py", "alice", RETRY)
    repo.service.claims.set_status(
        SetStatus(a.claim.id, a.claim.revision, ClaimStatus.ABANDONED, reason="done")
    )
    with pytest.raises(InvalidTransition):
        repo.change(a, GERMAN)
    assert repo.service.claims.get_claim(a.claim.id).claim.objective == RETRY
