"""The shared resource operations: acquire, renew, release, declare, the counter, reads.

Who may call (the rules, :mod:`detente.operations.authorize` style):

- acquire and the counter: ``claim`` (the grant is the acting principal's); the
  ``sessionId`` and ``claimId`` an acquire names are the caller's own (or an admin's
  naming any), so nobody files a grant under another principal's session or claim;
- renew and release: the grant's own principal (a ticket's, to leave the line), or
  ``admin``; an admin's release of another's grant is the takeover of a stuck slot,
  recorded ``forced`` with the admin as the event's actor;
- declare: ``claim`` to create a resource, ``admin`` to change an existing one's capacity;
- reads: ``read``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from detente.errors import ForbiddenError, NotFoundError
from detente.operations import authorize as who
from detente.operations.declaration import Operation
from detente.security.identity import Principal, current_principal

if TYPE_CHECKING:
    from detente.operations import resource_bodies as rb
    from detente.operations import wire
    from detente.service import Service

__all__ = ["OPERATIONS"]

READ = who.role("read")
_CONFLICTS = ("resource_busy", "revision_conflict", "stale_fencing_token", "lease_expired")


def holder(service: Service, acting: Principal, name: str, body: Any) -> None:
    """The grant (or the place in line) the body names is the caller's, or the caller is
    an admin. A grant that no longer exists is left to the decision, which refuses it
    (``stale_fencing_token``, ``lease_expired``, ``not_found``)."""
    if acting.has("admin"):
        return
    who.role("claim")(service, acting)
    try:
        resource = service.resources.get(name, getattr(body, "repo", None))
    except NotFoundError:
        return
    token, ticket = getattr(body, "fencing_token", None), getattr(body, "ticket", None)
    grant = resource.holder(token) if token is not None else None
    waiter = resource.waiter(ticket) if ticket is not None else None
    owner = grant.principal if grant is not None else waiter.principal if waiter else None
    if owner is not None and owner != acting.name:
        raise ForbiddenError(
            f"the {'grant' if grant else 'place in line'} of {name} belongs to {owner!r}; "
            f"{acting.name!r} may not renew or release it (only its holder or an admin may)",
            principal=acting.name,
            resource=name,
            owner=owner,
        )


def acquirer(service: Service, acting: Principal, name: str, body: Any) -> None:
    """``claim``; and the agent session and the claim the grant names are the caller's
    (or the caller is an admin): another principal's is ``forbidden``, an unknown
    ``claimId`` is ``not_found`` (a session id never registered is anyone's label)."""
    who.role("claim")(service, acting)
    session_id = getattr(body, "session_id", None)
    if session_id:
        who.session_writer(service, acting, session_id)
    claim_id = getattr(body, "claim_id", None)
    if claim_id:
        who.own_claim(service, acting, claim_id)


def declarer(service: Service, acting: Principal, name: str, body: Any) -> None:
    """``claim`` to create a resource (``expectedRevision`` 0); ``admin`` to change one."""
    if getattr(body, "expected_revision", 0) == 0:
        who.role("claim")(service, acting)
    else:
        who.role("admin")(service, acting)


def acquire_resource(service: Service, name: str, body: rb.ResourceAcquireIn) -> wire.ResourceGrant:
    """``{resource, grant, waiting}``: a slot now, or (``wait``) a place in line whose
    grant is a ``resource.granted`` event naming its ``ticket``; ``409 resource_busy``."""
    acquired = service.resources.acquire(body.to_command(name, current_principal().name))
    return cast("wire.ResourceGrant", acquired.to_wire())


def renew_resource(service: Service, name: str, body: rb.ResourceRenewIn) -> wire.ResourceGrant:
    """Heartbeat: ``{resource, grant}`` with the grant's new deadline and lease revision."""
    return cast("wire.ResourceGrant", service.resources.renew(body.to_command(name)).to_wire())


def release_resource(service: Service, name: str, body: rb.ResourceReleaseIn) -> wire.ResourceOut:
    """``{resource}`` after the release (the first waiters got the freed slots)."""
    from detente.domain.resources.model import resource_to_wire

    released = service.resources.release(body.to_command(name, current_principal().name))
    return {"resource": cast("wire.Resource", resource_to_wire(released))}


def declare_resource(service: Service, name: str, body: rb.ResourceDeclareIn) -> wire.ResourceOut:
    """``{resource}`` with its new capacity (CAS on ``expectedRevision``)."""
    from detente.domain.resources.model import resource_to_wire

    declared = service.resources.declare(body.to_command(name))
    return {"resource": cast("wire.Resource", resource_to_wire(declared))}


def next_number(service: Service, name: str, body: rb.ResourceNextIn) -> wire.NumberIssued:
    """``{resource, number, label}``: the counter's next number, handed out once."""
    issued = service.resources.next_number(body.to_command(name))
    return cast("wire.NumberIssued", issued.to_wire())


def get_resource(service: Service, name: str, repo: str | None = None) -> wire.ResourceOut:
    """``{resource}``; ``404 not_found`` for a resource never acquired or declared."""
    from detente.domain.resources.model import resource_to_wire

    found = service.resources.get(name, repo)
    return {"resource": cast("wire.Resource", resource_to_wire(found))}


def list_resources(service: Service, repo: str | None = None) -> wire.ResourceList:
    """``{resources[]}`` by repository and name."""
    from detente.domain.resources.model import resource_to_wire

    found = service.resources.list(repo)
    return {"resources": [cast("wire.Resource", resource_to_wire(r)) for r in found]}


LIST_RESOURCES: Operation[wire.ResourceList] = Operation(
    "list_resources", "GET", "/v1/resources", list_resources, rule=READ, tags=("resources",)
)
GET_RESOURCE: Operation[wire.ResourceOut] = Operation(
    "get_resource", "GET", "/v1/resources/{name}", get_resource, rule=READ, tags=("resources",)
)
ACQUIRE_RESOURCE: Operation[wire.ResourceGrant] = Operation(
    "acquire_resource",
    "POST",
    "/v1/resources/{name}/acquire",
    acquire_resource,
    rule=acquirer,
    conflicts=("resource_busy",),
    tags=("resources",),
)
RENEW_RESOURCE: Operation[wire.ResourceGrant] = Operation(
    "renew_resource",
    "POST",
    "/v1/resources/{name}/renew",
    renew_resource,
    rule=holder,
    conflicts=_CONFLICTS[1:],
    tags=("resources",),
)
RELEASE_RESOURCE: Operation[wire.ResourceOut] = Operation(
    "release_resource",
    "POST",
    "/v1/resources/{name}/release",
    release_resource,
    rule=holder,
    conflicts=_CONFLICTS[1:],
    tags=("resources",),
)
DECLARE_RESOURCE: Operation[wire.ResourceOut] = Operation(
    "declare_resource",
    "POST",
    "/v1/resources/{name}/declare",
    declare_resource,
    rule=declarer,
    conflicts=("revision_conflict",),
    tags=("resources",),
)
NEXT_NUMBER: Operation[wire.NumberIssued] = Operation(
    "next_number",
    "POST",
    "/v1/resources/{name}/next",
    next_number,
    rule=who.role("claim"),
    tags=("resources",),
)

#: In the order the HTTP API registers them.
OPERATIONS: tuple[Operation[Any], ...] = (
    LIST_RESOURCES,
    GET_RESOURCE,
    ACQUIRE_RESOURCE,
    RENEW_RESOURCE,
    RELEASE_RESOURCE,
    DECLARE_RESOURCE,
    NEXT_NUMBER,
)
