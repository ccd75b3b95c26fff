"""A claim's wire record: declared once in the domain, produced by one function, and the
HTTP response model derived from that declaration."""

from __future__ import annotations

from pydantic import TypeAdapter

from detente.client.seeds import claim_seed
from detente.clock import FakeClock
from detente.domain.claims.declared import Declared
from detente.domain.claims.record import ClaimRecord, claim_to_wire
from detente.operations import wire
from detente.operations.bodies import ClaimIn
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore


def _claim() -> ClaimRecord:
    service = Service(MemoryStore(), FakeClock(), [RepoConfig("demo")])
    seed = claim_seed(
        repo="demo",
        objective="retries",
        agent="codex",
        base_commit="4f2d6b1",
        paths=["src/**"],
        contracts=[{"type": "db", "area": "t", "change": "adds a column"}],
        declared=Declared(deployment_responsibility="staging"),
        memory=["AGENTS.md#build"],
    )
    view = service.claims.open_claim(ClaimIn.model_validate(seed).to_command())
    return claim_to_wire(view.claim)


def test_the_wire_function_writes_exactly_the_members_the_record_declares() -> None:
    assert set(_claim()) == set(ClaimRecord.__annotations__)


def test_the_response_model_is_the_domain_record_derived_for_pydantic() -> None:
    assert wire.Claim.__annotations__.keys() == ClaimRecord.__annotations__.keys()
    assert wire.Claim.__name__ == "Claim"
    record = _claim()
    assert TypeAdapter(wire.Claim).validate_python(record) == record


def test_the_response_model_keeps_members_a_server_adds() -> None:
    record: dict[str, object] = {**_claim(), "addedByAServer": 1}
    kept = TypeAdapter(wire.Claim).validate_python(record)
    assert dict(kept)["addedByAServer"] == 1
