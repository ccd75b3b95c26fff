"""Who a local process acts as: ``local`` with every role, unless the store is served with
authentication.

The CLI without ``--server`` and ``detente mcp`` over stdio call the service in-process
(:func:`detente.client.connect.open_local`). On a store no authenticating server ever
served they act as :data:`~detente.security.identity.LOCAL`, which holds every role (the
single-machine setup). On a store a server with ``--auth`` serves
(:mod:`detente.storage.served`), the records belong to authenticated principals: the
local process then holds only the roles ``[local] roles`` of ``detente.toml`` grants,
and with none it may read but not write (``403 forbidden`` naming ``--server`` and
``$DETENTE_TOKEN``). It is asked before every write, so a long-running ``detente mcp``
notices a server that started with authentication after it.

This guards against acting around the server by accident (an agent told to use
``detente`` without ``--server``); a process that can write the store's file can always
change it, so the file's permissions remain the boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from detente.errors import ForbiddenError
from detente.security.identity import LOCAL, Principal
from detente.storage.served import served_with_auth

if TYPE_CHECKING:
    from detente.service import Service

__all__ = ["LOCAL_HINT", "local_principal"]

#: How to act on a store served with authentication (said in every local refusal).
LOCAL_HINT = (
    "act through the server: --server URL (or $DETENTE_URL) with $DETENTE_TOKEN (or "
    "$DETENTE_KEY and $DETENTE_KEY_ID); or grant the local principal roles in "
    'detente.toml ([local] roles = ["claim"])'
)


def local_principal(service: Service, granted: Sequence[str]) -> Principal:
    """The principal a local process writes as, now.

    Args:
        service: the in-process service (its store holds the marker).
        granted: ``[local] roles`` of the repository's ``detente.toml``.

    Returns:
        :data:`LOCAL` (every role) on a store never served with authentication; else the
        principal ``local`` holding exactly ``granted``.

    Raises:
        ForbiddenError: ``forbidden`` on a store served with authentication when
            ``granted`` is empty (the message names ``--server`` and ``$DETENTE_TOKEN``).
        StoreError: ``store_unavailable`` when the store cannot be read.
    """
    marker = served_with_auth(service.store, service.clock.now())
    if marker is None:
        return LOCAL
    if not granted:
        how = f" ({'/'.join(marker.schemes)})" if marker.schemes else ""
        since = f" since {marker.since}" if marker.since else ""
        raise ForbiddenError(
            f"this store is served with authentication{how}{since}: a local process "
            f"(no --server) may read it but not change it; {LOCAL_HINT}",
            principal=LOCAL.name,
            servedWithAuth=True,
        )
    return Principal(LOCAL.name, LOCAL.via, roles=frozenset(granted))
