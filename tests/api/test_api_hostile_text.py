"""Text that would print differently from what is stored is refused at every field that
takes it: section keys, globbed symbol files, invisible and bidirectional characters.
Each refusal is a 422 ``validation_error`` naming the field, and appends nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.conftest import running
from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from detente.vcs import resolve_commit
from gates_support import hermetic, make_repo

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


def _seed(m0: str, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "repo": "demo",
        "objective": "probe",
        "baseCommit": m0,
        "paths": ["a.py"],
        "leaseTtlSeconds": 60,
        "agent": {"id": "alice", "name": "alice"},
    }
    body.update(fields)
    return body


def _event_count(http: httpx.Client) -> int:
    return len(http.get("/v1/events", params={"limit": 1000}).json()["events"])


def _refused(http: httpx.Client, url: str, body: dict[str, Any], field: str) -> None:
    before = _event_count(http)
    # json.dumps escapes non-ASCII (a lone surrogate too, which UTF-8 cannot carry raw)
    r = http.post(url, content=json.dumps(body), headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    problem = r.json()
    assert problem["code"] == "validation_error"
    assert problem["field"] == field, problem
    assert _event_count(http) == before


def _impact(*sections: str, mode: str = "section") -> list[dict[str, Any]]:
    return [{"path": "AGENTS.md", "mode": mode, "sections": list(sections)}]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"memoryImpacts": _impact("\u0000")}, "memoryImpacts[0].sections[0]"),
        ({"memoryImpacts": _impact("build", "a\x1b[31m")}, "memoryImpacts[0].sections[1]"),
        ({"memoryImpacts": _impact("two words")}, "memoryImpacts[0].sections[0]"),
        ({"memoryImpacts": _impact("")}, "memoryImpacts[0].sections[0]"),
        ({"memoryImpacts": _impact("x" * 201)}, "memoryImpacts[0].sections[0]"),
        ({"memoryImpacts": _impact("b\u200bc")}, "memoryImpacts[0].sections[0]"),
        ({"memoryImpacts": _impact(mode="\u0000")}, "memoryImpacts[0].mode"),
        ({"symbols": ["lib/**/*.py::A"]}, "symbols[0]"),
        ({"symbols": ["a.py::B", "src/?.py::A"]}, "symbols[1]"),
        ({"objective": "\u200b\u200b"}, "objective"),
        ({"objective": "\ufeff \u2060"}, "objective"),
        ({"objective": "fix \u202e\u2066 login"}, "objective"),
        ({"agent": {"id": "alice\u202egnp.exe", "name": "a"}}, "agent.id"),
        ({"agent": {"id": "a", "name": "al\u200bice"}}, "agent.name"),
        ({"agent": {"id": "a", "name": "a", "sessionId": "s\u202e1"}}, "agent.sessionId"),
        ({"symbols": ["a.py::A\u202eB"]}, "symbols[0]"),
        ({"paths": ["\u202eevil.py"]}, "paths[0]"),
        ({"paths": ["a.py", "web/src/api/client\u200b.ts"]}, "paths[1]"),
        ({"modules": ["pkg\u200d.sub"]}, "modules[0]"),
        ({"expectedContractChanges": ["POST /v1/x\u200b"]}, "expectedContractChanges[0]"),
        (
            {"expectedContractChanges": [{"type": "http", "area": "a\u2066b"}]},
            "expectedContractChanges[0].area",
        ),
    ],
)
def test_a_claim_seed_with_text_that_prints_differently_is_refused_naming_the_field(
    http: httpx.Client, repo: tuple[Path, str], fields: dict[str, Any], field: str
) -> None:
    _refused(http, "/v1/claims", _seed(repo[1], **fields), field)


def test_visible_unicode_names_and_emoji_sequences_stay_accepted(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # joined by zero-width joiners
    body = _seed(
        repo[1],
        objective=f"fix the {family} icon",
        symbols=["app/[id]/page.tsx::Page"],
        memoryImpacts=_impact("café-notes", "build.v2", "_private"),
    )
    r = http.post("/v1/claims", json=body)
    assert r.status_code == 201, r.text
    claim = r.json()["claim"]
    assert claim["objective"] == f"fix the {family} icon"
    assert claim["symbols"] == ["app/[id]/page.tsx::Page"]
    assert claim["memoryImpacts"][0]["sections"] == ["café-notes", "build.v2", "_private"]


def _open(http: httpx.Client, m0: str) -> dict[str, Any]:
    r = http.post("/v1/claims", json=_seed(m0))
    assert r.status_code == 201, r.text
    claim: dict[str, Any] = r.json()["claim"]
    return claim


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"addSymbols": ["lib/**/*.py::A"]}, "addSymbols[0]"),
        ({"addPaths": ["b\u200b.py"]}, "addPaths[0]"),
        ({"addModules": ["x\u202e"]}, "addModules[0]"),
        ({"addPaths": ["b.py"], "reason": "because \u202e"}, "reason"),
    ],
)
def test_a_scope_change_with_the_same_text_is_refused_the_same_way(
    http: httpx.Client, repo: tuple[Path, str], fields: dict[str, Any], field: str
) -> None:
    claim = _open(http, repo[1])
    body = {"expectedClaimRevision": claim["revision"], **fields}
    _refused(http, f"/v1/claims/{claim['id']}/scope-change", body, field)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"objective": "\u200b"}, "objective"),
        ({"objective": "new \u2067 text"}, "objective"),
        ({"objective": "new text", "reason": "\u202d"}, "reason"),
    ],
)
def test_an_objective_change_with_invisible_or_bidi_text_is_refused(
    http: httpx.Client, repo: tuple[Path, str], fields: dict[str, Any], field: str
) -> None:
    claim = _open(http, repo[1])
    body = {"expectedClaimRevision": claim["revision"], **fields}
    _refused(http, f"/v1/claims/{claim['id']}/objective", body, field)


def test_an_agent_registration_with_a_reversed_name_is_refused(http: httpx.Client) -> None:
    body = {
        "sessionId": "s1",
        "agentName": "alice\u202egnp.exe",
        "intent": "x",
        "ttlSeconds": 60,
        "repo": "demo",
    }
    _refused(http, "/v1/agents", body, "agentName")


def test_a_memory_patch_of_a_malformed_section_key_is_refused_naming_it(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    claim = _open(http, repo[1])
    body = {
        "repo": "demo",
        "path": "docs/guide.md",
        "sectionKey": "guide\u0000",
        "expectedSectionRevision": 0,
        "expectedFileHash": "0" * 64,
        "claimId": claim["id"],
        "fencingToken": claim["fencingToken"],
        "patch": {"body": "x\n"},
    }
    _refused(http, "/v1/memory/sections/patch", body, "sectionKey")


@pytest.mark.parametrize("who", ["human\u202e1", "\u200b", "ops\x1b[2J"])
def test_a_meeting_resolved_by_a_name_that_prints_differently_is_refused(
    http: httpx.Client, repo: tuple[Path, str], who: str
) -> None:
    first = _open(http, repo[1])
    r = http.post("/v1/claims", json=_seed(repo[1], agent={"id": "bob", "name": "bob"}))
    assert r.status_code == 201 and r.json()["claim"]["status"] == "negotiating", r.text
    meeting = r.json()["meeting"]
    body = {
        "expectedMeetingRevision": meeting["revision"],
        "resolution": {"type": "serialize", "first": first["id"], "then": r.json()["claim"]["id"]},
        "resolvedBy": who,
    }
    _refused(http, f"/v1/meetings/{meeting['id']}/resolve", body, "resolvedBy")
    assert http.get(f"/v1/meetings/{meeting['id']}").json()["meeting"]["status"] == "open"


def test_a_lone_surrogate_in_an_objective_change_or_an_agents_branch_is_a_422(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    claim = _open(http, repo[1])
    body = {"expectedClaimRevision": claim["revision"], "objective": "x\ud800"}
    _refused(http, f"/v1/claims/{claim['id']}/objective", body, "objective")
    agent = {"sessionId": "s1", "agentName": "a", "intent": "", "branch": "\ud800"}
    _refused(http, "/v1/agents", {**agent, "ttlSeconds": 60, "repo": "demo"}, "branch")


def test_a_split_assigning_a_malformed_section_key_is_refused(
    http: httpx.Client, repo: tuple[Path, str]
) -> None:
    impact = _impact("build")
    first = http.post("/v1/claims", json=_seed(repo[1], paths=[], memoryImpacts=impact))
    assert first.status_code == 201, first.text
    bob = {"id": "bob", "name": "bob"}
    second = http.post("/v1/claims", json=_seed(repo[1], paths=[], memoryImpacts=impact, agent=bob))
    assert second.status_code == 201 and second.json()["meeting"], second.text
    meeting = second.json()["meeting"]
    body = {
        "expectedMeetingRevision": meeting["revision"],
        "resolution": {
            "type": "split_ownership",
            "assignments": [
                {"claimId": second.json()["claim"]["id"], "targets": ["AGENTS.md#build\u0000"]},
                {"claimId": first.json()["claim"]["id"], "targets": []},
            ],
        },
        "resolvedBy": "human1",
    }
    before = _event_count(http)
    r = http.post(f"/v1/meetings/{meeting['id']}/resolve", json=body)
    assert r.status_code == 422 and r.json()["code"] == "validation_error", r.text
    assert "section key" in r.json()["detail"]
    assert r.json()["field"].startswith("resolution.assignments[0]")
    assert _event_count(http) == before
