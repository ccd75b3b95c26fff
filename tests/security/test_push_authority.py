"""A push to the protected branch is bound to the claim it names: it lands claim X only
from X's principal holding ``integrate``, or from an integrator once X is
``ready_for_review``; anyone else is refused, ``main`` stays and the log records nothing.

Against a real ``detente serve --auth oidc``, a real bare repository with the hooks
installed (git runs them on ``git push`` with the pusher's ``DETENTE_TOKEN``), its real
SQLite file and a real OIDC issuer.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from served_git import Shared, git, make_shared, open_claim, push, ready, serving

from oidc_issuer import Issuer, running_issuer

from support import isolate_environment

AUD = "detente-push"
ROLES = """
[roles]
claim = ["*"]
integrate = ["oidc:ci"]
"""

pytestmark = pytest.mark.slow  # three git pushes through the hooks, a served process


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("RS256") as it:
        yield it


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shared:
    isolate_environment(tmp_path, monkeypatch)
    return make_shared(tmp_path)


@pytest.fixture
def served(shared: Shared, issuer: Issuer, tmp_path: Path) -> Iterator[str]:
    policy = tmp_path / "detente.toml"
    policy.write_text(ROLES)
    flags = ("--auth", "oidc", "--oidc-issuer", issuer.url, "--oidc-audience", AUD)
    ci = {"DETENTE_TOKEN": issuer.token("ci", aud=AUD)}
    with serving(shared, *flags, "--policy", str(policy), hooks_env=ci) as url:
        yield url


def _as(issuer: Issuer, sub: str) -> tuple[dict[str, str], dict[str, str]]:
    """HTTP headers and the hooks' environment of principal ``oidc:<sub>``."""
    token = issuer.token(sub, aud=AUD)
    return {"Authorization": f"Bearer {token}"}, {"DETENTE_TOKEN": token}


def _integrations(url: str, issuer: Issuer) -> list[dict[str, Any]]:
    headers, _ = _as(issuer, "ci")
    events = httpx.get(f"{url}/v1/events", params={"since": 0, "limit": 1000}, headers=headers)
    assert events.status_code == 200, events.text
    return [e for e in events.json()["events"] if e["type"] == "claim.integrated"]


def test_a_push_by_a_non_integrator_naming_another_principals_ready_claim_is_refused(
    shared: Shared, served: str, issuer: Issuer
) -> None:
    alice_http, alice_env = _as(issuer, "alice")
    claim = open_claim(served, shared, "a.py", headers=alice_http)
    head = ready(served, shared, claim, "a.py", headers=alice_http, env=alice_env)
    _, dev_env = _as(issuer, "dev")

    refused = push(shared.work, f"{head}:refs/heads/main", env=dev_env)

    assert refused.returncode != 0
    assert f"'oidc:dev' may not land claim {claim['id']} of 'oidc:alice'" in refused.stderr
    assert git(shared.bare, "rev-parse", "main") == shared.m0
    assert _integrations(served, issuer) == []


def test_a_claims_own_principal_without_integrate_cannot_land_it_either(
    shared: Shared, served: str, issuer: Issuer
) -> None:
    alice_http, alice_env = _as(issuer, "alice")
    claim = open_claim(served, shared, "a.py", headers=alice_http)
    head = ready(served, shared, claim, "a.py", headers=alice_http, env=alice_env)

    refused = push(shared.work, f"{head}:refs/heads/main", env=alice_env)

    assert refused.returncode != 0
    assert "from its principal holding 'integrate'" in refused.stderr, refused.stderr
    assert git(shared.bare, "rev-parse", "main") == shared.m0
    assert _integrations(served, issuer) == []


def test_an_integrator_lands_another_principals_ready_claim_recorded_with_both(
    shared: Shared, served: str, issuer: Issuer
) -> None:
    alice_http, alice_env = _as(issuer, "alice")
    claim = open_claim(served, shared, "a.py", headers=alice_http)
    head = ready(served, shared, claim, "a.py", headers=alice_http, env=alice_env)
    _, ci_env = _as(issuer, "ci")

    pushed = push(shared.work, f"{head}:refs/heads/main", env=ci_env)

    assert pushed.returncode == 0, pushed.stderr
    assert git(shared.bare, "rev-parse", "main") == head
    [landed] = _integrations(served, issuer)
    assert landed["subject"] == f"claim/{claim['id']}"
    assert landed["data"]["actor"]["principal"] == "oidc:ci"
    assert claim["principal"] == "oidc:alice"
