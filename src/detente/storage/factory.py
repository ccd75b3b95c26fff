"""Choose a storage backend by URL.

- ``memory://``: the in-process reference store (tests, demos);
- ``sqlite:///path``: the embedded default; ``sqlite:///rel/path.db`` is relative to the
  working directory, ``sqlite:////abs/path.db`` absolute (the SQLAlchemy convention);
- ``postgresql://user:password@host:port/dbname`` (or ``postgres://``): several servers
  on one database (needs the ``postgres`` extra: psycopg 3);
- ``etcd://host1:port1,host2:port2,host3:port3[/prefix][?max_txn_ops=N]``: several
  servers on an etcd cluster, keys under ``/<prefix>/`` (default ``detente``; needs the
  ``etcd`` extra); ``max_txn_ops`` is the cluster's ``--max-txn-ops`` (default 128).
"""

from __future__ import annotations

import re
from pathlib import Path

from detente.errors import StoreError, ValidationError
from detente.storage.base import Store

_PASSWORD = re.compile(r"^(?P<head>[a-z][a-z0-9+.-]*://[^/@:]*):[^/@]*@")


def display_url(url: str) -> str:
    """``url`` safe to print: a password in it is replaced by ``***``
    (``postgresql://app:s3cret@db/x`` -> ``postgresql://app:***@db/x``)."""
    return _PASSWORD.sub(r"\g<head>:***@", url, count=1)


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
    if url.startswith(("postgresql://", "postgres://")):
        try:
            from detente.storage.postgres import PostgresStore
        except ImportError as exc:
            raise StoreError(
                "the PostgreSQL store needs psycopg: pip install 'detente[postgres]'"
            ) from exc
        return PostgresStore(url)
    if url.startswith("etcd://"):
        try:
            from detente.storage.etcd import EtcdStore, parse_etcd_url, parse_max_txn_ops
        except ImportError as exc:
            raise StoreError("the etcd store needs aetcd: pip install 'detente[etcd]'") from exc
        endpoints, prefix = parse_etcd_url(url)
        return EtcdStore(endpoints, prefix=prefix, url=url, max_txn_ops=parse_max_txn_ops(url))
    raise ValidationError(
        f"unknown store URL {url!r}: use sqlite:///path/to/detente.db, memory://, "
        "postgresql://user@host:port/db or etcd://host:port,host:port",
        field="store",
    )
