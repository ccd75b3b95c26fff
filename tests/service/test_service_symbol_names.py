"""Symbol and module names are NFC-normalised on input, exactly as paths are: an NFD
spelling of an existing method names the same symbol (real repository, real index)."""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from pathlib import Path

from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.memory import MemoryStore

from source_repo import commit_all, make_source_repo
from support import counting_ids, seed

NFC = "Café.résumé"
NFD = unicodedata.normalize("NFD", NFC)
SOURCE = "class Café:\n    def résumé(self) -> str:\n        return 'cv'\n"


def _service(tmp_path: Path) -> tuple[Service, str]:
    root = tmp_path / "repo"
    make_source_repo(root)
    (root / "src/cafe.py").write_text(SOURCE)
    head = commit_all(root, "a cafe")
    return Service(
        MemoryStore(), FakeClock(), [RepoConfig("demo", path=root)], ids=counting_ids()
    ), head


def test_an_nfd_spelling_of_a_claimed_method_overlaps_the_nfc_claim(tmp_path: Path) -> None:
    assert NFD != NFC
    service, head = _service(tmp_path)
    first = service.claims.open_claim(
        replace(seed(agent="a", symbols=(f"src/cafe.py::{NFC}",)), base_commit=head)
    ).claim
    second = service.claims.open_claim(
        replace(seed(agent="b", symbols=(f"src/cafe.py::{NFD}",)), base_commit=head)
    ).claim

    assert first.status.value == "active"
    assert second.symbols == (f"src/cafe.py::{NFC}",)
    assert second.status.value != "active"  # it meets the first claim


def test_a_bare_nfd_name_resolves_to_the_method_and_modules_are_normalised_too(
    tmp_path: Path,
) -> None:
    service, head = _service(tmp_path)
    module = unicodedata.normalize("NFD", "pkg.café")
    claim = service.claims.open_claim(
        replace(seed(agent="a", symbols=(NFD,), modules=(module,)), base_commit=head)
    ).claim

    assert claim.symbols == (f"src/cafe.py::{NFC}",)
    assert claim.modules == ("pkg.café",)
