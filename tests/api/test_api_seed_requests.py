"""The seed's own example requests are accepted verbatim, and today's shapes still are."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fixtures import seed_requests

from conftest import running
from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from detente.vcs import resolve_commit
from gates_support import commit, git, hermetic, make_repo

from support import counting_ids


@pytest.fixture(autouse=True)
def _hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hermetic(tmp_path, monkeypatch)


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def http(repo: tuple[Path, str], tmp_path: Path) -> Iterator[httpx.Client]:
    service = Service(
        SqliteStore(tmp_path / "d.db"),
        FakeClock(),
        [RepoConfig("demo", repo[0])],
        ids=counting_ids(),
        resolve_commit=resolve_commit,
    )
    with running(service) as base, httpx.Client(base_url=base, timeout=10) as client:
        yield client


def test_the_seeds_example_claim_is_accepted_and_keeps_its_structure(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    _, m0 = repo
    r = http.post("/v1/claims", json=seed_requests.open_claim(m0[:7]))
    assert r.status_code == 201, r.text
    claim = r.json()["claim"]
    assert claim["baseCommit"] == m0
    assert claim["status"] == "active"
    assert claim["expectedContractChanges"][0] == {
        "type": "http",
        "area": "POST /v1/settlements/{id}/webhooks",
        "change": "adds an Idempotency-Key header",
    }
    assert claim["testResponsibility"]["migration"] == ["tests/migrations/test_0042_retry_count.py"]


def test_two_claims_changing_one_contract_area_overlap_on_the_area(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    _, m0 = repo
    assert http.post("/v1/claims", json=seed_requests.open_claim(m0[:7])).status_code == 201
    other = {
        "repo": "demo",
        "objective": "rename the settlement header",
        "baseCommit": m0,
        "expectedContractChanges": [
            {"type": "http", "area": "POST /v1/settlements/{id}/webhooks", "change": "renames"}
        ],
        "agent": {"id": "claude-1", "name": "claude"},
    }
    r = http.post("/v1/claims", json=other)
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["claim"]["status"] == "negotiating"
    assert body["overlaps"][0]["kind"] == "contract"


def test_todays_string_shapes_are_still_accepted(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    _, m0 = repo
    body = {
        "repo": "demo",
        "objective": "plain strings",
        "baseCommit": m0,
        "paths": ["a.py"],
        "expectedContractChanges": ["settlement api"],
        "testResponsibility": ["pytest -q"],
        "agent": {"id": "x", "name": "x"},
    }
    r = http.post("/v1/claims", json=body)
    assert r.status_code == 201, r.text
    claim = r.json()["claim"]
    assert claim["expectedContractChanges"] == ["settlement api"]
    assert claim["testResponsibility"] == ["pytest -q"]


def test_a_contract_change_without_an_area_is_a_clear_422_and_changes_nothing(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    _, m0 = repo
    body = seed_requests.open_claim(m0)
    body["expectedContractChanges"] = [{"type": "http", "change": "no area"}]
    r = http.post("/v1/claims", json=body)
    assert r.status_code == 422
    assert "area" in r.text
    assert http.get("/v1/claims", params={"repo": "demo"}).json()["claims"] == []


def test_the_seeds_example_completion_is_accepted_without_a_fencing_token(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    path, m0 = repo
    opened = http.post("/v1/claims", json=seed_requests.open_claim(m0[:7])).json()["claim"]
    head = commit(path, {"src/settlement/retry.py": "RETRIES = 3\n"}, parent=m0, when=10)
    r = http.post(
        f"/v1/claims/{opened['id']}/complete",
        json=seed_requests.complete(opened["revision"], m0, head),
    )
    assert r.status_code == 200, r.text
    claim = r.json()["claim"]
    assert claim["status"] in ("integrated", "completed")
    assert git(path, "rev-parse", "refs/heads/main") == head


def test_every_example_request_of_the_design_document_is_accepted_verbatim(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    """One walk through the design's requests, each posted as the design writes it
    (only ids, revisions and commits filled in): the claim with its append-only memory
    impact, renew, objective and scope change, suspend and resume, completion, a takeover
    of an abandoned claim, a memory document, an agent and a readiness question."""
    path, m0 = repo
    seed = seed_requests.open_claim(m0[:7])
    assert {"path": "memory/current-risks.md", "mode": "append_only"} in seed["memoryImpacts"]
    r = http.post("/v1/claims", json=seed)
    assert r.status_code == 201, r.text
    claim = r.json()["claim"]
    assert {"path": "memory/current-risks.md", "mode": "append_only", "sections": []} in claim[
        "memoryImpacts"
    ]
    cid = claim["id"]

    def post(url: str, body: dict[str, object], status: int = 200) -> dict[str, object]:
        r = http.post(url, json=body)
        assert r.status_code == status, (url, r.text)
        return dict(r.json())

    def revision() -> int:
        return int(http.get(f"/v1/claims/{cid}").json()["claim"]["revision"])

    lease = http.get(f"/v1/claims/{cid}").json()["claim"]["lease"]["revision"]
    post(f"/v1/claims/{cid}/renew", seed_requests.renew(lease, revision()))
    post(f"/v1/claims/{cid}/objective", seed_requests.objective_change(revision()))
    post(f"/v1/claims/{cid}/scope-change", seed_requests.scope_change(revision()))
    post(f"/v1/claims/{cid}/suspend", seed_requests.status_change(revision()))
    post(f"/v1/claims/{cid}/resume", seed_requests.status_change(revision()))
    head = commit(path, {"src/settlement/retry.py": "RETRIES = 3\n"}, parent=m0, when=10)
    done = post(f"/v1/claims/{cid}/complete", seed_requests.complete(revision(), m0, head))
    assert done["claim"]["status"] in ("integrated", "completed")  # type: ignore[index]

    other = {**seed_requests.open_claim(head[:7]), "memoryImpacts": []}
    prev = post("/v1/claims", other, 201)["claim"]
    prev_id = prev["id"]  # type: ignore[index]
    post(f"/v1/claims/{prev_id}/abandon", {"expectedClaimRevision": prev["revision"]})  # type: ignore[index]
    pred_rev = http.get(f"/v1/claims/{prev_id}").json()["claim"]["revision"]
    taken = post(f"/v1/claims/{prev_id}/takeover", seed_requests.takeover(prev_id, pred_rev), 201)
    # the predecessor declared contract changes: the takeover waits for an approval
    assert taken["claim"]["status"] == "blocked"  # type: ignore[index]

    post("/v1/memory/documents", {"repo": "demo", "path": "LOG.md", "class": "append_only"}, 201)
    post("/v1/agents", seed_requests.agent(), 201)
    ready = post("/v1/readiness", {"sessionId": "sess-77", "paths": ["src/settlement/retry.py"]})
    assert ready["readiness"] in ("ready", "caution")
