"""Text embeddings kept on disk, so a restarted process does not embed every holder again.

:class:`~detente.index.semantic.Similarity` keeps the embeddings it computed in memory
(each claim objective once per process). A server restart lost them all: the background
prefetch then embedded every holding claim's objective again (10,000 objectives take
about 11 s of both cores at 878 sentences/s, ``bench/semantic.py``), and until it
finished new claims were compared in the lexical mode. This file keeps them across
processes.

One SQLite file per machine (:func:`default_path`, beside the derived int8 graph of
:mod:`detente.index.int8_graph`), rows keyed by ``(model, SHA-256 of the text)``: the
model key names everything that changes a vector (model and tokenizer digests, int8 or
fp32 products, the onnxruntime version, the token limit), so a vector is never read back
by a model that would not have computed it. Vectors are stored as the memory cache holds
them (384 float16 values, 768 bytes); no text is stored. The file is bounded
(:func:`stored_rows`: 100,000 rows, about 90 MB, unless ``DETENTE_EMBED_PERSIST_ROWS``
says otherwise): past it, the least recently used rows go (down to 90% of the bound, so a
full file does not delete on every write).

The file is a cache: any SQLite error (a read-only home, a locked or corrupt file)
disables it for the process, logged once, and embedding goes on without it.
``DETENTE_EMBED_PERSIST=0`` turns it off.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

__all__ = ["EmbeddingStore", "default_path", "persist_enabled", "stored_rows"]

_LOG = logging.getLogger(__name__)

_ROWS = 100_000

#: SQLite limits bound parameters per statement (32,766 since 3.32); stay well below.
_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding (
    model TEXT NOT NULL,
    key BLOB NOT NULL,
    vector BLOB NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (model, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS embedding_used ON embedding (used);
"""


def persist_enabled() -> bool:
    """False when ``DETENTE_EMBED_PERSIST`` is ``0``, ``off``, ``no`` or ``false``."""
    raw = os.environ.get("DETENTE_EMBED_PERSIST", "").strip().lower()
    return raw not in ("0", "off", "no", "false")


def stored_rows() -> int:
    """The most rows the file keeps: ``DETENTE_EMBED_PERSIST_ROWS``, else 100,000."""
    raw = os.environ.get("DETENTE_EMBED_PERSIST_ROWS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else _ROWS


def default_path() -> Path:
    """``<cache dir>/embeddings.sqlite3`` (see :func:`detente.index.int8_graph.cache_dir`)."""
    from detente.index.int8_graph import cache_dir

    return cache_dir() / "embeddings.sqlite3"


class EmbeddingStore:
    """Vectors by ``(model, text key)`` in one SQLite file (thread-safe).

    Args:
        path: the file (created with its directory).
        model: the model key (see the module docstring).
        bound: the most rows kept (all models together), at least 1.
    """

    def __init__(self, path: Path, model: str, bound: int) -> None:
        self.path = path
        self.model = model
        self.bound = max(1, bound)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._rows = 0
        self._clock = 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=5.0, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
            self._rows, self._clock = db.execute(
                "SELECT count(*), coalesce(max(used), 0) FROM embedding"
            ).fetchone()
            self._db = db
        except (OSError, sqlite3.Error) as exc:
            self._disable(exc)

    @property
    def enabled(self) -> bool:
        """Whether the file is in use (False after any error)."""
        return self._db is not None

    def _disable(self, exc: BaseException) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
        _LOG.warning("embedding cache %s disabled for this process: %s", self.path, exc)

    def get(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The stored vectors of ``keys`` (those it holds), marked as just used."""
        with self._lock:
            if self._db is None or not keys:
                return {}
            found: dict[bytes, bytes] = {}
            try:
                unique = list(dict.fromkeys(keys))
                for start in range(0, len(unique), _CHUNK):
                    part = unique[start : start + _CHUNK]
                    marks = ",".join("?" * len(part))
                    found.update(
                        self._db.execute(
                            "SELECT key, vector FROM embedding "
                            f"WHERE model = ? AND key IN ({marks})",
                            (self.model, *part),
                        ).fetchall()
                    )
                if found:
                    self._clock += 1
                    self._db.executemany(
                        "UPDATE embedding SET used = ? WHERE model = ? AND key = ?",
                        [(self._clock, self.model, k) for k in found],
                    )
            except sqlite3.Error as exc:
                self._disable(exc)
                return {}
            return found

    def put(self, vectors: Mapping[bytes, bytes] | Iterable[tuple[bytes, bytes]]) -> None:
        """Store ``key -> vector`` pairs, then trim the file to its bound."""
        items = list(vectors.items() if isinstance(vectors, Mapping) else vectors)
        with self._lock:
            if self._db is None or not items:
                return
            try:
                self._clock += 1
                self._db.execute("BEGIN IMMEDIATE")
                before = self._db.total_changes
                self._db.executemany(
                    "INSERT OR IGNORE INTO embedding (model, key, vector, used) "
                    "VALUES (?, ?, ?, ?)",
                    [(self.model, k, v, self._clock) for k, v in items],
                )
                self._rows += self._db.total_changes - before
                if self._rows > self.bound:
                    self._trim()
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._disable(exc)

    def _trim(self) -> None:
        """Delete the least recently used rows down to 90% of the bound (in the
        caller's transaction)."""
        assert self._db is not None
        keep = max(1, self.bound * 9 // 10)
        (total,) = self._db.execute("SELECT count(*) FROM embedding").fetchone()
        excess = total - keep
        if excess > 0:
            self._db.execute(
                "DELETE FROM embedding WHERE (model, key) IN "
                "(SELECT model, key FROM embedding ORDER BY used LIMIT ?)",
                (excess,),
            )
        (self._rows,) = self._db.execute("SELECT count(*) FROM embedding").fetchone()

    def close(self) -> None:
        """Close the file (later calls find nothing and store nothing)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
