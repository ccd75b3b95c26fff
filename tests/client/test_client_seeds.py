"""The body of a new claim (one builder for the CLI and the MCP tools) and the short
forms of its parts."""

from __future__ import annotations

from detente.client.seeds import claim_seed, contract_seed, memory_impacts, successor_seed
from detente.clock import FakeClock
from detente.domain.claims.declared import Declared
from detente.operations.bodies import ClaimIn
from detente.operations.claims import open_claim
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore


def test_memory_entries_naming_one_path_merge_into_one_impact_in_first_seen_order() -> None:
    entries = ["AGENTS.md#build", "NOTES.md", "AGENTS.md#test", "AGENTS.md#build"]
    assert memory_impacts(entries) == [
        {"path": "AGENTS.md", "sections": ["build", "test"]},
        {"path": "NOTES.md", "sections": []},
    ]


def test_no_memory_entries_give_no_impacts() -> None:
    assert memory_impacts([]) == []


def test_a_claim_seed_is_a_body_the_claim_body_model_accepts() -> None:
    seed = claim_seed(
        repo="demo",
        objective="retries",
        agent="codex",
        base_commit="4f2d6b1",
        session="s-1",
        paths=["src/**"],
        contracts=[contract_seed("http:POST /v1/x:adds a header"), "db-area"],
        tests={"unit": ["tests/test_retry.py"]},
        declared=Declared(deployment_responsibility="staging"),
        memory=["AGENTS.md#build"],
        ttl=900,
        create_worktree=True,
    )
    body = ClaimIn.model_validate(seed)
    cmd = body.to_command()
    assert cmd.declared.deployment_responsibility == "staging"
    assert cmd.test_responsibility == {"unit": ["tests/test_retry.py"]}
    assert cmd.agent.session_id == "s-1"
    assert cmd.create_worktree is True
    assert cmd.expected_contract_changes == (
        {"type": "http", "area": "POST /v1/x", "change": "adds a header"},
        "db-area",
    )


def test_a_claim_seed_leaves_out_what_was_not_given_but_names_every_declared_fact() -> None:
    seed = claim_seed(repo="demo", objective="x", agent="a", paths=["a.py"])
    assert seed == {
        "repo": "demo",
        "objective": "x",
        "deploymentResponsibility": None,
        "paths": ["a.py"],
        "leaseTtlSeconds": 300,
        "agent": {"id": "a", "name": "a"},
    }


def test_a_successor_seed_carries_the_predecessors_declared_intent_over() -> None:
    opened = claim_seed(
        repo="demo",
        objective="retries",
        agent="codex",
        base_commit="4f2d6b1",
        paths=["src/**"],
        modules=["src"],
        contracts=[{"type": "db", "area": "t", "change": "adds a column"}],
        tests={"unit": ["tests/test_retry.py"]},
        declared=Declared(deployment_responsibility="staging"),
        memory=["AGENTS.md#build"],
    )
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("demo")])
    pred = open_claim(service, ClaimIn.model_validate(opened))["claim"]
    seed = successor_seed(pred, agent="claude", paths=["src/a.py"], create_worktree=True)
    assert seed["objective"] == "retries"
    assert seed["paths"] == ["src/a.py"]
    assert seed["modules"] == ["src"]
    assert seed["testResponsibility"] == {"unit": ["tests/test_retry.py"]}
    assert seed["deploymentResponsibility"] == "staging"
    assert seed["memoryImpacts"] == [
        {"path": "AGENTS.md", "mode": "section", "sections": ["build"]}
    ]
    assert seed["expectedContractChanges"] == [
        {"type": "db", "area": "t", "change": "adds a column"}
    ]
    assert "baseCommit" not in seed
    assert ClaimIn.model_validate(seed).agent is not None
