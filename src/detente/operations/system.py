"""The server's own operations: health, the repositories served, pages of the event log,
the audit, and the live event stream (whose HTTP route the HTTP adapter writes itself)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, cast

from detente import __version__
from detente.errors import DetenteError
from detente.operations import authorize as who
from detente.operations.declaration import Operation

#: Reads need the ``read`` role (held by every principal holding a role, unless
#: ``[roles] read`` lists its holders; see :mod:`detente.security.authn`).
READ = who.role("read")

if TYPE_CHECKING:
    from detente.operations import wire
    from detente.service import Service

__all__ = ["MAX_EVENTS_PAGE", "MAX_SEQ", "OPERATIONS", "check_page"]

#: Sequences are 64-bit signed integers in every store.
MAX_SEQ = 2**63 - 1
#: The largest page of ``events``.
MAX_EVENTS_PAGE = 1000


def health(service: Service) -> wire.Health:
    return {"ok": True, "version": __version__, "head": service.head()}


def repos(service: Service) -> wire.RepoList:
    from detente.vcs.repo import current_oid

    out: list[wire.Repo] = []
    for repo in service.list_repos():
        head = None
        if repo.path is not None:
            with contextlib.suppress(DetenteError):
                head = current_oid(repo.path, "HEAD")
        out.append(
            {
                "name": repo.name,
                "path": str(repo.path) if repo.path else None,
                "defaultBranch": repo.default_branch,
                "caseInsensitive": repo.case_insensitive,
                "headOid": head,
            }
        )
    return {"repos": out}


def audit_verify(service: Service, full: bool = False) -> wire.Audit:
    """The audit report; ``full``: replay from event 1 rather than from where the last
    passing audit stopped (:meth:`~detente.service.core.ServiceCore.audit`)."""
    return cast("wire.Audit", service.audit(full=full).to_wire())


def events(
    service: Service, since: int = 0, limit: int = 100, repo: str | None = None
) -> wire.EventPage:
    since, limit = check_page(since, limit)
    page, next_since = service.events(since=since, limit=limit, repo=repo)
    return {
        "events": [cast("wire.Event", e.to_wire()) for e in page],
        "nextSince": next_since,
    }


def check_page(since: object, limit: object) -> tuple[int, int]:
    """``since`` and ``limit`` of an events page, checked like the HTTP edge checks them.

    Raises:
        ValidationError: ``validation_error`` naming ``since`` or ``limit``.
    """
    errors = []
    if not isinstance(since, int) or not 0 <= since <= MAX_SEQ:
        errors.append({"loc": ("query", "since"), "msg": f"must be between 0 and {MAX_SEQ}"})
    if not isinstance(limit, int) or not 1 <= limit <= MAX_EVENTS_PAGE:
        errors.append({"loc": ("query", "limit"), "msg": f"must be 1 to {MAX_EVENTS_PAGE}"})
    if errors or not isinstance(since, int) or not isinstance(limit, int):
        from detente.operations.body import invalid

        raise invalid(errors)
    return since, limit


REPOS: Operation[wire.RepoList] = Operation("repos", "GET", "/v1/repos", repos, rule=READ)
AUDIT_VERIFY: Operation[wire.Audit] = Operation(
    "audit_verify", "GET", "/v1/audit/verify", audit_verify, read_timeout=600.0, rule=READ
)
HEALTH: Operation[wire.Health] = Operation("health", "GET", "/healthz", health, http="custom")
EVENTS: Operation[wire.EventPage] = Operation(
    "events", "GET", "/v1/events", events, http="custom", rule=READ
)
EVENT_STREAM: Operation[dict[str, Any]] = Operation(
    "event_stream", "GET", "/v1/events/stream", http="custom", rule=READ
)

#: In the order the HTTP API registers them: the server's, then the event log's.
SERVER: tuple[Operation[Any], ...] = (REPOS, AUDIT_VERIFY, HEALTH)
EVENT_LOG: tuple[Operation[Any], ...] = (EVENTS, EVENT_STREAM)
OPERATIONS: tuple[Operation[Any], ...] = (*SERVER, *EVENT_LOG)
