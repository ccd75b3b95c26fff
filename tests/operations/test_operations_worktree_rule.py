"""Who may name the directory of a worktree the server creates (``createWorktree`` with
``worktree``): the local principal only; a remote caller gets the server's default place."""

from __future__ import annotations

import pytest

from detente.clock import FakeClock
from detente.errors import ForbiddenError
from detente.operations import authorize
from detente.operations.bodies import ClaimIn
from detente.security.identity import LOCAL, Principal
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore

SEED = {
    "repo": "demo",
    "objective": "retry payments",
    "baseCommit": "a" * 40,
    "paths": ["src/**"],
    "agent": {"id": "bot", "name": "bot"},
}
BOB = Principal("bob", "key", roles=frozenset({"claim"}))


@pytest.fixture
def service() -> Service:
    return Service(MemoryStore(), FakeClock(), [RepoConfig("demo")])


def test_a_remote_principal_may_not_choose_where_the_server_creates_a_worktree(
    service: Service,
) -> None:
    body = ClaimIn.model_validate({**SEED, "createWorktree": True, "worktree": "/etc/evil"})

    with pytest.raises(ForbiddenError) as refused:
        authorize.open_claim(service, BOB, body)

    assert refused.value.extra["field"] == "worktree"


def test_a_remote_principal_may_ask_for_a_worktree_in_the_default_place(
    service: Service,
) -> None:
    authorize.open_claim(service, BOB, ClaimIn.model_validate({**SEED, "createWorktree": True}))


def test_the_local_principal_may_name_the_worktree_directory(service: Service) -> None:
    body = ClaimIn.model_validate({**SEED, "createWorktree": True, "worktree": "/tmp/wt"})

    authorize.open_claim(service, LOCAL, body)


def test_a_takeover_that_names_the_directory_is_refused_alike(service: Service) -> None:
    body = ClaimIn.model_validate({**SEED, "createWorktree": True, "worktree": "/srv/x"})

    with pytest.raises(ForbiddenError):
        authorize.open_claim(service, BOB, "clm_1", body)
