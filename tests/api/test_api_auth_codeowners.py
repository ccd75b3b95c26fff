"""CODEOWNERS routing under authentication: who may resolve a meeting, approve a takeover.

A real git repository whose ``CODEOWNERS`` names a team (``@acme/billing``) and a user
(``@dora``); a real OIDC issuer whose tokens carry groups; a real server. A meeting over
owned paths is resolved only by an ``arbitrate`` holder who is one of the owners (a
group ``acme/billing``, i.e. ``group:acme/billing`` in ``[roles]``, is the owner
``@acme/billing``); a gated takeover is released only by its owners or an owning
arbitrator.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.conftest import running
from detente.clock import FakeClock
from detente.runtime import build_service
from detente.security.authn import AuthGate
from detente.security.oidc import OidcSettings, OidcVerifier
from oidc_issuer import Issuer, running_issuer

from support import git_out, isolate_environment

AUD = "detente-test"


class Table:
    """A ``[roles]`` table: role -> principal names and ``group:NAME`` entries."""

    def __init__(self, **grants: list[str]) -> None:
        self.grants = grants

    def allows(self, role: str, principal: str, groups: Iterable[str] = ()) -> bool:
        entries = self.grants.get(role, [])
        return principal in entries or any(f"group:{g}" in entries for g in groups)


ROLES = Table(
    claim=["alice", "carol", "bea", "ben", "judy", "dora", "group:acme/billing"],
    arbitrate=["judy", "bea", "dora"],  # ben is in acme/billing but does not arbitrate
)
BILLING = ["acme/billing"]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate_environment(tmp_path, monkeypatch)
    root = tmp_path / "shop"
    (root / "src" / "billing").mkdir(parents=True)
    (root / "lib").mkdir()
    git_out(root.parent, "init", "-q", "-b", "main", str(root))
    (root / "CODEOWNERS").write_text("/src/billing/ @acme/billing\n/docs/ @dora\n")
    (root / "src" / "billing" / "invoice.py").write_text("total = 0\n")
    (root / "lib" / "util.py").write_text("x = 1\n")
    git_out(root, "add", "-A")
    git_out(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init")
    return root


@pytest.fixture
def issuer() -> Iterator[Issuer]:
    with running_issuer("ES256") as it:
        yield it


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def base(issuer: Issuer, repo: Path, tmp_path: Path, clock: FakeClock) -> Iterator[str]:
    service = build_service([repo], store_url=f"sqlite:///{tmp_path / 'd.db'}", clock=clock)
    gate = AuthGate(oidc=OidcVerifier(OidcSettings(issuer=issuer.url, audience=AUD)), roles=ROLES)
    try:
        with running(service, auth=gate) as url:
            yield url
    finally:
        service.store.close()


def _as(issuer: Issuer, who: str, groups: list[str] | None = None) -> dict[str, str]:
    claims: dict[str, Any] = {"groups": groups} if groups is not None else {}
    return {"Authorization": f"Bearer {issuer.token(who, **claims)}"}


def _open(base: str, repo: Path, headers: dict[str, str], path: str, **extra: Any) -> Any:
    body = {
        "repo": repo.name,
        "objective": f"edit {path}",
        "baseCommit": git_out(repo, "rev-parse", "HEAD"),
        "paths": [path],
        "leaseTtlSeconds": 3600,
        "agent": {"id": headers["Authorization"][-12:], "name": "agent"},
        **extra,
    }
    opened = httpx.post(f"{base}/v1/claims", json=body, headers=headers, timeout=10)
    assert opened.status_code == 201, opened.text
    return opened.json()


def _meeting(base: str, repo: Path, issuer: Issuer, path: str) -> dict[str, Any]:
    _open(base, repo, _as(issuer, "alice"), path)
    meeting = _open(base, repo, _as(issuer, "carol"), path)["meeting"]
    assert meeting is not None
    return dict(meeting)


def _resolve(base: str, meeting: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    body = {
        "expectedMeetingRevision": meeting["revision"],
        "resolution": {"type": "joint", "claimIds": meeting["participants"]},
        "resolvedBy": "@dora",  # what the body claims is not what gets recorded
    }
    url = f"{base}/v1/meetings/{meeting['id']}/resolve"
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_a_meeting_over_team_owned_paths_is_resolved_only_by_an_arbitrator_in_that_team(
    base: str, repo: Path, issuer: Issuer
) -> None:
    meeting = _meeting(base, repo, issuer, "src/billing/invoice.py")
    refusals = {
        "arbitrator outside the team": _resolve(base, meeting, _as(issuer, "judy")),
        "owner of other paths": _resolve(base, meeting, _as(issuer, "dora")),
        "team member without arbitrate": _resolve(base, meeting, _as(issuer, "ben", BILLING)),
        "participant": _resolve(base, meeting, _as(issuer, "carol")),
    }
    for why, refused in refusals.items():
        assert refused.status_code == 403, f"{why}: {refused.text}"
        assert refused.json()["code"] == "forbidden", why
    assert refusals["arbitrator outside the team"].json()["owners"] == ["@acme/billing"]
    assert refusals["team member without arbitrate"].json()["role"] == "arbitrate"
    resolved = _resolve(base, meeting, _as(issuer, "bea", BILLING))
    assert resolved.status_code == 200, resolved.text
    record = resolved.json()["meeting"]
    assert record["status"] == "resolved"
    assert record["resolution"]["resolvedBy"] == "@acme/billing"


def test_an_escalated_meeting_goes_to_its_owning_arbitrator_and_records_the_owner(
    base: str, repo: Path, issuer: Issuer, clock: FakeClock
) -> None:
    meeting = _meeting(base, repo, issuer, "src/billing/invoice.py")
    deadline = datetime.fromisoformat(meeting["deadline"].replace("Z", "+00:00"))
    created = datetime.fromisoformat(meeting["createdAt"].replace("Z", "+00:00"))
    # Past the meeting deadline (the leases still run): it escalates to CODEOWNERS.
    clock.advance((deadline - created).total_seconds() + 1)
    url = f"{base}/v1/meetings/{meeting['id']}"
    escalated = httpx.get(url, headers=_as(issuer, "bea", BILLING), timeout=10).json()["meeting"]
    assert escalated["status"] == "escalated"
    assert escalated["arbitrators"] == ["@acme/billing"]
    assert _resolve(base, escalated, _as(issuer, "judy")).status_code == 403
    resolved = _resolve(base, escalated, _as(issuer, "bea", BILLING))
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["meeting"]["resolution"]["resolvedBy"] == "@acme/billing"


def test_a_meeting_over_unowned_paths_needs_only_the_arbitrate_role(
    base: str, repo: Path, issuer: Issuer
) -> None:
    meeting = _meeting(base, repo, issuer, "lib/util.py")
    assert _resolve(base, meeting, _as(issuer, "ben", BILLING)).status_code == 403
    resolved = _resolve(base, meeting, _as(issuer, "judy"))
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["meeting"]["resolution"]["resolvedBy"] == "oidc:judy"


def _gated_takeover(base: str, repo: Path, issuer: Issuer, clock: FakeClock) -> dict[str, Any]:
    """Alice's claim with a contract change expires; carol takes it over: blocked."""
    alice = _open(
        base,
        repo,
        _as(issuer, "alice"),
        "src/billing/invoice.py",
        expectedContractChanges=["billing/v2"],
    )["claim"]
    clock.advance(4 * 3600)
    carol = _as(issuer, "carol")
    current = httpx.get(f"{base}/v1/claims/{alice['id']}", headers=carol, timeout=10).json()
    body = {
        "repo": repo.name,
        "objective": "finish invoices",
        "paths": ["src/billing/invoice.py"],
        "leaseTtlSeconds": 60,
        "agent": {"id": "carol-agent", "name": "carol"},
        "takeoverOf": {
            "claimId": alice["id"],
            "expectedClaimRevision": current["claim"]["revision"],
        },
    }
    url = f"{base}/v1/claims/{alice['id']}/takeover"
    taken = httpx.post(url, json=body, headers=carol, timeout=10)
    assert taken.status_code in (200, 201), taken.text
    successor = taken.json()["claim"]
    assert successor["status"] == "blocked"
    assert successor["takeoverOf"]["owners"] == ["@acme/billing"]
    return dict(successor)


def _approve(
    base: str, claim: dict[str, Any], headers: dict[str, str], approver: str, kind: str
) -> httpx.Response:
    body = {"expectedClaimRevision": claim["revision"], "approver": approver, "kind": kind}
    url = f"{base}/v1/claims/{claim['id']}/takeover/approve"
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_a_gated_takeover_is_released_by_an_owner_of_its_targets_not_by_others(
    base: str, repo: Path, issuer: Issuer, clock: FakeClock
) -> None:
    successor = _gated_takeover(base, repo, issuer, clock)
    refusals = {
        "owner vote naming a team it is not in": _approve(
            base, successor, _as(issuer, "judy"), "@acme/billing", "owner"
        ),
        "human approval by an arbitrator who owns nothing here": _approve(
            base, successor, _as(issuer, "judy"), "judy", "human"
        ),
        "human approval by the successor itself": _approve(
            base, successor, _as(issuer, "carol"), "carol", "human"
        ),
        "owner vote by a non-owner naming itself": _approve(
            base, successor, _as(issuer, "dora"), "@dora", "owner"
        ),
    }
    for why, refused in refusals.items():
        assert refused.status_code == 403, f"{why}: {refused.text}"
        assert refused.json()["code"] == "forbidden", why
    approved = _approve(base, successor, _as(issuer, "ben", BILLING), "@acme/billing", "owner")
    assert approved.status_code == 200, approved.text
    claim = approved.json()["claim"]
    assert claim["status"] == "active"
    assert [a["approver"] for a in claim["takeoverOf"]["approvals"]] == ["@acme/billing"]


def test_an_owning_arbitrator_may_release_a_gated_takeover_as_a_human(
    base: str, repo: Path, issuer: Issuer, clock: FakeClock
) -> None:
    successor = _gated_takeover(base, repo, issuer, clock)
    approved = _approve(base, successor, _as(issuer, "bea", BILLING), "someone-else", "human")
    assert approved.status_code == 200, approved.text
    claim = approved.json()["claim"]
    assert claim["status"] == "active"
    assert [a["approver"] for a in claim["takeoverOf"]["approvals"]] == ["oidc:bea"]
