"""The index tools over MCP (the SDK's in-process client) on a real source repository."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import call, fail

from detente.client.inprocess import InProcessClient
from detente.clock import FakeClock
from detente.mcp_server.server import build_server
from detente.runtime import build_service
from detente.service import Service
from mcp import Client

from source_repo import git, make_source_repo

pytestmark = pytest.mark.anyio


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "src-repo"
    make_source_repo(root)
    return root


@pytest.fixture
def service(source: Path) -> Iterator[Service]:
    svc = build_service([source], store_url="memory://", clock=FakeClock())
    yield svc
    svc.store.close()


async def test_symbols_touched_search_and_a_symbolic_reconcile(
    service: Service, source: Path
) -> None:
    tree = source.parent / "alice"
    git(source, "worktree", "add", "-q", "-b", "alice", str(tree), "HEAD")
    store = tree / "internal/storage/store.go"
    store.write_text(store.read_text().replace('return "", ErrNotFound', 'return "", nil'))
    client = Client(build_server(InProcessClient(service)))
    async with client:
        opened = await call(
            client,
            "claim_open",
            objective="Missing keys are not errors in the storage package",
            paths=["internal/storage/**"],
            branch="alice",
            worktree=str(tree),
        )
        claim_id = opened["claimId"]
        touched = await call(client, "symbols_touched", claim_id=claim_id)
        assert touched["symbols"] == ["internal/storage/store.go::Store.Get"]
        reconciled = await call(
            client,
            "reconcile_diff_intent",
            a={"claim_id": claim_id, "actual": True},
            b={"symbols": ["Store"], "change_kind": "rename"},
        )
        assert reconciled["overlap"] is True
        assert reconciled["shared"][0]["target"] == "internal/storage/store.go::Store.Get"
        found = await call(client, "search", query="storage keys")
        assert found["results"][0]["claimId"] == claim_id
        missing = await fail(client, "symbols_touched", claim_id="clm_nope")
        assert missing["code"] == "not_found"


async def test_reconcile_diff_intent_sees_the_containment_the_claim_protocol_sees(
    service: Service,
) -> None:
    retry = "src/settlement/retry.py"
    client = Client(build_server(InProcessClient(service)))
    async with client:
        for session, symbol in (
            ("s1", f"{retry}::RetryPolicy.give_up"),
            ("s2", f"{retry}::RetryPolicy"),
        ):
            await call(
                client, "register_agent_work", agent_name=session, intent="x", session_id=session
            )
            await call(
                client,
                "claim_open",
                objective=f"{session} edits",
                symbols=[symbol],
                session_id=session,
            )
        pairs = [
            ({"symbols": [f"{retry}::RetryPolicy"]}, {"symbols": ["RetryPolicy.backoff"]}),
            ({"symbols": ["RetryPolicy.backoff"]}, {"paths": [retry]}),
            ({"session_id": "s1"}, {"session_id": "s2"}),  # the two are in a meeting
            ({"session_id": "s1"}, {"paths": ["src/settlement/**"]}),
            ({"modules": ["settlement"]}, {"symbols": ["Ledger.post"]}),
        ]
        for a, b in pairs:
            answer = await call(client, "reconcile_diff_intent", a=a, b=b)
            assert answer["overlap"] is True, (a, b, answer)
            assert "both can proceed" not in answer["next"]
        apart = await call(
            client,
            "reconcile_diff_intent",
            a={"symbols": ["RetryPolicy.backoff"]},
            b={"session_id": "s1"},
        )
        assert apart["overlap"] is False  # two methods of one class


def test_name_containment_without_a_checkout_matches_the_protocols() -> None:
    from detente.domain.agents.advisory import Intent, reconcile

    cls = Intent.of("a", symbols=["x.py::C"])
    method = Intent.of("b", symbols=["x.py::C.m"])
    other = Intent.of("b", symbols=["x.py::D.m"])
    file = Intent.of("b", paths=["x.py"])
    tree = Intent.of("a", paths=["**"])

    assert [s.witness for s in reconcile(cls, method)] == ["x.py::C.m"]
    assert [s.witness for s in reconcile(method, file)] == ["x.py::C.m"]
    assert [s.witness for s in reconcile(tree, method)] == ["x.py::C.m"]
    assert reconcile(cls, other) == []
