"""Deployment CAS and per-environment policy, through the service on SQLite and real git."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.domain.claims.declared import Declared
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.gates.deployments import Deploy, DeployPolicy, Migration, SetPolicy
from detente.errors import EvidenceRejected, RevisionConflict, StaleBase
from detente.service import Service
from gates_support import commit, completion, hermetic, make_repo, make_service

from support import seed


@pytest.fixture(autouse=True)
def _hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic(tmp_path, monkeypatch)


@pytest.fixture
def env(tmp_path: Path) -> tuple[Service, Path, str]:
    path, m0 = make_repo(tmp_path / "repo")
    return make_service(path, tmp_path / "detente.db"), path, m0


def _integrated(
    service: Service,
    path: Path,
    base: str,
    rel: str,
    migrations: tuple[str, ...] = (),
    **kw: object,
) -> tuple[Claim, str]:
    claim = service.claims.open_claim(replace(seed(rel, **kw), base_commit=base)).claim
    head = commit(path, {rel: "changed\n"}, parent=base, when=10)
    cmd = completion(claim, head, base, (rel,), migrations=migrations)
    return service.gates.complete(claim.id, cmd).claim, head


def _deploy(claim: Claim, commit_oid: str, prev: str | None, **kw: object) -> Deploy:
    return Deploy("demo", kw.pop("env", "staging"), claim.id, commit_oid, prev, **kw)  # type: ignore[arg-type]


def test_a_stale_expected_previous_commit_is_refused_and_the_environment_is_unchanged(
    env: tuple[Service, Path, str],
) -> None:
    service, path, m0 = env
    claim, head = _integrated(service, path, m0, "a.py")
    first = service.deployments.deploy(_deploy(claim, head, None))
    assert first.environment and first.environment.current
    assert first.environment.current["commitOid"] == head

    with pytest.raises(StaleBase) as caught:
        service.deployments.deploy(_deploy(claim, m0, m0))
    assert caught.value.extra["actual"] == head
    after = service.deployments.get_deployment("staging")
    assert after.environment and after.environment.current == first.environment.current
    assert len(after.environment.history) == 1


def test_production_refuses_unresolved_risks_pending_and_missing_migrations_and_live_claims(
    env: tuple[Service, Path, str],
) -> None:
    service, path, m0 = env
    claim, head = _integrated(service, path, m0, "a.py", migrations=("0001_init",))
    live = service.claims.open_claim(replace(seed("b.py", agent="bob"), base_commit=m0)).claim
    cmd = _deploy(
        claim,
        head,
        None,
        env="production",
        migrations=(Migration("0002_extra", "pending"),),
        unresolved_risks=("flaky cache",),
    )
    with pytest.raises(EvidenceRejected) as caught:
        service.deployments.deploy(cmd)
    assert caught.value.failures == [
        "migration 0002_extra is pending, not applied",
        f"migration 0001_init (named by claim {claim.id}'s evidence) is not listed",
        "1 unresolved risk(s) (flaky cache); environment production allows at most 0",
    ]
    with pytest.raises(EvidenceRejected) as not_integrated:
        service.deployments.deploy(
            replace(cmd, claim_id=live.id, migrations=(), unresolved_risks=())
        )
    assert not_integrated.value.failures == [
        f"claim {live.id} is active; environment production takes integrated claims only"
    ]
    ok = replace(cmd, migrations=(Migration("0001_init", "applied"),), unresolved_risks=())
    assert service.deployments.deploy(ok).to_wire()["deployment"]["commitOid"] == head


def test_a_deployment_to_the_responsible_environment_completes_an_integrated_claim(
    env: tuple[Service, Path, str],
) -> None:
    service, path, m0 = env
    claim, head = _integrated(
        service, path, m0, "a.py", declared=Declared(deployment_responsibility="staging")
    )
    assert claim.status is ClaimStatus.INTEGRATED
    view = service.deployments.deploy(_deploy(claim, head, None))
    assert service.claims.get_claim(claim.id).claim.status is ClaimStatus.COMPLETED
    assert view.to_wire()["history"][0]["claimId"] == claim.id
    types = [e.type for e in service.events(limit=1000)[0]]
    assert types[-2:] == ["deployment.recorded", "claim.completed"]
    assert service.audit().ok


def test_a_commit_without_the_claims_integrated_head_is_refused(
    env: tuple[Service, Path, str],
) -> None:
    service, path, m0 = env
    claim, _ = _integrated(service, path, m0, "a.py")
    elsewhere = commit(path, {"b.py": "other\n"}, parent=m0, when=20)
    with pytest.raises(EvidenceRejected) as caught:
        service.deployments.deploy(_deploy(claim, elsewhere, None))
    assert caught.value.failures == [
        f"commit {elsewhere[:12]} does not contain claim {claim.id}'s integrated head"
    ]


def test_an_environment_policy_is_set_by_cas_and_then_applies(
    env: tuple[Service, Path, str],
) -> None:
    service, path, m0 = env
    claim, head = _integrated(service, path, m0, "a.py")
    strict = DeployPolicy(max_unresolved_risks=0)
    service.deployments.set_deploy_policy(SetPolicy("demo", "staging", strict, expected_revision=0))
    with pytest.raises(RevisionConflict):
        service.deployments.set_deploy_policy(SetPolicy("demo", "staging", DeployPolicy(), 0))
    with pytest.raises(EvidenceRejected):
        service.deployments.deploy(_deploy(claim, head, None, unresolved_risks=("r",)))
    assert service.deployments.get_deployment("staging").policy["maxUnresolvedRisks"] == 0
