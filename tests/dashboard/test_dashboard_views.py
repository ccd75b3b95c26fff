"""Panel view models over wire records (no server, no browser)."""

from __future__ import annotations

from dashboard_records import claim

from detente.dashboard import views
from detente.domain.claims.model import ContractChange
from detente.domain.claims.wire import contract_to_wire


def test_claims_are_grouped_once_by_the_top_directory_of_their_first_path() -> None:
    claims = [
        claim("a", ["src/app/**", "docs/x.md"]),
        claim("b", ["README.md"]),
        claim("c", ["**/*.md"]),
        claim("d", ["src/lib.py"], status="completed"),
    ]

    groups, finished = views.claim_groups(claims, {}, "dir")

    assert [(g.title, [c["id"] for c in g.claims]) for g in groups] == [
        ("/", ["b", "c"]),
        ("src/", ["a"]),
    ]
    assert [c["id"] for c in finished] == ["d"]


def test_claims_are_grouped_by_their_codeowners_owners_with_a_no_owner_group() -> None:
    claims = [claim("a", ["src/**"]), claim("b", ["docs/"]), claim("c", ["x"])]
    owners = {"a": ["@alice"], "b": ["@bob", "@carol"], "c": []}

    groups, _ = views.claim_groups(claims, owners, "owner")

    assert [g.title for g in groups] == ["@alice", "@bob, @carol", "no owner"]


def test_evidence_needed_names_the_tests_contracts_and_memory_a_claim_owes() -> None:
    owing = claim(
        "a",
        ["src/**"],
        testResponsibility=["tests/test_retry.py"],
        expectedContractChanges=["payments API"],
        memoryImpacts=[{"path": "AGENTS.md", "mode": "section", "sections": ["build"]}],
    )

    needed = views.evidence_needed(owing)

    assert needed == [
        "head commit",
        "changed files",
        "tests: tests/test_retry.py",
        "API changes: payments API",
        "memory updates: AGENTS.md",
    ]
    assert views.evidence_needed(claim("b", ["x"], status="integrated")) == []


def test_memory_at_risk_lists_user_edits_drift_moved_sections_and_kept_edits() -> None:
    holder = claim("a", ["src/**"], memoryImpacts=[{"path": "AGENTS.md", "sections": ["build"]}])
    doc = {
        "path": "AGENTS.md",
        "repo": "project",
        "onDisk": {"fileHash": "x", "inSync": False},
        "sections": [
            {"key": "build", "revision": 3, "lastWriterClaimId": "z"},
            {"key": "style", "revision": 1, "lastWriterClaimId": "z"},
        ],
        "reconciliations": [
            {"id": "rec_1", "regionKey": "claims", "status": "open"},
            {"id": "rec_0", "regionKey": "claims", "status": "resolved"},
        ],
        "artifacts": [
            {"id": "art_1", "claimId": "y", "sectionKey": "build", "reason": "user edited"}
        ],
    }
    quiet = {"path": "MEMORY.md", "repo": "project", "onDisk": None, "sections": []}

    risky = views.memory_at_risk([doc, quiet], {"a": holder})

    assert [r["path"] for r in risky] == ["AGENTS.md"]
    kinds = [r["kind"] for r in risky[0]["risks"]]
    assert kinds == ["user edit", "drift", "moved", "kept edit"]
    assert "#build" in risky[0]["risks"][2]["text"]


def test_deployments_show_pending_migrations_risks_over_policy_and_undeployed_claims() -> None:
    deployed = claim("a", ["x"], status="integrated", integration={"newOid": "c1"})
    waiting = claim("b", ["y"], status="completed", integration={"newOid": "c2"})
    dep = {
        "deployment": {
            "commitOid": "c1",
            "claimId": "a",
            "migrations": [{"id": "m1", "status": "applied"}, {"id": "m2", "status": "pending"}],
            "unresolvedRisks": ["r1", "r2"],
            "environment": "prod",
            "repo": "project",
        },
        "history": [{"claimId": "a"}],
        "environment": {"environment": "prod", "repo": "project"},
        "policy": {"maxUnresolvedRisks": 1},
    }

    (env,) = views.deployments_view([dep], [deployed, waiting])

    assert env["name"] == "prod"
    assert [m["id"] for m in env["pendingMigrations"]] == ["m2"]
    assert env["overRiskLimit"] is True
    assert [c["id"] for c in env["undeployed"]] == ["b"]


def test_agents_show_heartbeat_age_in_seconds_from_the_server_clock() -> None:
    agent = {
        "sessionId": "s1",
        "agentName": "codex",
        "status": "active",
        "updatedAt": "2026-11-30T12:00:00Z",
        "claimIds": ["a"],
    }

    (view,) = views.agents_view([agent], {"a": claim("a", ["x"])}, "2026-11-30T12:01:05Z")

    assert view["heartbeatAge"] == 65
    assert [c["id"] for c in view["claims"]] == ["a"]


def test_evidence_needed_reads_typed_contract_changes_and_a_test_plan() -> None:
    typed = contract_to_wire(ContractChange(area="payments-api", type="http", change="add-retry"))
    owing = claim(
        "a",
        ["web/**"],
        testResponsibility={"unit": ["tests/test_retry.py"], "integration": ["tests/it.py"]},
        expectedContractChanges=[typed, "billing"],
    )

    needed = views.evidence_needed(owing)

    assert needed[2:] == [
        "tests: unit: tests/test_retry.py; integration: tests/it.py",
        "API changes: http:payments-api:add-retry, billing",
    ]


def test_a_document_absent_from_the_branch_is_no_drift_and_no_risk() -> None:
    log = {
        "path": "DECISIONS.md",
        "repo": "project",
        "onDisk": {"fileHash": None, "inSync": False, "ref": "refs/heads/main"},
        "sections": [],
    }

    assert views.memory_at_risk([log], {}) == []
