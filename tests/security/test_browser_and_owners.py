"""CODEOWNERS user and team handles kept apart; the dashboard served with a
Content-Security-Policy and frame protection; ``/docs`` asks nothing of another server."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from api.conftest import running
from detente.errors import ForbiddenError
from detente.operations import authorize
from detente.operations.bodies import ApproveTakeoverIn
from detente.runtime import build_service
from detente.security.identity import Principal

ARBITER = frozenset({"claim", "arbitrate"})


def test_a_group_named_like_a_user_handle_is_not_that_user() -> None:
    in_group = Principal("oidc:eve", "oidc", groups=frozenset({"pay-owner"}), roles=ARBITER)
    user = Principal("oidc:pay-owner", "oidc", roles=ARBITER)
    team = Principal("oidc:tim", "oidc", groups=frozenset({"acme/pay"}), roles=ARBITER)
    slashed = Principal("oidc:acme/pay", "oidc", roles=ARBITER)

    assert authorize.bound_handle(in_group, ["@pay-owner"]) == "oidc:eve"
    assert authorize.bound_handle(user, ["@pay-owner"]) == "@pay-owner"
    assert authorize.bound_handle(team, ["@acme/pay"]) == "@acme/pay"
    assert authorize.bound_handle(slashed, ["@acme/pay"]) == "oidc:acme/pay"


def test_an_owner_approval_in_a_user_handle_needs_that_user_not_a_group_of_its_name() -> None:
    body = ApproveTakeoverIn.model_validate(
        {"expectedClaimRevision": 1, "kind": "owner", "approver": "@pay-owner"}
    )
    in_group = Principal("oidc:eve", "oidc", groups=frozenset({"pay-owner"}), roles=ARBITER)
    key = Principal("key:pay-owner", "key", roles=ARBITER)

    for impostor in (in_group, key):
        with pytest.raises(ForbiddenError):
            authorize.approve_takeover(None, impostor, "clm_1", body)  # type: ignore[arg-type]
    authorize.approve_takeover(
        None,  # type: ignore[arg-type]
        Principal("oidc:pay-owner", "oidc", roles=ARBITER),
        "clm_1",
        body,
    )


def test_every_page_forbids_framing_and_foreign_scripts_and_docs_stays_on_the_server(
    repo: Path,
) -> None:
    service = build_service([repo])
    try:
        with running(service) as base, httpx.Client(timeout=20) as http:
            dashboard = http.get(f"{base}/")
            docs = http.get(f"{base}/docs")
            redoc = http.get(f"{base}/redoc", follow_redirects=False)
            api = http.get(f"{base}/v1/claims")
    finally:
        service.store.close()
    for answer in (dashboard, docs, api):
        policy = answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
        assert answer.headers["x-frame-options"] == "DENY"
    assert docs.status_code == 200 and "/v1/claims" in docs.text
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", docs.text), docs.text[:500]
    assert "<script" not in docs.text
    assert redoc.status_code == 307 and redoc.headers["location"] == "/docs"
