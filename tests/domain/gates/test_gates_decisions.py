"""The gate decisions: evidence before completion, the integration CAS, deployments."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from detente.domain import events as ev_types
from detente.domain.claims.declared import Declared
from detente.domain.claims.model import ClaimStatus, MemoryImpact
from detente.domain.events import Event
from detente.domain.gates.deployments import (
    Deploy,
    DeployFacts,
    DeployPolicy,
    Migration,
    SetPolicy,
    decide_deploy,
)
from detente.domain.gates.evidence import BaseRef, Evidence, GitFacts, TestRecord
from detente.domain.gates.findings import commit_findings
from detente.domain.gates.integration import (
    CompleteClaim,
    check_completion,
    decide_ready,
    integrated_events,
    stale_events,
)
from detente.domain.memory.commands import Register
from detente.domain.memory.decide import decide_register
from detente.domain.state import RepoState

from decisions import BASE, Context, Decision, Given, ev, given, open_claim

HEAD = "b" * 40
MOVED = "c" * 40
MAIN = BaseRef("refs/heads/main", BASE)
GOOD = Evidence(head_commit=HEAD, changed_files=("src/a/x.py",))
FACTS = GitFacts(
    head_oid=HEAD, base_oid=BASE, from_base=True, from_claim_base=True, diff=("src/a/x.py",)
)

DEPLOYABLE = DeployFacts(HEAD)


def _alice(**kw: Any) -> Given:
    return given(open_claim("clm_a", "src/a/**", ttl=3600, **kw))


def _complete(
    evidence: Evidence = GOOD,
    facts: GitFacts = FACTS,
    *,
    cas: Literal["won", "lost", "none"] = "won",
    fencing_token: int = 1,
) -> Decision:
    """The service's completion, as one decision: check, judge the evidence, then the
    outcome of the ref's compare-and-swap (``none``: the push flow, no CAS)."""

    def decide(state: RepoState, ctx: Context) -> list[Event]:
        rev = state.claims["clm_a"].revision
        cmd = CompleteClaim("clm_a", rev, fencing_token, MAIN, evidence, integrate=cas != "none")
        claim = check_completion(state, cmd, ctx.now)
        events = decide_ready(state, claim, cmd, facts, ctx.ids)
        if cas == "won":
            return events + integrated_events(
                state, claim, MAIN, HEAD, ctx.ids, memory_updates=evidence.memory_updates
            )
        if cas == "lost":
            return events + stale_events(claim, MAIN, MOVED, ctx.ids)
        return events

    return decide


def _failures(g: Given, decision: Decision) -> list[str]:
    refused = g.when(decision).raises("evidence_rejected")
    failures = refused.extra["failures"]
    assert isinstance(failures, list)
    return [str(f) for f in failures]


# ---------------------------------------------------------------- evidence


def test_valid_evidence_and_a_won_cas_integrate_and_complete_the_claim() -> None:
    _alice().when(_complete()).then(
        ev(ev_types.CLAIM_READY_FOR_REVIEW, claimId="clm_a"),
        ev(ev_types.CLAIM_INTEGRATED, ref="refs/heads/main", oldOid=BASE, newOid=HEAD),
        ev(ev_types.CLAIM_COMPLETED, claimId="clm_a"),
    )


def test_without_a_cas_the_claim_stops_at_ready_for_review() -> None:
    _alice().when(_complete(cas="none")).then(ev_types.CLAIM_READY_FOR_REVIEW)


def test_a_head_that_is_not_a_commit_is_rejected() -> None:
    [failure] = _failures(_alice(), _complete(facts=replace(FACTS, head_oid=None)))
    assert "is not a commit of the repository" in failure


def test_a_head_that_does_not_descend_from_the_expected_base_is_rejected() -> None:
    failures = _failures(_alice(), _complete(facts=replace(FACTS, from_base=False)))
    assert any("does not descend from expectedBaseRef.oid" in f for f in failures)


def test_a_head_equal_to_the_base_has_nothing_to_integrate() -> None:
    facts = replace(FACTS, head_oid=BASE)
    failures = _failures(_alice(), _complete(replace(GOOD, head_commit=BASE), facts))
    assert any("no commits to integrate" in f for f in failures)


def test_a_changed_file_outside_the_claim_is_rejected() -> None:
    facts = replace(FACTS, diff=("src/a/x.py", "src/b/y.py"))
    evidence = replace(GOOD, changed_files=("src/a/x.py", "src/b/y.py"))
    failures = _failures(_alice(), _complete(evidence, facts))
    assert any("src/b/y.py" in f for f in failures)


def test_a_responsible_test_that_failed_or_is_missing_is_rejected() -> None:
    g = _alice(test_responsibility=("pytest -q",))
    assert _failures(g, _complete())  # not run at all
    failed = replace(GOOD, tests=(TestRecord("pytest -q", "failed", exit_code=1),))
    assert any("pytest -q" in f for f in _failures(g, _complete(failed)))
    passed = replace(GOOD, tests=(TestRecord("pytest -q", "passed", exit_code=0),))
    g.when(_complete(passed)).then(
        ev_types.CLAIM_READY_FOR_REVIEW, ev_types.CLAIM_INTEGRATED, ev_types.CLAIM_COMPLETED
    )


def test_an_old_fencing_token_is_refused_before_the_evidence_is_read() -> None:
    _alice().when(_complete(fencing_token=0)).raises("stale_fencing_token")


def test_an_expired_claim_cannot_complete() -> None:
    _alice().after(3600).when(_complete()).raises("lease_expired")


# ---------------------------------------------------------------- integration CAS


def test_a_lost_cas_sends_the_claim_back_to_active_with_stale_evidence() -> None:
    step = _alice().when(_complete(cas="lost"))
    step.then(
        ev_types.CLAIM_READY_FOR_REVIEW,
        ev(ev_types.CLAIM_INTEGRATION_STALE, claimId="clm_a"),
    )
    g = step.and_then()
    assert g.state.claims["clm_a"].status is ClaimStatus.ACTIVE


def test_an_integrated_claim_with_memory_to_update_waits_before_completing() -> None:
    g = _alice(memory_impacts=(MemoryImpact(path="AGENTS.md", sections=("build",)),))
    g.when(_complete()).then(ev_types.CLAIM_READY_FOR_REVIEW, ev_types.CLAIM_INTEGRATED)


# ---------------------------------------------------------------- deployments


def _deploy(
    env: str = "staging",
    *,
    prev: str | None = None,
    facts: DeployFacts = DEPLOYABLE,
    **kw: object,
) -> Decision:
    def decide(state: RepoState, ctx: Context) -> list[Event]:
        cmd = Deploy("demo", env, "clm_a", HEAD, prev, **kw)  # type: ignore[arg-type]
        return decide_deploy(state, cmd, facts, ctx.ids)

    return decide


def test_a_first_deployment_records_the_environment_moving_from_nothing() -> None:
    _alice().when(_deploy()).then(
        ev(
            ev_types.DEPLOYMENT_RECORDED,
            environment="staging",
            claimId="clm_a",
            commitOid=HEAD,
            prevCommitOid=None,
        )
    )


def test_a_deployment_naming_the_wrong_previous_commit_is_stale_base() -> None:
    g = _alice()
    g.when(_deploy(prev=MOVED)).raises("stale_base", actual=None)
    g.when(_deploy()).and_then()
    g.when(_deploy(prev=None)).raises("stale_base", actual=HEAD)
    g.when(_deploy(prev=HEAD)).then(ev(ev_types.DEPLOYMENT_RECORDED, prevCommitOid=HEAD))


def test_production_takes_only_integrated_claims_without_unresolved_risks() -> None:
    refused = _alice().when(_deploy("production", unresolved_risks=("flaky",)))
    failures = refused.raises("evidence_rejected").extra["failures"]
    assert len(failures) == 2


def test_an_unapplied_migration_is_refused() -> None:
    refused = _alice().when(_deploy(migrations=(Migration("0042", "pending"),)))
    assert refused.raises("evidence_rejected").extra["failures"] == [
        "migration 0042 is pending, not applied"
    ]


def test_a_commit_that_does_not_exist_is_refused() -> None:
    _alice().when(_deploy(facts=DeployFacts(None))).raises("evidence_rejected")


def test_a_deployment_to_its_responsibility_completes_an_integrated_claim() -> None:
    g = _alice(declared=Declared(deployment_responsibility="staging"), memory_impacts=())
    step = g.when(_complete())
    types = [e.type for e in step.outcome] if isinstance(step.outcome, list) else []
    assert ev_types.CLAIM_COMPLETED not in types  # a deployment is still owed
    step.and_then()
    assert g.state.claims["clm_a"].status is ClaimStatus.INTEGRATED
    g.when(_deploy(facts=DeployFacts(HEAD, contains_claim_head=True))).then(
        ev_types.DEPLOYMENT_RECORDED, ev(ev_types.CLAIM_COMPLETED, claimId="clm_a")
    )


def test_a_policy_is_set_by_cas_on_the_environments_revision() -> None:
    g = _alice()
    strict = DeployPolicy(max_unresolved_risks=0)
    g.when(SetPolicy("demo", "staging", strict, expected_revision=1)).raises("revision_conflict")
    step = g.when(SetPolicy("demo", "staging", strict, expected_revision=0))
    step.then(ev(ev_types.DEPLOYMENT_POLICY_SET, environment="staging"))
    step.and_then()
    g.when(_deploy(unresolved_risks=("flaky",))).raises("evidence_rejected")


# ---------------------------------------------------------------- memory documents


def _register(path: str, doc_class: str) -> Decision:
    def decide(state: RepoState, ctx: Context) -> list[Event]:
        data = b"# Agents\n\n## Build\n\nmake\n" if doc_class == "section_owned" else b""
        return decide_register(state, Register("demo", path, doc_class), data, ctx.ids).events

    return decide


def test_a_claims_diff_that_changes_a_registered_memory_document_is_rejected() -> None:
    g = given(
        _register("AGENTS.md", "section_owned"),
        open_claim("clm_a", "src/a/**", "AGENTS.md", ttl=3600),
    )
    facts = replace(FACTS, diff=("AGENTS.md", "src/a/x.py"))
    evidence = replace(GOOD, changed_files=("AGENTS.md", "src/a/x.py"))

    [failure] = _failures(g, _complete(evidence, facts))

    assert "AGENTS.md is a registered memory document (section_owned)" in failure
    assert "detente memory patch 'AGENTS.md#<section>'" in failure


def test_a_commit_by_a_claim_staging_a_memory_document_is_refused_naming_memory_append() -> None:
    g = given(_register("DECISIONS.md", "append_only"), open_claim("clm_a", "src/**", ttl=3600))

    problems, findings = commit_findings(g.state, g.state.claims["clm_a"], ["DECISIONS.md"])
    _, by_nobody = commit_findings(g.state, None, ["DECISIONS.md"])

    assert problems == [] and [f.kind for f in findings] == ["memory"]
    assert "detente memory append DECISIONS.md" in findings[0].sentence("clm_a")
    assert by_nobody == []  # a person's commit is let through (and adopted)


def test_memory_updates_are_recorded_by_document_revision_and_a_future_one_is_refused() -> None:
    impacts = (MemoryImpact(path="AGENTS.md", sections=("build",)),)
    g = given(
        _register("AGENTS.md", "section_owned"),
        open_claim("clm_a", "src/a/**", ttl=3600, memory_impacts=impacts),
    )
    assert any(
        "AGENTS.md@9: AGENTS.md is at revision 1" in f
        for f in _failures(g, _complete(replace(GOOD, memory_updates=("AGENTS.md@9",))))
    )

    g.when(_complete(replace(GOOD, memory_updates=("AGENTS.md",)))).then(
        ev(ev_types.CLAIM_READY_FOR_REVIEW, claimId="clm_a"),
        ev_types.CLAIM_INTEGRATED,
        ev(ev_types.CLAIM_COMPLETED, evidence={"memoryUpdates": ["AGENTS.md@1"]}),
    )
