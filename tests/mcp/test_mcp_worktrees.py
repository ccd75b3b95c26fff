"""``claim_open`` with ``create_worktree``: the service places the claim's worktree."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import call, fail, git

from api.conftest import running
from detente.client import connect
from detente.client.inprocess import InProcessClient
from detente.clock import FakeClock
from detente.mcp_server.server import build_server
from detente.runtime import build_service
from detente.service import Service
from mcp import Client

pytestmark = pytest.mark.anyio


@pytest.fixture
def service(repo: Path) -> Iterator[Service]:
    svc = build_service([repo], store_url="memory://", clock=FakeClock())
    yield svc
    svc.store.close()


@pytest.fixture(params=["inprocess", "http"])
def client(request: pytest.FixtureRequest, service: Service, repo: Path) -> Iterator[Client]:
    """The MCP server over the service in-process, or over a real server reached by HTTP."""
    if request.param == "inprocess":
        yield Client(build_server(InProcessClient(service)))
        return
    with running(service) as base, connect(base, repo, local=False) as http:
        yield Client(build_server(http))


async def test_claim_open_asking_for_a_worktree_gets_one_at_the_base_commit(
    client: Client, repo: Path
) -> None:
    head = git(repo, "rev-parse", "HEAD")

    async with client:
        opened = await call(
            client, "claim_open", objective="Retry payments", paths=["src/**"], create_worktree=True
        )

    worktree = Path(opened["worktree"])
    assert opened["status"] == "active"
    assert opened["branch"].startswith("claim/retry-payments-")
    assert worktree == repo.parent / "demo.worktrees" / opened["branch"].removeprefix("claim/")
    assert git(worktree, "rev-parse", "HEAD") == head
    assert git(worktree, "symbolic-ref", "--short", "HEAD") == opened["branch"]


async def test_claim_open_on_the_protected_branch_is_refused_naming_it_and_records_nothing(
    client: Client, repo: Path, service: Service
) -> None:
    head = service.head()

    async with client:
        error = await fail(
            client,
            "claim_open",
            objective="On main",
            paths=["src/**"],
            branch="refs/heads/main",  # the protected branch, in another spelling
            create_worktree=True,
        )

    assert (error["code"], error["field"]) == ("validation_error", "branch")
    assert service.head() == head
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


async def test_meeting_open_gives_a_potential_overlap_a_room(client: Client) -> None:
    async with client:
        one = await call(client, "claim_open", objective="one", paths=["newpkg/*.py"])
        two = await call(client, "claim_open", objective="two", paths=["newpkg/**/core.py"])
        assert two["status"] == "active"  # they meet only in paths that do not exist
        opened = await call(
            client,
            "meeting_open",
            claim_id=two["claimId"],
            expected_claim_revision=two["revision"],
            with_claim_id=one["claimId"],
            reason="who creates newpkg/core.py?",
        )

    assert opened["status"] == "open" and opened["meetingId"].startswith("mtg")
    assert {c["status"] for c in opened["claims"]} == {"active"}
