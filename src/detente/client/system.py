"""The server's own operations and its event log: health, the repositories served, pages
of events, the audit (following the log live is :meth:`~detente.client.base.ClientBase.watch`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from detente.client.base import ClientBase
from detente.operations import system as routes

if TYPE_CHECKING:
    from detente.operations import wire

__all__ = ["SystemOperations"]


class SystemOperations(ClientBase):
    """``/healthz``, ``/v1/repos``, ``/v1/events`` and ``/v1/audit/verify``."""

    def health(self) -> wire.Health:
        """``GET /healthz``: ``{ok, version, head}``."""
        return self._call(routes.HEALTH)

    def repos(self) -> wire.RepoList:
        """``GET /v1/repos``: ``{repos[{name, path, defaultBranch, caseInsensitive, headOid}]}``."""
        return self._call(routes.REPOS)

    def events(
        self, *, since: int = 0, limit: int = 100, repo: str | None = None
    ) -> wire.EventPage:
        """``GET /v1/events``: ``{events[], nextSince}`` (``since`` >= 0, ``limit`` 1 to 1000)."""
        return self._call(routes.EVENTS, params={"since": since, "limit": limit, "repo": repo})

    def audit_verify(self, *, full: bool = False) -> wire.Audit:
        """``GET /v1/audit/verify``: ``{ok, events, headHash}`` or the first broken link;
        ``events`` counts the events checked (only those after the last passing audit,
        unless ``full``: ``?full=true`` replays from event 1)."""
        return self._call(routes.AUDIT_VERIFY, params={"full": True} if full else None)
