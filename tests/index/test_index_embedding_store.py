"""Embeddings kept on disk: a restarted process reads them instead of running the model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from detente.index import embedding_store, semantic
from detente.index.embedding_store import EmbeddingStore

from semantic_support import require_model


def _key(i: int) -> bytes:
    return i.to_bytes(32, "big")


def test_vectors_are_read_back_only_by_the_model_that_stored_them(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite3"
    first = EmbeddingStore(path, "model-a", 10)
    first.put({_key(1): b"\x01" * 768, _key(2): b"\x02" * 768})
    first.close()

    again = EmbeddingStore(path, "model-a", 10)
    assert again.get([_key(1), _key(3), _key(1)]) == {_key(1): b"\x01" * 768}
    assert EmbeddingStore(path, "model-b", 10).get([_key(1), _key(2)]) == {}


def test_the_file_keeps_the_most_recently_used_rows_within_its_bound(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "e.sqlite3", "m", 10)
    store.put({_key(i): bytes([i]) * 4 for i in range(10)})
    assert set(store.get([_key(0), _key(1)])) == {_key(0), _key(1)}  # used again: kept
    store.put({_key(i): bytes([i]) * 4 for i in range(10, 12)})  # 12 rows > 10: trim to 9

    kept = store.get([_key(i) for i in range(12)])
    assert len(kept) == 9
    assert {_key(0), _key(1), _key(10), _key(11)} <= set(kept)
    assert _key(2) not in kept


def test_an_unreadable_file_disables_the_cache_without_failing(tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    store = EmbeddingStore(path, "m", 10)
    store.put({_key(1): b"x"})
    assert store.get([_key(1)]) == {}
    assert not store.enabled


def test_a_restarted_process_embeds_only_texts_no_earlier_process_saw(tmp_path: Path) -> None:
    require_model()
    script = (
        "import json, pathlib, sys\n"
        "from detente.index import embedding_store, semantic\n"
        "embedding_store.default_path = lambda: pathlib.Path(sys.argv[2])\n"
        "sim = semantic.Similarity()\n"
        "calls = []\n"
        "real = sim._model.embed\n"
        "sim._model.embed = lambda t: (calls.append(list(t)), real(t))[1]\n"
        "texts = json.loads(sys.argv[1])\n"
        "vectors = sim.embed(texts)\n"
        "print(json.dumps({'calls': calls, 'first': vectors[0][:4].tolist()}))\n"
    )
    env = {"DETENTE_EMBED_PERSIST": "1"}

    def run(texts: list[str]) -> dict[str, Any]:
        import json
        import os

        done = subprocess.run(
            [sys.executable, "-c", script, json.dumps(texts), str(tmp_path / "e.sqlite3")],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
            env={**os.environ, **env},
        )
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    holders = ["retry failed ledger postings", "translate the install guide"]
    first = run(holders)
    assert first["calls"] == [holders]
    restarted = run([*holders, "a new objective"])
    assert restarted["calls"] == [["a new objective"]]
    assert restarted["first"] == first["first"]  # the same vector, read back


def test_embeddings_are_not_written_when_persistence_is_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_model()
    monkeypatch.setenv("DETENTE_EMBED_PERSIST", "0")
    monkeypatch.setattr(embedding_store, "default_path", lambda: tmp_path / "e.sqlite3")
    semantic.Similarity().embed(["an objective"])
    assert not (tmp_path / "e.sqlite3").exists()
