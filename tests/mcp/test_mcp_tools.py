"""Tool and resource behaviour beyond the issue's cases, with the SDK's in-process client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import call, fail, git, register, resource
from starlette.testclient import TestClient

from api.conftest import running
from detente.client import connect
from detente.client.inprocess import InProcessClient
from detente.clock import FakeClock
from detente.domain.claims.model import Claim
from detente.domain.meetings.resolution_types import RESOLUTION_TYPES, resolution_from_wire
from detente.domain.memory import commands as mc
from detente.mcp_server.activity import Activity
from detente.mcp_server.resources import ACTIVITY_URI, CLAIMS_URI
from detente.mcp_server.server import build_server
from detente.runtime import build_service
from detente.server import build_app
from detente.service import Service
from mcp import Client

pytestmark = pytest.mark.anyio


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(repo: Path, clock: FakeClock) -> Iterator[Service]:
    svc = build_service([repo], store_url="memory://", clock=clock)
    yield svc
    svc.store.close()


@pytest.fixture(params=["inprocess", "http"])
def client(
    request: pytest.FixtureRequest, service: Service, repo: Path, clock: FakeClock
) -> Iterator[Client]:
    """The MCP server over either client implementation: the service in-process, or a
    real server on it reached over HTTP (activity stamped by the same fake clock)."""
    activity = Activity(per_session=3)
    if request.param == "inprocess":
        yield Client(build_server(InProcessClient(service), activity=activity))
        return
    with running(service) as base, connect(base, repo, local=False) as http:
        yield Client(build_server(http, clock=clock, activity=activity))


async def test_every_tool_of_the_issue_is_listed_with_a_description(client: Client) -> None:
    async with client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert set(tools) == {
        "register_agent_work",
        "list_active_agents",
        "claim_files",
        "release_files",
        "verify_change_readiness",
        "reconcile_diff_intent",
        "claim_open",
        "claim_status",
        "claim_check",
        "claim_renew",
        "claim_scope_add",
        "claim_scope_remove",
        "claim_complete",
        "claim_abandon",
        "meeting_list",
        "meeting_resolve",
        "meeting_open",
        "memory_patch_section",
        "memory_sections",
        "events_since",
        "symbols_touched",
        "search",
        "claim_objective",
        "resource_acquire",
        "resource_renew",
        "resource_release",
        "resource_status",
        "resource_next_number",
        "claim_merge_check",
        "edit_check",
    }
    assert all(len(t.description or "") > 80 for t in tools.values())
    assert "caution" in (tools["verify_change_readiness"].description or "")
    assert "revision_conflict" in (tools["claim_renew"].description or "")
    assert resources == {CLAIMS_URI, ACTIVITY_URI}


async def test_release_files_with_a_glob_narrows_a_claim_and_keeps_the_rest(
    client: Client,
) -> None:
    async with client:
        await register(client, "s1", "s2")
        claimed = await call(
            client,
            "claim_files",
            session_id="s1",
            paths=["docs/a.md", "docs/b.md", "src/x.py"],
            reason="edit",
            agent_name="alice",
        )
        out = await call(client, "release_files", session_id="s1", paths=["docs/*.md"])
        assert out["narrowed"] == [claimed["claimId"]] and "released" not in out
        assert out["stillHeld"] == ["src/x.py"]
        docs = await call(client, "verify_change_readiness", session_id="s2", paths=["docs/**"])
        src = await call(client, "verify_change_readiness", session_id="s2", paths=["src/x.py"])
        assert docs["readiness"] == "ready" and src["readiness"] == "caution"


async def test_release_files_with_a_glob_covering_a_claimed_glob_releases_it(
    client: Client,
) -> None:
    async with client:
        await register(client, "s1", "s2")
        claimed = await call(
            client,
            "claim_files",
            session_id="s1",
            paths=["lib/gen/h*.py", "lib/gen/sub/**", "lib/other/*.py"],
            reason="edit",
        )
        out = await call(client, "release_files", session_id="s1", paths=["lib/gen/**"])
        assert out["narrowed"] == [claimed["claimId"]]
        assert out["stillHeld"] == ["lib/other/*.py"]
        wider = await call(client, "release_files", session_id="s1", paths=["lib/*/*.py"])
        assert wider["released"] == [claimed["claimId"]]
        gen = await call(client, "verify_change_readiness", session_id="s2", paths=["lib/**"])
        assert gen["readiness"] == "ready"


async def test_release_files_with_a_narrower_glob_keeps_the_wider_claim(client: Client) -> None:
    async with client:
        await register(client, "s1")
        await call(client, "claim_files", session_id="s1", paths=["lib/**"], reason="r")
        out = await call(client, "release_files", session_id="s1", paths=["lib/gen/*.py"])
        assert out["next"].startswith("nothing of yours matched these paths")
        assert "release takes whole claimed patterns, and lib/** covers" in out["next"]
        assert out["stillHeld"] == ["lib/**"]


async def test_release_files_never_touches_another_sessions_claims(client: Client) -> None:
    async with client:
        await register(client, "s1", "s2")
        await call(client, "claim_files", session_id="s1", paths=["a.py"], reason="r")
        out = await call(client, "release_files", session_id="s2", paths=["a.py"])
        assert out["next"] == "nothing of yours matched these paths"
        still = await call(client, "verify_change_readiness", session_id="s2", paths=["a.py"])
        assert still["readiness"] == "caution"


async def test_claiming_the_same_paths_again_replaces_the_older_claim(client: Client) -> None:
    async with client:
        await register(client, "s1")
        first = await call(client, "claim_files", session_id="s1", paths=["a.py"], reason="r")
        second = await call(
            client, "claim_files", session_id="s1", paths=["a.py", "b.py"], reason="r2"
        )
        assert second["replaced"] == [first["claimId"]]
        live = await resource(client, CLAIMS_URI)
        assert [c["claimId"] for c in live["claims"]] == [second["claimId"]]
        assert live["claims"][0]["reason"] == "r2" and live["claims"][0]["advisory"] is True


async def test_claim_files_itself_reports_caution_with_the_holder(client: Client) -> None:
    async with client:
        await register(client, "s1", "s2")
        await call(client, "register_agent_work", agent_name="alice", intent="i", session_id="s1")
        mine = await call(client, "claim_files", session_id="s1", paths=["src/**"], reason="api")
        theirs = await call(
            client,
            "claim_files",
            session_id="s2",
            paths=["src/app.py"],
            reason="fix",
            agent_name="bob",
        )
        assert theirs["readiness"] == "caution"
        [holder] = theirs["overlappingClaims"]
        assert holder["claimId"] == mine["claimId"] and holder["agentName"] == "alice"
        assert holder["paths"] == ["src/**"] and holder["witness"] == "src/app.py"


async def test_reconcile_reports_shared_paths_with_a_witness_and_disjoint_intents_as_clear(
    client: Client,
) -> None:
    async with client:
        await register(client, "s1")
        await call(client, "claim_files", session_id="s1", paths=["src/api/**"], reason="api")
        shared = await call(
            client,
            "reconcile_diff_intent",
            a={"session_id": "s1"},
            b={"paths": ["src/api/routes.py", "docs/x.md"], "change_kind": "rename"},
        )
        assert shared["overlap"] is True
        assert shared["shared"] == [
            {
                "kind": "path",
                "a": "src/api/**",
                "b": "src/api/routes.py",
                "witness": "src/api/routes.py",
            }
        ]
        assert shared["b"]["changeKind"] == "rename"
        clear = await call(
            client,
            "reconcile_diff_intent",
            a={"paths": ["src/*.py"], "symbols": ["app.main"]},
            b={"paths": ["src/*/x.py"], "symbols": ["app.other"]},
        )
        assert clear["overlap"] is False and "shared" not in clear
        await register(client, "idle")
        empty = await fail(client, "reconcile_diff_intent", a={"session_id": "idle"}, b={})
        assert empty["code"] == "validation_error" and empty["field"] == "a"
        ghost = await fail(client, "reconcile_diff_intent", a={"session_id": "nobody"}, b={})
        assert ghost["code"] == "not_found" and ghost["field"] == "a.session_id"


async def test_a_departed_session_is_listed_only_while_it_has_unexpired_claims(
    client: Client, clock: FakeClock
) -> None:
    async with client:
        for session in ("s1", "s2", "s3"):
            await call(
                client,
                "register_agent_work",
                agent_name=session,
                intent="x",
                session_id=session,
                ttl_secs=10,
            )
        live = await call(
            client, "claim_open", objective="o", paths=["a.py"], session_id="s1", ttl_secs=1000
        )
        await call(client, "claim_open", objective="o", paths=["b.py"], session_id="s3", ttl_secs=5)
        clock.advance(11)  # every session departed; s3's claim expired (frozen), s1's runs
        listed = (await call(client, "list_active_agents"))["agents"]
        assert [(a["sessionId"], a["status"]) for a in listed] == [("s1", "departed")]
        assert listed[0]["claimIds"] == [live["claimId"]]
        renewed = await call(
            client, "register_agent_work", agent_name="b", intent="z", session_id="s2"
        )
        assert renewed["status"] == "active"
        assert "activeAgents" not in renewed  # the others departed: none is active


async def test_activity_shows_each_active_sessions_last_calls_with_their_scope(
    client: Client, clock: FakeClock
) -> None:
    async with client:
        await call(
            client, "register_agent_work", agent_name="a", intent="x", session_id="s1", ttl_secs=10
        )
        for name in ("a.py", "b.py", "c.py"):
            await call(client, "verify_change_readiness", session_id="s1", paths=[name])
        await fail(client, "verify_change_readiness", session_id="s1", paths=["../up"])
        await fail(client, "verify_change_readiness", session_id="s2", paths=["z.py"])
        activity = (await resource(client, ACTIVITY_URI))["sessions"]
        assert [s["sessionId"] for s in activity] == ["s2", "s1"]
        s2, s1 = activity
        assert s2["status"] == "unregistered"  # a ghost's refused calls are still shown
        assert [c["outcome"] for c in s2["calls"]] == ["not_found"]
        assert [c["outcome"] for c in s1["calls"]][-1] == "validation_error"
        assert [c["scope"] for c in s1["calls"]] == [["b.py"], ["c.py"], ["../up"]]  # last 3
        clock.advance(11)
        after = (await resource(client, ACTIVITY_URI))["sessions"]
        assert [s["sessionId"] for s in after] == ["s2"]  # s1 departed


async def test_a_bad_path_is_a_validation_error_naming_the_field(client: Client) -> None:
    async with client:
        await register(client, "s1")
        error = await fail(
            client, "claim_files", session_id="s1", paths=["ok.py", "/etc/passwd"], reason="r"
        )
        assert error["code"] == "validation_error" and error["field"] == "paths[1]"
        assert "next" in error
        bad_session = await fail(client, "verify_change_readiness", session_id="a b", paths=["x"])
        assert bad_session["code"] == "validation_error"
        assert bad_session["field"] == "session_id"


async def test_a_completion_without_base_ref_is_refused_and_the_claim_stays_active(
    client: Client,
) -> None:
    async with client:
        opened = await call(client, "claim_open", objective="o", paths=["a.py"])
        refused = await fail(
            client,
            "claim_complete",
            claim_id=opened["claimId"],
            expected_claim_revision=opened["revision"],
            fencing_token=opened["fencingToken"],
            evidence={"headCommit": "abc"},
        )
        assert refused["code"] == "validation_error" and "next" in refused
        status = await call(client, "claim_status", claim_id=opened["claimId"])
        assert status["status"] == "active" and status["revision"] == opened["revision"]


async def test_claim_check_gives_the_answer_claim_check_gives(client: Client) -> None:
    async with client:
        a = await call(client, "claim_open", objective="a", paths=["src/**"])
        b = await call(client, "claim_open", objective="b", paths=["src/app.py"])
        assert b["status"] == "negotiating"
        allowed = await call(client, "claim_check", claim_id=a["claimId"], paths=["src/x.py"])
        assert allowed["ok"] is True and allowed["paths"] == ["src/x.py"]
        waiting = await fail(client, "claim_check", claim_id=b["claimId"], paths=["src/app.py"])
        assert waiting["code"] == "overlap_blocking"
        outside = await fail(client, "claim_check", claim_id=a["claimId"], paths=["README.md"])
        assert outside["code"] == "out_of_scope"


async def test_claim_complete_with_evidence_fast_forwards_the_base_ref(
    client: Client, repo: Path
) -> None:
    base = git(repo, "rev-parse", "main")
    async with client:
        opened = await call(client, "claim_open", objective="bump", paths=["src/app.py"])
        git(repo, "checkout", "-q", "-b", "bump")
        (repo / "src" / "app.py").write_text("a = 2\n")
        git(repo, "commit", "-q", "-am", "bump a")
        head = git(repo, "rev-parse", "HEAD")
        done = await call(
            client,
            "claim_complete",
            claim_id=opened["claimId"],
            expected_claim_revision=opened["revision"],
            fencing_token=opened["fencingToken"],
            base_ref="refs/heads/main",
            base_oid=base,
            evidence={
                "headCommit": head,
                "changedFiles": ["src/app.py"],
                "tests": [{"name": "pytest", "status": "passed", "exitCode": 0}],
            },
        )
        assert done["status"] in ("integrated", "completed")
    assert git(repo, "rev-parse", "main") == head


async def test_a_claimed_memory_section_is_patched_and_a_stale_patch_is_a_revision_conflict(
    client: Client, service: Service, repo: Path
) -> None:
    agents_md = repo / "AGENTS.md"
    agents_md.write_text("# Agents\n\n## Build\n\nmake\n\n## Test\n\npytest\n")
    service.memory.register_document(mc.Register(repo.name, "AGENTS.md", "section_owned"))
    async with client:
        opened = await call(client, "claim_open", objective="docs", memory=["AGENTS.md#build"])
        doc = await call(client, "memory_sections", path="AGENTS.md")
        build = next(s for s in doc["sections"] if s["key"] == "build")
        assert build["ownerClaimId"] == opened["claimId"]
        patch = {
            "path": "AGENTS.md",
            "section_key": "build",
            "claim_id": opened["claimId"],
            "fencing_token": opened["fencingToken"],
            "expected_file_hash": doc["fileHash"],
            "expected_section_revision": build["revision"],
        }
        patched = await call(client, "memory_patch_section", **patch, body="make all\n")
        assert patched["sectionRevision"] == build["revision"] + 1
        assert "make all" in agents_md.read_text() and "pytest" in agents_md.read_text()
        stale = await fail(client, "memory_patch_section", **patch, body="make twice\n")
        assert stale["code"] == "revision_conflict"
        assert "make twice" not in agents_md.read_text()


async def test_a_blocking_overlap_is_settled_through_meeting_resolve(client: Client) -> None:
    async with client:
        a = await call(client, "claim_open", objective="a", paths=["src/**"], agent_name="alice")
        b = await call(client, "claim_open", objective="b", paths=["src/app.py"], agent_name="bob")
        assert b["status"] == "negotiating" and b["overlaps"][0]["claimId"] == a["claimId"]
        [meeting] = (await call(client, "meeting_list"))["meetings"]
        assert meeting["meetingId"] == b["meetingId"]
        both = await fail(
            client,
            "meeting_resolve",
            meeting_id=meeting["meetingId"],
            expected_meeting_revision=meeting["revision"],
            claim_id=b["claimId"],
        )
        assert both["code"] == "validation_error"
        proposed = await call(
            client,
            "meeting_resolve",
            meeting_id=meeting["meetingId"],
            expected_meeting_revision=meeting["revision"],
            claim_id=b["claimId"],
            resolution={"type": "joint", "claimIds": [a["claimId"], b["claimId"]]},
        )
        assert proposed["status"] == "open"
        stale = await fail(
            client,
            "meeting_resolve",
            meeting_id=meeting["meetingId"],
            expected_meeting_revision=meeting["revision"],
            claim_id=a["claimId"],
            proposal_id=proposed["proposals"][0]["proposalId"],
        )
        assert stale["code"] == "revision_conflict"
        accepted = await call(
            client,
            "meeting_resolve",
            meeting_id=meeting["meetingId"],
            expected_meeting_revision=proposed["revision"],
            claim_id=a["claimId"],
            proposal_id=proposed["proposals"][0]["proposalId"],
        )
        assert accepted["status"] == "resolved"
        status = await call(client, "claim_status", claim_id=b["claimId"])
        assert status["status"] == "active"


async def test_a_malformed_resolution_over_mcp_is_a_validation_error_naming_its_field(
    client: Client,
) -> None:
    async with client:
        await call(client, "claim_open", objective="a", paths=["src/**"], agent_name="alice")
        b = await call(client, "claim_open", objective="b", paths=["src/app.py"], agent_name="bob")
        [meeting] = (await call(client, "meeting_list"))["meetings"]
        refused = await fail(
            client,
            "meeting_resolve",
            meeting_id=meeting["meetingId"],
            expected_meeting_revision=meeting["revision"],
            claim_id=b["claimId"],
            resolution={"type": "serialize", "first": b["claimId"]},
        )
        assert refused["code"] == "validation_error" and refused["field"] == "resolution.then"
        [after] = (await call(client, "meeting_list"))["meetings"]
        assert after["revision"] == meeting["revision"]


async def test_the_meeting_resolve_schema_spells_every_resolution_type(client: Client) -> None:
    async with client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = json.dumps(tools["meeting_resolve"].input_schema)
    for kind in RESOLUTION_TYPES:
        assert f'"const": "{kind}"' in schema, kind


async def test_events_since_pages_the_log_without_hashes(client: Client) -> None:
    async with client:
        await call(client, "register_agent_work", agent_name="a", intent="x", session_id="s1")
        await call(client, "claim_files", session_id="s1", paths=["a.py"], reason="r")
        first = await call(client, "events_since", since=0, limit=1)
        assert [e["type"] for e in first["events"]] == ["agent.registered"]
        assert set(first["events"][0]) == {"seq", "type", "subject", "at", "data"}
        rest = await call(client, "events_since", since=first["nextSince"])
        assert [e["type"] for e in rest["events"]] == ["claim.announced", "claim.activated"]


def test_the_mcp_endpoint_of_an_app_run_without_its_lifespan_answers_503(
    service: Service,
) -> None:
    app = build_app(service)
    http = TestClient(app, base_url="http://127.0.0.1")  # not entered: no lifespan
    r = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert r.status_code == 503 and r.json()["code"] == "server_unavailable"
    assert "/mcp" not in http.get("/openapi.json").json()["paths"]


async def test_readiness_and_the_claims_resource_read_a_splits_carve_outs(
    client: Client, service: Service
) -> None:
    from dataclasses import replace

    from detente.domain.meetings.commands import Resolve

    from support import seed

    def opened(*paths: str, agent: str) -> Claim:
        cmd = replace(seed(*paths, agent=agent, ttl=600), base_commit="main")
        return service.claims.open_claim(cmd).claim

    a = opened("docs/foo.md", agent="a")
    d = opened("README.md", "docs/**", agent="d")
    meeting = service.meetings.get_meeting(d.meeting_ids[0])
    split = {
        "type": "split_ownership",
        "assignments": [
            {"claimId": d.id, "targets": ["README.md"]},
            {"claimId": a.id, "targets": ["docs/foo.md"]},
        ],
    }
    service.meetings.resolve(
        Resolve(meeting.id, meeting.revision, resolution_from_wire(split), "lead")
    )
    async with client:
        await register(client, "s2")
        on_a = await call(client, "verify_change_readiness", session_id="s2", paths=["docs/foo.md"])
        on_b = await call(client, "verify_change_readiness", session_id="s2", paths=["docs/bar.md"])
        live = await resource(client, CLAIMS_URI)
    assert [c["claimId"] for c in on_a["overlappingClaims"]] == [a.id]
    assert [c["claimId"] for c in on_b["overlappingClaims"]] == [d.id]
    [shown] = [c for c in live["claims"] if c["claimId"] == d.id]
    assert shown["carveOuts"] == {"docs/**": ["docs/foo.md"]}
