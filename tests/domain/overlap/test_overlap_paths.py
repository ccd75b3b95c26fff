"""Normalisation of claim path patterns and concrete paths."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detente.domain.overlap import has_wildcard, normalize_path, normalize_pattern
from detente.errors import ValidationError


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("src/a.py", "src/a.py"),
        ("src\\a.py", "src/a.py"),
        (".\\src\\app\\", "src/app/**"),
        ("./src/a.py", "src/a.py"),
        ("././src/a.py", "src/a.py"),
        ("src/./a.py", "src/a.py"),
        ("src//a.py", "src/a.py"),
        ("src///lib//", "src/lib/**"),
        ("docs/", "docs/**"),
        ("docs/.", "docs/**"),
        ("docs/**", "docs/**"),
        ("docs/**/", "docs/**"),
        ("a/**/**/b", "a/**/b"),
        ("**/**", "**"),
        ("*/", "*/**"),
        ("a/!b", "a/!b"),
        ("[!a]*", "[!a]*"),
        ("[]]x", "[]]x"),
        ("[*]", "[*]"),
        ("caf\u0065\u0301.md", "caf\u00e9.md"),
    ],
)
def test_a_pattern_is_rewritten_to_its_canonical_form(raw: str, canonical: str) -> None:
    assert normalize_pattern(raw) == canonical


def test_a_trailing_slash_claims_the_whole_directory_as_dir_globstar() -> None:
    assert normalize_pattern("docs/") == normalize_pattern("docs/**") == "docs/**"


def test_case_insensitive_normalisation_folds_case_so_spellings_are_one_target() -> None:
    assert normalize_pattern("SRC/A.py", case_insensitive=True) == "src/a.py"
    assert normalize_pattern("src/a.py", case_insensitive=True) == "src/a.py"
    assert normalize_pattern("Docs/Straße.MD", case_insensitive=True) == "docs/strasse.md"
    assert normalize_pattern("[A-Z]*.PY", case_insensitive=True) == "[a-z]*.py"


def test_case_sensitive_normalisation_keeps_case() -> None:
    assert normalize_pattern("SRC/A.py") == "SRC/A.py"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty"),
        ("./", "empty"),
        (".", "empty"),
        ("..", "'..'"),
        ("a/../b", "'..'"),
        ("a/..", "'..'"),
        ("/etc/passwd", "absolute"),
        ("\\src\\a.py", "absolute"),
        ("//server/share", "absolute"),
        ("C:/src/a.py", "drive letter"),
        ("c:\\src", "drive letter"),
        ("D:", "drive letter"),
        ("!src/a.py", "negation"),
        ("./!src", "negation"),
        (" ", "white space"),
        ("src/api/models.py ", "white space"),
        (" src/a.py", "white space"),
        (".git/config", "'.git'"),
        (".git/**", "'.git'"),
        ("sub/.GIT/hooks/pre-commit", "'.git'"),
        ("a\x00b", "control character"),
        ("a\nb", "control character"),
        ("a\x7fb", "control character"),
        ("a\x85b", "control character"),
        ("a\ud800b", "control character"),
        ("[ab", "unbalanced"),
        ("src/[a-z", "unbalanced"),
        ("[]", "unbalanced"),
        ("[!]", "unbalanced"),
        ("[\\]", "unbalanced"),
        ("[a/b]", "unbalanced"),
        ("[z-a]", "reversed range"),
        ("a**b", "'**'"),
        ("***", "'**'"),
        ("src/**.py", "'**'"),
        ("**a/b", "'**'"),
    ],
)
def test_an_invalid_pattern_is_rejected_naming_the_field_and_the_pattern(
    raw: str, reason: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_pattern(raw, field="paths[2]")
    error = caught.value
    assert error.code == "validation_error"
    assert error.field == "paths[2]"
    assert error.detail.startswith("paths[2]: ")
    assert repr(raw) in error.detail
    assert reason in error.detail
    assert error.to_problem()["field"] == "paths[2]"


def test_the_field_defaults_to_paths() -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_pattern("../x")
    assert caught.value.field == "paths"


def test_a_colon_after_the_first_character_is_not_a_drive_letter() -> None:
    assert normalize_pattern("ab:c/d") == "ab:c/d"
    assert normalize_pattern("a/C:") == "a/C:"


def test_a_concrete_path_treats_glob_characters_literally() -> None:
    assert normalize_path("a[1/b*.txt") == "a[1/b*.txt"
    assert normalize_path(".\\src\\a.py") == "src/a.py"
    assert normalize_path("!notes.md") == "!notes.md"
    assert normalize_path("SRC/A.py", case_insensitive=True) == "src/a.py"


@pytest.mark.parametrize("raw", ["", "src/", "src/.", "/abs", "C:/x", "a/../b", "a\tb", "./"])
def test_a_concrete_path_rejects_directories_and_escapes(raw: str) -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_path(raw, field="changedFiles[0]")
    assert caught.value.field == "changedFiles[0]"
    assert caught.value.code == "validation_error"


def test_has_wildcard_tells_literal_patterns_apart() -> None:
    assert not has_wildcard("src/a.py")
    assert has_wildcard("src/*.py")
    assert has_wildcard("src/[ab].py")
    assert has_wildcard("src/a?.py")


_RAW = st.text(alphabet=list("ab.*?[]!^-/\\Aé"), min_size=0, max_size=12)


@settings(max_examples=400, deadline=None)
@given(raw=_RAW, fold=st.booleans())
def test_normalisation_is_idempotent(raw: str, fold: bool) -> None:
    try:
        once = normalize_pattern(raw, case_insensitive=fold)
    except ValidationError:
        return
    assert normalize_pattern(once, case_insensitive=fold) == once
    assert "\\" not in once
    assert "//" not in once
    assert not once.startswith("/")
    assert not once.endswith("/")
    assert all(segment not in ("", ".", "..") for segment in once.split("/"))
