"""Containment rules of symbol and module targets (pure)."""

from __future__ import annotations

from detente.domain.overlap import modules, symbols


def test_a_class_contains_its_methods_and_a_method_meets_its_class() -> None:
    assert symbols.meet("a.py::C", "a.py::C.m") == "a.py::C.m"
    assert symbols.meet("a.py::C.m", "a.py::C") == "a.py::C.m"
    assert symbols.meet("a.py::C.m", "a.py::C.m") == "a.py::C.m"


def test_two_functions_of_one_file_or_one_name_in_two_files_do_not_meet() -> None:
    assert symbols.meet("a.py::f", "a.py::g") is None
    assert symbols.meet("a.py::C.m", "a.py::C.n") is None
    assert symbols.meet("a.py::f", "b.py::f") is None


def test_qualified_names_compare_by_whole_parts() -> None:
    assert symbols.meet("a.py::Retry", "a.py::RetryPolicy.backoff") is None


def test_a_bare_symbol_meets_by_qualified_name_in_any_file() -> None:
    assert symbols.meet("C.m", "a.py::C") == "a.py::C"
    assert symbols.meet("C", "b.py::C.m") == "b.py::C.m"


def test_a_path_pattern_covers_the_symbols_of_the_files_it_matches() -> None:
    assert symbols.path_meets("src/**", "src/a.py::C.m")
    assert symbols.path_meets("src/a.py", "src/a.py::C")
    assert not symbols.path_meets("src/*.ts", "src/a.py::C")
    assert not symbols.path_meets("**", "C.m")


def test_a_module_contains_its_submodules_in_dotted_or_slash_spelling() -> None:
    assert modules.meet("detente.storage", "detente.storage.sqlite") == "detente.storage.sqlite"
    assert modules.meet("internal/storage/", "internal.storage") == "internal.storage"
    assert modules.meet("detente.store", "detente.storage") is None


def test_a_module_resolves_to_its_package_directory_and_file_under_a_source_root() -> None:
    assert modules.path_witness("detente.storage", "src/detente/storage/sqlite.py") == (
        "src/detente/storage/sqlite.py"
    )
    assert modules.path_witness("detente.storage", "detente/storage.py") == "detente/storage.py"
    assert modules.path_witness("detente.storage", "src/detente/vcs/git.py") is None
    assert modules.symbol_in("internal/storage", "internal/storage/store.go::Store.Get")
    assert not modules.symbol_in("internal/storage", "internal/store.go::Store")
