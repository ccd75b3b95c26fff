"""One path-pattern semantics through the service: claims, write checks, the commit guard;
and bounded overlap work (limits, undecided pairs block)."""

from __future__ import annotations

import pytest

from detente.clock import FakeClock
from detente.domain.claims.model import ClaimStatus
from detente.domain.overlap import escape
from detente.domain.overlap.model import Severity
from detente.errors import OverlapBlocking, ValidationError
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore

from support import counting_ids, seed

ROUTE = "app/[id]/page.tsx"


@pytest.fixture
def svc() -> Service:
    return Service(MemoryStore(), FakeClock(), [RepoConfig("demo")], ids=counting_ids())


def test_a_claim_on_a_route_file_may_write_that_very_file(svc: Service) -> None:
    a = svc.claims.open_claim(seed(ROUTE, agent="alice"))
    assert svc.claims.check_write(a.claim.id, [ROUTE]) == [ROUTE]


def test_an_escaped_claim_on_a_held_route_file_negotiates_instead_of_going_active(
    svc: Service,
) -> None:
    a = svc.claims.open_claim(seed(ROUTE, agent="alice"))
    b = svc.claims.open_claim(seed("app/[[]id[]]/page.tsx", agent="bob"))
    assert b.claim.status is ClaimStatus.NEGOTIATING
    [overlap] = b.overlaps
    assert overlap.claim_id == a.claim.id
    assert overlap.targets[0].witness == ROUTE
    with pytest.raises(OverlapBlocking):
        svc.claims.check_write(b.claim.id, [ROUTE])


def test_the_commit_guard_reads_a_staged_route_file_literally(svc: Service) -> None:
    a = svc.claims.open_claim(seed(escape(ROUTE), agent="alice"))
    held = svc.gates.check_commit("demo", None, [ROUTE])
    assert [(f.path, f.kind, f.claim_id) for f in held.findings] == [(ROUTE, "held", a.claim.id)]
    # The glob reading of the staged name is not the file: app/i/page.tsx is free.
    assert svc.gates.check_commit("demo", None, ["app/i/page.tsx"]).findings == []


def test_a_pair_of_patterns_undecided_within_budget_blocks_with_that_reason(svc: Service) -> None:
    a = svc.claims.open_claim(seed("*b" + "?" * 16, agent="alice"))
    b = svc.claims.open_claim(seed("*a" + "?" * 16, agent="bob"))
    assert b.claim.status is ClaimStatus.NEGOTIATING
    [overlap] = b.overlaps
    assert overlap.claim_id == a.claim.id
    assert overlap.severity is Severity.BLOCKING
    assert overlap.targets[0].witness is None
    assert "undecided within budget" in overlap.reason


def test_a_claim_beyond_the_wildcard_limit_is_refused_and_records_nothing(svc: Service) -> None:
    head = svc.head()
    with pytest.raises(ValidationError) as caught:
        svc.claims.open_claim(seed("x" + "*a" * 300 + "*", agent="alice"))
    assert caught.value.field == "paths[0]"
    assert svc.head() == head
