"""The memory endpoints over real HTTP (uvicorn on loopback, SQLite store, a real git repo)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.conftest import running
from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import claim_body, counting_ids

AGENTS = (
    b"# AGENTS\n\nRead me first.\n\n## Build\n\nmake\n\n## Live claims\n\n"
    b"<!-- detente:begin generated claims -->\n<!-- detente:end generated claims -->\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "AGENTS.md").write_bytes(AGENTS)
    (root / "LOG.md").write_bytes(b"")
    return root


@pytest.fixture
def http(tmp_path: Path, repo: Path, clock: FakeClock) -> Iterator[httpx.Client]:
    store = SqliteStore(tmp_path / "detente.db")
    service = Service(store, clock, [RepoConfig("demo", repo)], ids=counting_ids())
    with running(service) as base, httpx.Client(base_url=base, timeout=30) as client:
        yield client
    store.close()


def open_claim(http: httpx.Client, agent: str, *sections: str) -> dict[str, Any]:
    impacts = [{"path": "AGENTS.md", "sections": list(sections)}]
    r = http.post("/v1/claims", json=claim_body(agent=agent, memoryImpacts=impacts))
    assert r.status_code == 201, r.text
    claim: dict[str, Any] = r.json()["claim"]
    return claim


def register(http: httpx.Client, path: str, doc_class: str) -> dict[str, Any]:
    r = http.post("/v1/memory/documents", json={"repo": "demo", "path": path, "class": doc_class})
    assert r.status_code == 201, r.text
    doc: dict[str, Any] = r.json()["document"]
    return doc


def patch_body(doc: dict[str, Any], claim: dict[str, Any], key: str, body: str) -> dict[str, Any]:
    section = next(s for s in doc["sections"] if s["key"] == key)
    return {
        "repo": "demo",
        "path": doc["path"],
        "sectionKey": key,
        "expectedSectionRevision": section["revision"],
        "expectedFileHash": doc["fileHash"],
        "claimId": claim["id"],
        "fencingToken": claim["fencingToken"],
        "patch": {"body": body},
    }


def test_a_registered_document_lists_its_sections_in_the_api_shape(http: httpx.Client) -> None:
    doc = register(http, "AGENTS.md", "section_owned")
    claim = open_claim(http, "alice", "build")

    r = http.get("/v1/memory/documents", params={"repo": "demo"})

    assert r.status_code == 200
    [listed] = r.json()["documents"]
    assert {"repo", "path", "class", "fileHash", "revision", "sections"} <= set(listed)
    assert (listed["repo"], listed["path"], listed["class"]) == (
        "demo",
        "AGENTS.md",
        "section_owned",
    )
    assert [s["key"] for s in listed["sections"]] == ["agents", "build", "live-claims"]
    build = listed["sections"][1]
    assert {"key", "title", "revision", "hash", "ownerClaimId"} <= set(build)
    assert (build["title"], build["revision"], build["ownerClaimId"]) == ("Build", 1, claim["id"])
    assert listed["fileHash"] == doc["fileHash"] and listed["onDisk"]["inSync"] is True
    again = http.post(
        "/v1/memory/documents", json={"repo": "demo", "path": "AGENTS.md", "class": "private"}
    )
    assert again.status_code == 409 and again.json()["code"] == "revision_conflict"


def test_six_racing_patches_over_http_one_200_and_five_409s(http: httpx.Client, repo: Path) -> None:
    doc = register(http, "AGENTS.md", "section_owned")
    claim = open_claim(http, "alice", "build")
    barrier = threading.Barrier(6, timeout=10)
    responses: list[httpx.Response | None] = [None] * 6

    def send(i: int) -> None:
        barrier.wait()
        responses[i] = http.post(
            "/v1/memory/sections/patch", json=patch_body(doc, claim, "build", f"\nwriter {i}\n\n")
        )

    threads = [threading.Thread(target=send, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    codes = sorted(r.status_code for r in responses if r is not None)

    assert codes == [200, 409, 409, 409, 409, 409]
    [winner] = [r for r in responses if r is not None and r.status_code == 200]
    assert winner.json()["section"]["revision"] == 2
    for loser in (r for r in responses if r is not None and r.status_code == 409):
        problem = loser.json()
        assert loser.headers["content-type"].startswith("application/problem+json")
        assert problem["code"] == "revision_conflict" and problem["actual"] == 2
        assert problem["current"]["path"] == "AGENTS.md"
    i = responses.index(winner)
    # Racing writers: main's checkout follows in the background; a read of the documents
    # reports the checkouts once they followed.
    http.get("/v1/memory/documents", params={"repo": "demo"}).raise_for_status()
    assert (repo / "AGENTS.md").read_bytes() == AGENTS.replace(
        b"\nmake\n\n", f"\nwriter {i}\n\n".encode()
    )


def test_an_older_fencing_token_is_409_stale_fencing_token_and_writes_nothing(
    http: httpx.Client, repo: Path
) -> None:
    doc = register(http, "AGENTS.md", "section_owned")
    claim = open_claim(http, "alice", "build")
    body = patch_body(doc, claim, "build", "\nx\n")
    body["fencingToken"] = claim["fencingToken"] - 1

    r = http.post("/v1/memory/sections/patch", json=body)

    assert r.status_code == 409 and r.json()["code"] == "stale_fencing_token"
    assert (repo / "AGENTS.md").read_bytes() == AGENTS


def test_a_patch_with_both_body_and_diff_is_a_422(http: httpx.Client) -> None:
    doc = register(http, "AGENTS.md", "section_owned")
    claim = open_claim(http, "alice", "build")
    body = patch_body(doc, claim, "build", "x")
    body["patch"]["diff"] = "@@ -1 +1 @@\n-a\n+b\n"

    r = http.post("/v1/memory/sections/patch", json=body)

    assert r.status_code == 422 and r.json()["code"] == "validation_error"


def test_render_reconcile_and_append_round_trip(http: httpx.Client, repo: Path) -> None:
    register(http, "AGENTS.md", "generated")
    register(http, "LOG.md", "append_only")
    claim = open_claim(http, "alice", "build")

    r = http.post("/v1/memory/render", json={"repo": "demo"})
    assert r.status_code == 200
    [result] = r.json()["results"]
    assert result["rendered"] == ["claims"]
    assert f"`{claim['id']}` alice (active)".encode() in (repo / "AGENTS.md").read_bytes()

    (repo / "AGENTS.md").write_bytes(
        (repo / "AGENTS.md").read_bytes().replace(b"(active)", b"(busy)")
    )
    [edited] = http.post("/v1/memory/render", json={"repo": "demo", "path": "AGENTS.md"}).json()[
        "results"
    ]
    [rec] = edited["reconciliations"]
    r = http.post(
        "/v1/memory/reconcile",
        json={"repo": "demo", "path": "AGENTS.md", "decision": "upstream", "reconciliationId": rec},
    )
    assert r.status_code == 200
    assert r.json()["document"]["reconciliations"][0]["userContent"].count("(busy)") == 1
    assert b"(busy)" not in (repo / "AGENTS.md").read_bytes()

    entry = {
        "repo": "demo",
        "path": "LOG.md",
        "claimId": claim["id"],
        "fencingToken": claim["fencingToken"],
        "entry": "- decided: use ninja",
    }
    r = http.post("/v1/memory/append", json=entry)
    assert r.status_code == 200 and r.json()["entry"] == {"offset": 0, "length": 21}
    assert (repo / "LOG.md").read_bytes() == b"- decided: use ninja\n"


def test_bad_markers_are_a_422_naming_the_line_and_the_memory_routes_are_in_openapi(
    http: httpx.Client, repo: Path
) -> None:
    (repo / "BAD.md").write_bytes(b"x\n<!-- detente:begin generated claims -->\n")

    r = http.post(
        "/v1/memory/documents", json={"repo": "demo", "path": "BAD.md", "class": "generated"}
    )

    assert r.status_code == 422 and r.json()["line"] == 2
    paths = http.get("/openapi.json").json()["paths"]
    for route in (
        "/v1/memory/documents",
        "/v1/memory/sections/patch",
        "/v1/memory/append",
        "/v1/memory/render",
        "/v1/memory/reconcile",
        "/v1/memory/documents/write",
    ):
        assert route in paths


@pytest.mark.parametrize("bad", ["zz", "not a hash at all!", "0" * 63, "A" * 64])
def test_a_patch_naming_a_file_hash_that_is_no_sha256_is_refused_and_writes_nothing(
    http: httpx.Client, repo: Path, bad: str
) -> None:
    doc = register(http, "AGENTS.md", "section_owned")
    claim = open_claim(http, "alice", "build")
    body = patch_body(doc, claim, "build", "\nninja\n\n")

    r = http.post("/v1/memory/sections/patch", json={**body, "expectedFileHash": bad})

    assert r.status_code == 422, r.text
    assert r.json()["code"] == "validation_error" and "expectedFileHash" in r.text
    after = http.get("/v1/memory/documents", params={"repo": "demo"}).json()["documents"][0]
    assert after["revision"] == doc["revision"] and after["fileHash"] == doc["fileHash"]
