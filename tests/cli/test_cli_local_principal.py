"""A local process on a store served with authentication acts only with ``[local] roles``.

A real authenticating server (a real OIDC issuer, uvicorn) serves the repository's own
SQLite store and marks it at start; alice opens a claim over ``/v1``. The CLI then runs
in local mode (``DETENTE_LOCAL=1``) on the same store.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import Cli

from detente.service import Service
from served_with_auth import alice_claim_served_with_auth

AUD = "detente-local"


@pytest.fixture
def served(repo: Path) -> Iterator[tuple[Service, dict[str, Any]]]:
    """The repository's store served with authentication; alice's claim on src/pkg/a.py."""
    with alice_claim_served_with_auth(repo, "repo", "src/pkg/a.py", audience=AUD) as served:
        yield served


def _abandon(cli: Cli, claim: dict[str, Any]) -> Any:
    return cli("claim", "abandon", claim["id"], "--json")


def test_the_local_cli_may_not_abandon_a_claim_on_a_store_served_with_authentication(
    served: tuple[Service, dict[str, Any]], repo: Path
) -> None:
    service, claim = served
    before = service.store.head()
    refused = _abandon(Cli(repo), claim)
    assert refused.exit_code == 8, refused.output  # forbidden
    assert "forbidden" in refused.output
    assert "--server" in refused.output and "$DETENTE_TOKEN" in refused.output
    assert service.store.head() == before
    assert service.claims.get_claim(claim["id"]).claim.status.value == "active"


def test_the_local_cli_may_still_read_a_store_served_with_authentication(
    served: tuple[Service, dict[str, Any]], repo: Path
) -> None:
    _, claim = served
    code, listed = Cli(repo).json("claim", "list")
    assert code == 0
    assert [c["id"] for c in listed["claims"]] == [claim["id"]]


def test_local_roles_in_detente_toml_let_the_local_cli_claim_but_not_touch_anothers_claim(
    served: tuple[Service, dict[str, Any]], repo: Path
) -> None:
    service, claim = served
    (repo / "detente.toml").write_text('[local]\nroles = ["claim"]\n')
    cli = Cli(repo)
    mine = cli.open("src/pkg/b.py", agent="me")
    assert mine["claim"]["principal"] == "local"
    refused = _abandon(cli, claim)
    assert refused.exit_code == 8, refused.output
    assert "belongs to 'oidc:alice'" in refused.output and "--server" in refused.output
    assert service.claims.get_claim(claim["id"]).claim.status.value == "active"


def test_the_admin_role_in_local_roles_restores_the_local_principals_every_power(
    served: tuple[Service, dict[str, Any]], repo: Path
) -> None:
    service, claim = served
    (repo / "detente.toml").write_text('[local]\nroles = ["admin"]\n')
    done = _abandon(Cli(repo), claim)
    assert done.exit_code == 0, done.output
    assert service.claims.get_claim(claim["id"]).claim.status.value == "abandoned"
