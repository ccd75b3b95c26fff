"""Symbol and module claims through the service, on a real repository's symbol index."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeScope
from detente.domain.claims.model import ClaimStatus
from detente.domain.overlap.model import OverlapKind, Severity
from detente.errors import ValidationError
from detente.service import ClaimView, RepoConfig, Service
from detente.storage.memory import MemoryStore

from source_repo import make_source_repo
from support import counting_ids, seed


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Service, str]:
    head = make_source_repo(tmp_path / "repo")
    service = Service(
        MemoryStore(), FakeClock(), [RepoConfig("demo", path=tmp_path / "repo")], ids=counting_ids()
    )
    return service, head


def _open(repo: tuple[Service, str], *paths: str, agent: str, **kw: object) -> ClaimView:
    service, head = repo
    return service.claims.open_claim(replace(seed(*paths, agent=agent, **kw), base_commit=head))


def test_a_bare_symbol_is_stored_under_its_full_name(repo: tuple[Service, str]) -> None:
    view = _open(repo, agent="alice", symbols=("RetryPolicy.backoff",))
    assert view.claim.symbols == ("src/settlement/retry.py::RetryPolicy.backoff",)


def test_two_functions_of_one_file_do_not_block_each_other(repo: tuple[Service, str]) -> None:
    _open(repo, agent="alice", symbols=("RetryPolicy.backoff",))
    bob = _open(repo, agent="bob", symbols=("RetryPolicy.give_up",))
    assert bob.claim.status is ClaimStatus.ACTIVE
    assert bob.overlaps == []
    carol = _open(repo, agent="carol", symbols=("ApiClient.close",))
    dave = _open(repo, agent="dave", symbols=("ApiClient.fetchClaims",))
    assert carol.claim.status is dave.claim.status is ClaimStatus.ACTIVE


def test_a_class_and_its_method_block_and_the_reason_names_the_symbol(
    repo: tuple[Service, str],
) -> None:
    alice = _open(repo, agent="alice", symbols=("RetryPolicy.backoff",))
    bob = _open(repo, agent="bob", symbols=("RetryPolicy",))
    assert bob.claim.status is ClaimStatus.NEGOTIATING
    [overlap] = bob.overlaps
    assert overlap.claim_id == alice.claim.id
    assert overlap.kind is OverlapKind.SYMBOL
    assert overlap.severity is Severity.BLOCKING
    assert "src/settlement/retry.py::RetryPolicy.backoff" in overlap.reason


def test_a_file_claim_blocks_a_claim_on_one_of_its_symbols_in_both_orders(
    repo: tuple[Service, str],
) -> None:
    _open(repo, agent="alice", symbols=("Store.Get",))
    bob = _open(repo, "internal/storage/*.go", agent="bob")
    assert bob.claim.status is ClaimStatus.NEGOTIATING
    assert bob.overlaps[0].targets[0].witness == "internal/storage/store.go::Store.Get"
    carol = _open(repo, agent="carol", symbols=("makeClient",))
    assert carol.claim.status is ClaimStatus.ACTIVE
    dave = _open(repo, "web/src/client.ts", agent="dave")
    assert [o.claim_id for o in dave.overlaps] == [carol.claim.id]
    erin = _open(repo, agent="erin", symbols=("ApiClient",))
    assert {o.claim_id for o in erin.overlaps} == {dave.claim.id}


def test_an_ambiguous_symbol_is_a_422_listing_candidates_and_opens_nothing(
    repo: tuple[Service, str],
) -> None:
    service, _ = repo
    with pytest.raises(ValidationError) as caught:
        _open(repo, agent="alice", symbols=("backoff",))
    assert caught.value.field == "symbols[0]"
    assert len(caught.value.extra["candidates"]) == 2
    assert service.claims.list_claims() == []


def test_modules_contain_submodules_their_files_and_their_symbols(
    repo: tuple[Service, str],
) -> None:
    alice = _open(repo, agent="alice", modules=("settlement",))
    bob = _open(repo, agent="bob", modules=("settlement.retry",))
    assert [o.claim_id for o in bob.overlaps] == [alice.claim.id]
    assert bob.overlaps[0].kind is OverlapKind.MODULE
    carol = _open(repo, "src/settlement/ledger.py", agent="carol")
    assert alice.claim.id in [o.claim_id for o in carol.overlaps]
    dave = _open(repo, agent="dave", modules=("internal/storage",))
    erin = _open(repo, agent="erin", symbols=("Store.Put",))
    assert [o.claim_id for o in erin.overlaps] == [dave.claim.id]
    frank = _open(repo, "README.md", agent="frank", modules=("storage.other",))
    assert frank.claim.status is ClaimStatus.ACTIVE


def test_a_scope_change_resolves_added_symbols_against_the_claims_base(
    repo: tuple[Service, str],
) -> None:
    service, _ = repo
    alice = _open(repo, "README.md", agent="alice")
    changed = service.claims.change_scope(
        ChangeScope(
            claim_id=alice.claim.id,
            expected_claim_revision=alice.claim.revision,
            add_symbols=("Ledger.post",),
        )
    )
    assert changed.claim.symbols == ("src/settlement/ledger.py::Ledger.post",)


def test_a_claim_gives_up_a_symbol_and_the_claim_waiting_on_it_becomes_active(
    repo: tuple[Service, str],
) -> None:
    service, _ = repo
    alice = _open(repo, agent="alice", symbols=("RetryPolicy", "ApiClient.close"))
    bob = _open(repo, agent="bob", symbols=("RetryPolicy.backoff",))
    assert bob.claim.status is ClaimStatus.NEGOTIATING
    narrowed = service.claims.change_scope(
        ChangeScope(alice.claim.id, alice.claim.revision, remove_symbols=("RetryPolicy",))
    )
    assert narrowed.claim.symbols == ("web/src/client.ts::ApiClient.close",)
    assert service.claims.get_claim(bob.claim.id).claim.status is ClaimStatus.ACTIVE


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"remove_symbols": ("RetryPolicy.give_up",)}, "removeSymbols[0]"),
        ({"remove_modules": ("settlement",)}, "removeModules[0]"),
        ({"remove_symbols": ("RetryPolicy.backoff",)}, "removeSymbols"),  # its last target
    ],
)
def test_removing_a_symbol_or_module_the_claim_does_not_hold_or_its_last_target_is_refused(
    repo: tuple[Service, str], change: dict[str, tuple[str, ...]], field: str
) -> None:
    service, _ = repo
    alice = _open(repo, agent="alice", symbols=("RetryPolicy.backoff",))
    with pytest.raises(ValidationError) as refused:
        service.claims.change_scope(ChangeScope(alice.claim.id, alice.claim.revision, **change))
    assert refused.value.field == field
    after = service.claims.get_claim(alice.claim.id).claim
    assert after.revision == alice.claim.revision and after.symbols == alice.claim.symbols


@pytest.mark.parametrize("name", ["..", "*", "/etc", "ansible.**", "a..b", "pkg/../etc", "a b"])
def test_a_module_name_that_names_no_place_in_the_repository_is_refused(
    repo: tuple[Service, str], name: str
) -> None:
    service, _ = repo
    with pytest.raises(ValidationError) as refused:
        _open(repo, agent="alice", modules=(name,))
    assert refused.value.field == "modules[0]"
    assert service.claims.list_claims() == []


@pytest.mark.parametrize("name", ["settlement", "src/settlement", "web/src/", "github.com/o/p"])
def test_dotted_and_directory_module_names_are_accepted(
    repo: tuple[Service, str], name: str
) -> None:
    assert _open(repo, agent="alice", modules=(name,)).claim.modules == (name,)
