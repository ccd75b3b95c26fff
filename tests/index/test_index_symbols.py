"""The symbol index over a real git repository with Python, TypeScript and Go sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from detente.errors import ValidationError
from detente.index.extract import extract_symbols
from detente.index.languages import available
from detente.index.symbols import SymbolIndex

from source_repo import commit_all, make_source_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    make_source_repo(tmp_path / "repo")
    return tmp_path / "repo"


def test_every_grammar_wheel_of_the_six_languages_loads() -> None:
    assert {"python", "javascript", "typescript", "tsx", "go", "rust", "java"} <= set(available())


def test_python_methods_are_qualified_by_their_class_with_line_and_byte_ranges(repo: Path) -> None:
    table = SymbolIndex(repo).at("HEAD")
    backoff = table.find("src/settlement/retry.py::RetryPolicy.backoff")
    assert backoff is not None
    assert backoff.kind == "function"
    assert (backoff.start_line, backoff.end_line) == (13, 15)
    source = (repo / "src/settlement/retry.py").read_bytes()
    assert source[backoff.start_byte : backoff.end_byte].startswith(b"def backoff(")
    names = [s.qualname for s in table.symbols["src/settlement/retry.py"]]
    assert names == [
        "RetryPolicy",
        "RetryPolicy.__init__",
        "RetryPolicy.backoff",
        "RetryPolicy.give_up",
        "default_policy",
    ]


def test_typescript_classes_methods_interfaces_and_arrow_functions_are_symbols(repo: Path) -> None:
    table = SymbolIndex(repo).at("HEAD")
    names = {s.qualname: s.kind for s in table.symbols["web/src/client.ts"]}
    assert names == {
        "ClientOptions": "interface",
        "ApiClient": "class",
        "ApiClient.constructor": "method",
        "ApiClient.fetchClaims": "method",
        "ApiClient.close": "method",
        "makeClient": "function",
    }


def test_go_methods_are_named_after_their_receiver_type(repo: Path) -> None:
    table = SymbolIndex(repo).at("HEAD")
    names = [s.qualname for s in table.symbols["internal/storage/store.go"]]
    assert names == ["Store", "Store.Get", "Store.Put", "New"]


def test_rust_impl_functions_and_java_methods_are_qualified_by_their_type() -> None:
    rust = extract_symbols("src/lib.rs", b"struct S;\nimpl S {\n    fn m(&self) {}\n}\nfn f() {}\n")
    java = extract_symbols("A.java", b"class A {\n  A() {}\n  void run() {}\n}\n")
    assert rust is not None and java is not None
    assert [s.qualname for s in rust] == ["S", "S.m", "f"]
    assert [s.qualname for s in java] == ["A", "A.A", "A.run"]


def test_a_file_no_grammar_handles_has_no_symbol_table() -> None:
    assert extract_symbols("README.md", b"# x\n") is None


def test_the_next_commit_parses_only_the_blobs_that_changed(repo: Path) -> None:
    index = SymbolIndex(repo)
    index.at("HEAD")
    first = index.parsed_blobs
    assert first == 6  # every source file, README.md is not parsed
    retry = repo / "src/settlement/retry.py"
    retry.write_text(retry.read_text() + "\n\ndef jitter() -> float:\n    return 0.5\n")
    (repo / "docs").mkdir()
    (repo / "docs/copy.py").write_bytes((repo / "src/settlement/ledger.py").read_bytes())
    commit_all(repo, "add jitter")
    table = index.at("HEAD")
    assert index.parsed_blobs == first + 1  # the copy of ledger.py is the same blob
    assert table.find("src/settlement/retry.py::jitter") is not None
    assert table.find("docs/copy.py::Ledger.post") is not None
    assert index.at("HEAD~1").find("src/settlement/retry.py::jitter") is None


def test_a_bare_qualified_name_resolves_to_its_only_definition(repo: Path) -> None:
    index = SymbolIndex(repo)
    assert index.resolve("Store.Get", "HEAD") == "internal/storage/store.go::Store.Get"
    assert index.resolve("fetchClaims", "HEAD") == "web/src/client.ts::ApiClient.fetchClaims"
    # An exact qualified name wins over names that merely end with it.
    assert index.resolve("Backoff", "HEAD") == "src/settlement/ledger.py::Backoff"


def test_an_ambiguous_bare_name_is_refused_listing_every_candidate(repo: Path) -> None:
    with pytest.raises(ValidationError) as caught:
        SymbolIndex(repo).resolve("backoff", "HEAD", field="symbols[0]")
    assert caught.value.field == "symbols[0]"
    assert caught.value.extra["candidates"] == [
        "src/settlement/ledger.py::Backoff.backoff",
        "src/settlement/retry.py::RetryPolicy.backoff",
    ]


def test_an_unknown_bare_name_is_refused_and_a_located_new_name_is_kept(repo: Path) -> None:
    index = SymbolIndex(repo)
    with pytest.raises(ValidationError, match=r"no symbol 'Nope\.run'"):
        index.resolve("Nope.run", "HEAD")
    assert index.resolve(r".\src\new.py :: Fresh.run", "HEAD") == "src/new.py::Fresh.run"


def test_a_revision_that_names_no_commit_is_a_validation_error(repo: Path) -> None:
    with pytest.raises(ValidationError, match="does not name a commit"):
        SymbolIndex(repo).at("no-such-branch")
