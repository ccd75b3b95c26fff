"""An OIDC issuer that is down or broken: ``503 issuer_unavailable``, never ``401``.

A real issuer (``tests/oidc_issuer.py``) made to fail, in front of a real uvicorn server:
the client's token may be perfectly valid, so it must be told to retry, not to log in.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from api.conftest import running
from detente.clock import FakeClock
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore
from oidc_issuer import Issuer, running_issuer

from support import claim_body, counting_ids

AUD = "detente-test"


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("ES256") as it:
        yield it


@pytest.fixture
def base(issuer: Issuer, tmp_path: Path) -> Iterator[str]:
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    settings = OidcSettings(issuer=issuer.url, audience=AUD, discovery_retry_seconds=0)
    with running(service, auth=AuthGate(oidc=OidcVerifier(settings))) as url:
        yield url


@pytest.mark.parametrize(
    ("path", "fault"),
    [
        ("/.well-known/openid-configuration", "500"),
        ("/.well-known/openid-configuration", "not-json"),
        ("/jwks", "500"),
        ("/jwks", "not-json"),
        ("/jwks", "no-keys"),
    ],
)
def test_a_broken_issuer_answers_503_problem_json_with_retry_after_and_changes_nothing(
    base: str, issuer: Issuer, path: str, fault: str
) -> None:
    issuer.broken[path] = fault
    token = {"Authorization": f"Bearer {issuer.token('alice')}"}
    refused = httpx.post(f"{base}/v1/claims", json=claim_body("src/a.py"), headers=token)
    assert refused.status_code == 503
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["code"] == "issuer_unavailable"
    assert int(refused.headers["retry-after"]) > 0
    assert "www-authenticate" not in refused.headers
    issuer.broken.clear()
    listed = httpx.get(f"{base}/v1/claims", headers=token, timeout=10)
    assert listed.status_code == 200 and listed.json()["claims"] == []


def test_an_unknown_kid_refreshes_the_key_set_once_and_is_then_401(
    base: str, issuer: Issuer
) -> None:
    token = {"Authorization": f"Bearer {issuer.token('alice')}"}
    assert httpx.get(f"{base}/v1/claims", headers=token, timeout=10).status_code == 200
    fetched = issuer.fetches
    secret = issuer.rotate("ES256", publish=False)
    unknown = {"Authorization": f"Bearer {issuer.token('alice', kid=secret)}"}
    answers = [httpx.get(f"{base}/v1/claims", headers=unknown, timeout=10) for _ in range(3)]
    assert [a.status_code for a in answers] == [401, 401, 401]
    assert answers[0].json()["code"] == "unauthenticated"
    assert issuer.fetches <= fetched + 1  # the cooldown: no download per made-up kid
