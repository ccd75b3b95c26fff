"""``POST /v1/claims/{id}/objective`` over HTTP on a real server."""

from __future__ import annotations

from pathlib import Path

import httpx

from api.conftest import running
from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from semantic_support import require_model
from source_repo import make_source_repo
from support import counting_ids


def _open(http: httpx.Client, head: str, path: str, objective: str) -> dict[str, object]:
    body = {
        "repo": "demo",
        "objective": objective,
        "baseCommit": head,
        "paths": [path],
        "leaseTtlSeconds": 600,
        "agent": {"id": path, "name": path},
    }
    opened = http.post("/v1/claims", json=body)
    assert opened.status_code == 201, opened.text
    claim: dict[str, object] = opened.json()["claim"]
    return claim


def test_an_objective_change_answers_the_claim_with_semantic_advice_and_refuses_bad_input(
    tmp_path: Path,
) -> None:
    require_model()
    root = tmp_path / "repo"
    head = make_source_repo(root)
    service = Service(
        SqliteStore(tmp_path / "d.db"),
        FakeClock(),
        [RepoConfig("demo", path=root)],
        ids=counting_ids(),
    )
    with running(service) as base, httpx.Client(base_url=base) as http:
        other = _open(http, head, "src/b.py", "Translate the installation guide into German")
        mine = _open(http, head, "src/a.py", "Make the HTTP client retry failed requests")
        url = f"/v1/claims/{mine['id']}/objective"
        new = "Write the German translation of the installation documentation"

        changed = http.post(url, json={"expectedClaimRevision": mine["revision"], "objective": new})
        assert changed.status_code == 200, changed.text
        assert changed.json()["claim"]["objective"] == new
        assert [o["claimId"] for o in changed.json()["semanticOverlaps"]] == [other["id"]]

        stale = http.post(url, json={"expectedClaimRevision": mine["revision"], "objective": "x"})
        assert stale.status_code == 409
        assert stale.json()["code"] == "revision_conflict"
        revision = changed.json()["claim"]["revision"]
        blank = http.post(url, json={"expectedClaimRevision": revision, "objective": " "})
        assert blank.status_code == 422
        assert blank.json()["code"] == "validation_error"
        assert http.get(f"/v1/claims/{mine['id']}").json()["claim"]["objective"] == new
        assert (
            "post" in http.get("/openapi.json").json()["paths"]["/v1/claims/{claim_id}/objective"]
        )
