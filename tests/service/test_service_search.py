"""Semantic overlaps and search through the service, on a real repository."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.model import ClaimStatus
from detente.domain.memory import commands as mc
from detente.domain.overlap.model import OverlapKind, Severity
from detente.errors import ValidationError
from detente.index.semantic import Similarity
from detente.service import ClaimView, RepoConfig, Service
from detente.service import search as search_module
from detente.service.search import MAX_SIMILAR
from detente.storage.memory import MemoryStore

from semantic_support import require_model
from source_repo import commit_all, make_source_repo
from support import counting_ids, seed


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.head = make_source_repo(root)
        self.service = Service(
            MemoryStore(), FakeClock(), [RepoConfig("demo", path=root)], ids=counting_ids()
        )

    def open(self, *paths: str, agent: str, objective: str, **more: object) -> ClaimView:
        cmd = replace(seed(*paths, agent=agent, objective=objective, **more), base_commit=self.head)
        return self.service.claims.open_claim(cmd)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    require_model()
    return Repo(tmp_path / "repo")


def test_the_same_objective_on_disjoint_paths_is_a_semantic_advisory_beside_no_overlap(
    repo: Repo,
) -> None:
    alice = repo.open("src/settlement/retry.py", agent="alice", objective="Retry failed payments")
    bob = repo.open(
        "web/src/client.ts", agent="bob", objective="Retry payments that failed, with backoff"
    )
    carol = repo.open("README.md", agent="carol", objective="Dark theme for the dashboard")
    assert bob.claim.status is ClaimStatus.ACTIVE
    assert bob.overlaps == []
    [advice] = repo.service.claims.get_claim(bob.claim.id).semantic
    assert (advice.claim_id, advice.kind, advice.severity) == (
        alice.claim.id,
        OverlapKind.SEMANTIC,
        Severity.ADVISORY,
    )
    assert "similar objective" in advice.reason
    assert repo.service.claims.get_claim(carol.claim.id).semantic == []
    wire = repo.service.claims.get_claim(alice.claim.id).to_wire()
    assert [o["claimId"] for o in wire["semanticOverlaps"]] == [bob.claim.id]


def test_semantic_overlaps_are_found_when_a_claim_opens_and_stored_on_its_announcement(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = repo.open("src/settlement/retry.py", agent="alice", objective="Retry failed payments")
    bob = repo.open(
        "web/src/client.ts", agent="bob", objective="Retry payments that failed, with backoff"
    )
    [advice] = bob.semantic  # the open answer already says it
    assert advice.claim_id == alice.claim.id
    [announced] = [
        r
        for r in repo.service.store.iter_all()
        if r.type == "claim.announced" and r.data["claimId"] == bob.claim.id
    ]
    stored = announced.data["semantic"]
    assert stored["mode"] == "semantic"
    assert [s["claimId"] for s in stored["similar"]] == [alice.claim.id]
    assert stored["similar"][0]["score"] >= stored["threshold"]
    # Reads use what was stored: a process now in the lexical mode still reports the
    # semantic finding (a recomputation would say "lexical similarity").
    monkeypatch.setattr(search_module, "_SIMILARITY", [Similarity("lexical")])
    [again] = repo.service.claims.get_claim(alice.claim.id).semantic
    assert again.claim_id == bob.claim.id
    assert again.targets[0].witness.startswith("semantic similarity")


def test_search_ranks_claims_and_memory_sections_with_their_overlaps(repo: Repo) -> None:
    (repo.root / "NOTES.md").write_text(
        "# Notes\n\n## Payments\n\nFailed payments are retried with exponential backoff.\n\n"
        "## Styling\n\nThe dashboard uses a dark theme.\n"
    )
    commit_all(repo.root, "notes")
    repo.service.memory.register_document(mc.Register("demo", "NOTES.md", "section_owned"))
    retry = repo.open("src/settlement/**", agent="alice", objective="Rework payment retries")
    repo.open("src/settlement/retry.py", agent="bob", objective="Tune the backoff caps")
    repo.open("web/**", agent="carol", objective="Dark theme for the dashboard")
    found = repo.service.search.search("retry behaviour", repo="demo")
    assert found["similarity"]["mode"] == "semantic"
    results = found["results"]
    assert results[0]["claimId"] == retry.claim.id
    assert results[0]["overlaps"][0]["kind"] == "path"
    memory = [r for r in results if r["type"] == "memory"]
    assert memory[0]["title"] == "Payments"


def test_search_leaves_out_claims_whose_meaning_is_unrelated(repo: Repo) -> None:
    retry = repo.open("src/settlement/retry.py", agent="alice", objective="Retry failed payments")
    theme = repo.open("README.md", agent="carol", objective="Dark theme for the dashboard")
    unrelated = Similarity().rank("retry behaviour", ["Dark theme for the dashboard README.md"])
    assert unrelated[0] <= 0  # the premise: an opposite-leaning cosine, not a weak match

    found = repo.service.search.search("retry behaviour", repo="demo")

    ids = [r.get("claimId") for r in found["results"]]
    assert retry.claim.id in ids
    assert theme.claim.id not in ids
    assert all(r["score"] > 0 for r in found["results"])


def test_search_refuses_an_empty_query_and_a_bad_limit(repo: Repo) -> None:
    with pytest.raises(ValidationError, match="q must be"):
        repo.service.search.search("  ")
    with pytest.raises(ValidationError, match="limit"):
        repo.service.search.search("x", limit=0)


def test_a_claims_record_keeps_only_the_most_similar_few(repo: Repo) -> None:
    for i in range(MAX_SIMILAR + 2):
        repo.open(f"docs/n{i}.md", agent=f"agent{i}", objective="Retry failed payments")
    last = repo.open("docs/last.md", agent="zed", objective="Retry failed payments")
    assert len(last.semantic) == MAX_SIMILAR
    assert len({o.claim_id for o in last.semantic}) == MAX_SIMILAR


def test_a_claim_opening_never_waits_for_the_model_to_load(tmp_path: Path) -> None:
    require_model()
    script = (
        "from detente.service import search\n"
        "print(search.similarity_now().mode)\n"  # the model starts loading in the background
        "search._WARMING[0].join(60)\n"
        "print(search.similarity_now().mode)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.split() == ["lexical", "semantic"]


@pytest.fixture
def lexical_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """A repository served without the model (a default install): the lexical mode."""
    monkeypatch.setattr(search_module, "_SIMILARITY", [Similarity("lexical")])
    return Repo(tmp_path / "repo")


def test_without_the_model_search_finds_retries_for_a_query_about_retry_behaviour(
    lexical_repo: Repo,
) -> None:
    settlement = lexical_repo.open(
        "src/settlement/**",
        agent="alice",
        objective="Make settlement retries idempotent using a retry key",
    )
    lexical_repo.open("web/**", agent="carol", objective="Dark theme for the dashboard")
    for query in ("retry behaviour of payments", "retrying payments"):
        found = lexical_repo.service.search.search(query, repo="demo")
        assert found["similarity"]["mode"] == "lexical"
        assert [r["claimId"] for r in found["results"]] == [settlement.claim.id], query


def test_search_matches_a_claims_contract_areas_and_test_names(lexical_repo: Repo) -> None:
    ledger = lexical_repo.open(
        "src/ledger/**",
        agent="alice",
        objective="Rework the ledger",
        expected_contract_changes=({"area": "payments-api", "change": "idempotency header"},),
        test_responsibility=("tests/test_ledger.py::test_reconciliation_survives_restarts",),
    )
    lexical_repo.open("web/**", agent="carol", objective="Dark theme for the dashboard")
    for query in ("payments API", "idempotency", "reconciliation after a restart"):
        found = lexical_repo.service.search.search(query, repo="demo")
        assert [r["claimId"] for r in found["results"]] == [ledger.claim.id], query
