"""The shared resource operations: counted leases, a line of waiters, a number counter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from detente.client.base import ClientBase
from detente.operations import resources as routes

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = ["ResourceOperations"]


class ResourceOperations(ClientBase):
    """``/v1/resources...``."""

    def list_resources(self, *, repo: str | None = None) -> wire.ResourceList:
        """``GET /v1/resources``: ``{resources[]}``."""
        return self._call(routes.LIST_RESOURCES, params={"repo": repo})

    def get_resource(self, name: str, *, repo: str | None = None) -> wire.ResourceOut:
        """``GET /v1/resources/{name}``: ``{resource}``; ``not_found`` if never used."""
        return self._call(routes.GET_RESOURCE, path={"name": name}, params={"repo": repo})

    def acquire_resource(self, name: str, body: Mapping[str, Any]) -> wire.ResourceGrant:
        """``POST /v1/resources/{name}/acquire`` ``{ttlSeconds?, capacity?, wait?,
        sessionId?, claimId?, note?, repo?}``: ``{resource, grant, waiting}``;
        ``resource_busy`` when full and not waiting."""
        return self._call(routes.ACQUIRE_RESOURCE, path={"name": name}, body=body)

    def renew_resource(self, name: str, body: Mapping[str, Any]) -> wire.ResourceGrant:
        """``POST /v1/resources/{name}/renew`` ``{fencingToken, expectedLeaseRevision,
        ttlSeconds?, repo?}``: ``{resource, grant}``."""
        return self._call(routes.RENEW_RESOURCE, path={"name": name}, body=body)

    def release_resource(self, name: str, body: Mapping[str, Any]) -> wire.ResourceOut:
        """``POST /v1/resources/{name}/release`` ``{fencingToken | ticket,
        expectedLeaseRevision?, repo?}``: ``{resource}``."""
        return self._call(routes.RELEASE_RESOURCE, path={"name": name}, body=body)

    def declare_resource(self, name: str, body: Mapping[str, Any]) -> wire.ResourceOut:
        """``POST /v1/resources/{name}/declare`` ``{capacity, expectedRevision, repo?}``:
        ``{resource}``."""
        return self._call(routes.DECLARE_RESOURCE, path={"name": name}, body=body)

    def next_number(self, name: str, body: Mapping[str, Any]) -> wire.NumberIssued:
        """``POST /v1/resources/{name}/next`` ``{atLeast?, repo?}``: ``{resource, number,
        label}``, the number handed out once."""
        return self._call(routes.NEXT_NUMBER, path={"name": name}, body=body)
