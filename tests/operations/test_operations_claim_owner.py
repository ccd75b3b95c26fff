"""Who may act on a claim: its principal (or an admin), learned from a projection that
holds the claim: the cached one without waiting for the repository's lock, else the
projection caught up with the log (a claim another server opened)."""

from __future__ import annotations

import threading

import pytest

from detente.clock import FakeClock
from detente.errors import ForbiddenError, NotFoundError
from detente.operations import authorize
from detente.security.identity import Principal, acting_as
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore

from support import seed

BOB = Principal("bob", "key", roles=frozenset({"claim", "read"}))
EVE = Principal("eve", "key", roles=frozenset({"claim", "read"}))


def _bobs_claim(service: Service) -> str:
    with acting_as(BOB):
        view = service.claims.open_claim(seed("src/a.py", agent="bob"))
    return view.claim.id


def test_a_claims_owner_is_known_while_a_batch_holds_the_repository() -> None:
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("demo")])
    claim_id = _bobs_claim(service)
    held, release = threading.Event(), threading.Event()

    def running_batch() -> None:
        with service.lock("demo"):
            held.set()
            release.wait(120)

    batch = threading.Thread(target=running_batch)
    batch.start()
    try:
        assert held.wait(30)
        answered: list[str] = []
        asker = threading.Thread(
            target=lambda: answered.append(authorize.claim_principal(service, claim_id))
        )
        asker.start()
        asker.join(10)  # bounded: the answer must not need the lock the batch holds
        assert answered == ["bob"]
        with pytest.raises(ForbiddenError):
            authorize.own_claim(service, EVE, claim_id)
    finally:
        release.set()
        batch.join(30)


def test_a_claim_another_server_opened_is_found_in_the_log() -> None:
    store = MemoryStore()
    clock = FakeClock()
    here = Service(store, clock, [RepoConfig("demo")])
    with here.lock("demo"):
        assert here.fresh("demo").claims.get("clm_nobody") is None  # its projection, cached
    elsewhere = Service(store, clock, [RepoConfig("demo")])
    claim_id = _bobs_claim(elsewhere)

    assert authorize.claim_principal(here, claim_id) == "bob"
    authorize.own_claim(here, BOB, claim_id)
    with pytest.raises(NotFoundError):
        authorize.claim_principal(here, "clm_nobody")
