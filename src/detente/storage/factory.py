"""Choose a storage backend by URL: ``memory://`` or ``sqlite:///path``.

``sqlite:///rel/path.db`` is relative to the working directory, ``sqlite:////abs/path.db``
absolute (the SQLAlchemy convention).

``postgresql://`` and ``etcd://`` are reserved for the multi-node backends.
"""

from __future__ import annotations

from pathlib import Path

from detente.errors import ValidationError
from detente.storage.base import Store


def open_store(url: str) -> Store:
    """Open the store named by ``url``.

    Raises:
        ValidationError: ``validation_error`` for an unknown or malformed URL.
        StoreError: ``store_unavailable`` when the backend cannot be opened.
    """
    if url == "memory://" or url.startswith("memory://"):
        from detente.storage.memory import MemoryStore

        return MemoryStore(url)
    if url.startswith("sqlite:///"):
        from detente.storage.sqlite import SqliteStore

        path = url[len("sqlite:///") :]
        if not path:
            raise ValidationError(
                "sqlite URL needs a file path: sqlite:///path/to/detente.db", field="store"
            )
        return SqliteStore(Path(path))
    if url.startswith(("postgresql://", "postgres://", "etcd://")):
        raise ValidationError(
            f"store {url.split(':', 1)[0]!r} is not available in this version; use sqlite:/// or memory://",
            field="store",
        )
    raise ValidationError(
        f"unknown store URL {url!r}: use sqlite:///path/to/detente.db or memory://", field="store"
    )
