"""Whether a server with authentication serves a store: a marker every process can read.

A server started with ``--auth`` records :data:`MARKER_KEY` in the store's replay ledger
(:func:`~detente.storage.ledger.ledger_for`: a row of the SQLite file or PostgreSQL
database, a key of the etcd cluster) when it starts. A local process on the same store
(the CLI without ``--server``, ``detente mcp`` over stdio) reads it before each write:
on a marked store the local principal holds only the roles ``detente.toml`` grants it
(``[local] roles``), so it cannot abandon or rewrite what authenticated principals own.

The marker is sticky: a store once served with authentication stays marked (its records
belong to authenticated principals, whether or not the server is up). It records the
schemes and the first and latest start, for the refusal to name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from detente.storage.ledger import ledger_for

__all__ = ["MARKER_KEY", "ServedWithAuth", "mark_served_with_auth", "served_with_auth"]

#: The ledger key of the marker.
MARKER_KEY = "detente/served-with-auth"
#: How long the marker is kept, in seconds (a century: the ledger's rows all expire).
_KEPT_SECONDS = 100 * 365 * 24 * 3600.0


@dataclass(frozen=True)
class ServedWithAuth:
    """The marker: which schemes a server accepted, since when.

    Attributes:
        schemes: ``oidc`` and/or ``keys``, of the latest start.
        since: ISO 8601 time of the first start with authentication.
    """

    schemes: tuple[str, ...]
    since: str


def mark_served_with_auth(store: object, schemes: Sequence[str], now: datetime) -> None:
    """Record that a server with authentication (``schemes``) serves ``store`` from ``now``
    on (keeping the first start's time).

    Raises:
        StoreError: ``store_unavailable`` when the store cannot be reached.
    """
    earlier = served_with_auth(store, now)
    since = earlier.since if earlier is not None else now.isoformat()
    value = json.dumps({"schemes": list(schemes), "since": since}).encode()
    ledger_for(store).put(MARKER_KEY, value, expires_at=now.timestamp() + _KEPT_SECONDS)


def served_with_auth(store: object, now: datetime) -> ServedWithAuth | None:
    """The marker of ``store``, or None when no server with authentication ever served it.

    Raises:
        StoreError: ``store_unavailable`` when the store cannot be reached.
    """
    raw = ledger_for(store).get(MARKER_KEY, now=now.timestamp())
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        return ServedWithAuth(tuple(str(s) for s in data["schemes"]), str(data["since"]))
    except (ValueError, KeyError, TypeError):  # unreadable: still served with authentication
        return ServedWithAuth((), "")
