"""Resource decisions: acquire, renew, release, declare, the counter, and expiry (pure).

The rules are the claims' rules, for a thing that is not a file:

- **capacity**: at most ``capacity`` grants are live at once; an acquire that finds no
  free slot is ``resource_busy`` (with the resource as ``current``), or with ``wait``
  queues and is granted, in arrival order, when a slot frees (``resource.granted`` in the
  same transaction as the release, expiry or capacity change that freed it);
- **fencing**: every grant gets the repository's next fencing token (the counter claims
  use: one monotonic sequence per repository); a renewal or release presents it, and a
  token that no longer holds is ``stale_fencing_token`` (``lease_expired`` when the sweep
  expired it);
- **compare-and-swap**: a renewal names the lease revision it read (``revision_conflict``
  otherwise), a declaration the resource's revision;
- **expiry** (:mod:`.expiry`) is run by the command path before every command and by the
  sweep, in the repository's serialised transaction, so a grant expires exactly once
  whichever server sees its deadline first;
- **the counter** (:mod:`.counter`) hands out ``max(last + 1, atLeast)``, once: two
  servers deciding the same number race on the stream revision and the loser decides again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.policy import DEFAULT_POLICY, IdSource, Policy
from detente.domain.resources.commands import Acquire, Declare, Release, Renew
from detente.domain.resources.grants import Tokens, event, grant_event, promote
from detente.domain.resources.model import (
    MAX_CAPACITY,
    Grant,
    Resource,
    Waiter,
    check_resource_name,
    resource_id,
    resource_to_wire,
)
from detente.domain.state import RepoState
from detente.domain.validation import check_revision, text_field, ttl_field
from detente.errors import (
    LeaseExpired,
    NotFoundError,
    ResourceBusy,
    RevisionConflict,
    StaleFencingToken,
    ValidationError,
)

__all__ = ["decide_acquire", "decide_declare", "decide_release", "decide_renew"]


def _capacity(value: int, fld: str = "capacity") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{fld} must be an integer", field=fld)
    if not 1 <= value <= MAX_CAPACITY:
        raise ValidationError(f"{fld} must be between 1 and {MAX_CAPACITY}, got {value}", field=fld)
    return value


def _optional_text(value: str | None, fld: str, policy: Policy) -> str | None:
    if value is None:
        return None
    return text_field(value, fld, policy, required=False, identifier=True) or None


def _resource(state: RepoState, name: str) -> Resource:
    found = state.resources.get(resource_id(state.repo, name))
    if found is None:
        raise NotFoundError(f"no resource {name!r} in {state.repo}", resource=name)
    return found


def _gone(resource: Resource, token: int) -> LeaseExpired | StaleFencingToken:
    """The refusal for a token that holds no slot of ``resource``."""
    ending = resource.ending(token)
    current = resource_to_wire(resource)
    if ending is not None and ending.how == "expired":
        return LeaseExpired(
            f"the grant of {resource.name} with fencing token {token} expired at "
            f"{format_time(ending.at)}: acquire the resource again",
            resource=resource.name,
            fencingToken=token,
            current=current,
        )
    latest = max((g.fencing_token for g in resource.holders), default=None)
    return StaleFencingToken(
        f"fencing token {token} holds no slot of {resource.name}"
        + (f" (the newest grant holds {latest})" if latest is not None else ""),
        expected=latest,
        actual=token,
        resource=resource.name,
        current=current,
    )


def _holding(resource: Resource, token: int) -> Grant:
    grant = resource.holder(token)
    if grant is None:
        raise _gone(resource, token)
    return grant


def _check_lease(resource: Resource, grant: Grant, expected: int) -> None:
    if isinstance(expected, bool) or not isinstance(expected, int):
        raise ValidationError(
            "expectedLeaseRevision must be an integer", field="expectedLeaseRevision"
        )
    if expected != grant.lease_revision:
        raise RevisionConflict(
            f"the lease of {resource.name} token {grant.fencing_token} is at revision "
            f"{grant.lease_revision}, not {expected}: re-read it and decide again",
            expected=expected,
            actual=grant.lease_revision,
            current=resource_to_wire(resource),
            event_ids=[resource.last_event_id] if resource.last_event_id else [],
        )


def decide_acquire(
    state: RepoState,
    cmd: Acquire,
    now: datetime,
    ids: IdSource,
    policy: Policy = DEFAULT_POLICY,
) -> list[ev.Event]:
    """A slot (``resource.granted``), a place in line (``resource.queued``), or a refusal.

    A resource not seen before is declared first (``resource.declared`` with
    ``cmd.capacity``, default 1).

    Raises:
        ValidationError: ``validation_error`` naming ``name``, ``ttlSeconds``,
            ``capacity`` (out of range, or not the resource's declared capacity),
            ``sessionId``, ``claimId`` or ``note``.
        ResourceBusy: ``resource_busy`` (every slot held, ``wait`` not asked), with the
            resource as ``current``.
    """
    name = check_resource_name(cmd.name)
    ttl = ttl_field(cmd.ttl_seconds, "ttlSeconds", policy)
    capacity = _capacity(cmd.capacity) if cmd.capacity is not None else None
    session = _optional_text(cmd.session_id, "sessionId", policy)
    claim = _optional_text(cmd.claim_id, "claimId", policy)
    note = text_field(cmd.note, "note", policy, required=False)
    existing = state.resources.get(resource_id(state.repo, name))
    out: list[ev.Event] = []
    if existing is None:
        out.append(event(ids, state.repo, name, ev.RESOURCE_DECLARED, capacity=capacity or 1))
        holders, waiting, limit = 0, 0, capacity or 1
    else:
        if capacity is not None and capacity != existing.capacity:
            raise ValidationError(
                f"resource {name} has capacity {existing.capacity}, not {capacity}: "
                "change it with a declaration (detente resource declare)",
                field="capacity",
            )
        holders, waiting, limit = len(existing.holders), len(existing.waiters), existing.capacity
    waiter = Waiter(ids("tkt"), cmd.principal, session, claim, note, ttl, now)
    if holders < limit and not waiting:
        out.append(grant_event(ids, state.repo, name, waiter, Tokens(state).next(), now))
        return out
    if not cmd.wait:
        assert existing is not None  # a new resource always has a free slot
        raise ResourceBusy(
            f"every slot of {name} is held ({len(existing.holders)} of {existing.capacity}"
            + (f", {waiting} waiting" if waiting else "")
            + "): wait for a slot (--wait) or try later",
            resource=name,
            current=resource_to_wire(existing),
        )
    out.append(
        event(
            ids,
            state.repo,
            name,
            ev.RESOURCE_QUEUED,
            ticket=waiter.ticket,
            principal=waiter.principal,
            sessionId=session,
            claimId=claim,
            note=note,
            ttlSeconds=ttl,
            position=waiting + 1,
        )
    )
    return out


def decide_renew(
    state: RepoState,
    cmd: Renew,
    now: datetime,
    ids: IdSource,
    policy: Policy = DEFAULT_POLICY,
) -> list[ev.Event]:
    """``resource.renewed``: the grant's lease runs until ``now + ttlSeconds``.

    Raises:
        NotFoundError: ``not_found`` (no such resource).
        LeaseExpired: ``lease_expired`` (the grant expired; never renewed back).
        StaleFencingToken: ``stale_fencing_token`` (the token holds no slot).
        RevisionConflict: ``revision_conflict`` (another renewal came first).
        ValidationError: ``validation_error`` naming ``name`` or ``ttlSeconds``.
    """
    resource = _resource(state, check_resource_name(cmd.name))
    ttl = ttl_field(cmd.ttl_seconds, "ttlSeconds", policy)
    grant = _holding(resource, cmd.fencing_token)
    _check_lease(resource, grant, cmd.expected_lease_revision)
    if grant.expires_at <= now:  # the command path expires first; kept for a pure caller
        raise LeaseExpired(
            f"the grant of {resource.name} with fencing token {grant.fencing_token} expired",
            resource=resource.name,
            fencingToken=grant.fencing_token,
        )
    return [
        event(
            ids,
            state.repo,
            resource.name,
            ev.RESOURCE_RENEWED,
            fencingToken=grant.fencing_token,
            leaseRevision=grant.lease_revision + 1,
            ttlSeconds=ttl,
            expiresAt=format_time(now + timedelta(seconds=ttl)),
        )
    ]


def decide_release(state: RepoState, cmd: Release, now: datetime, ids: IdSource) -> list[ev.Event]:
    """``resource.released`` and the grants it lets the waiters in line have; or
    ``resource.left_queue`` for a ``ticket`` still waiting.

    Raises:
        ValidationError: neither or both of ``fencingToken`` and ``ticket``.
        NotFoundError: no such resource, or a ticket that is not in line.
        LeaseExpired, StaleFencingToken, RevisionConflict: as :func:`decide_renew`.
    """
    resource = _resource(state, check_resource_name(cmd.name))
    if (cmd.fencing_token is None) == (cmd.ticket is None):
        raise ValidationError(
            "name exactly one of fencingToken (a grant) and ticket (a place in line)",
            field="fencingToken",
        )
    if cmd.ticket is not None:
        waiter = resource.waiter(cmd.ticket)
        if waiter is None:
            granted = next((g for g in resource.holders if g.ticket == cmd.ticket), None)
            hint = (
                f": it was granted fencing token {granted.fencing_token}; release that"
                if granted is not None
                else ""
            )
            raise NotFoundError(
                f"ticket {cmd.ticket} is not waiting for {resource.name}{hint}",
                resource=resource.name,
                ticket=cmd.ticket,
            )
        return [event(ids, state.repo, resource.name, ev.RESOURCE_LEFT_QUEUE, ticket=waiter.ticket)]
    assert cmd.fencing_token is not None
    grant = _holding(resource, cmd.fencing_token)
    if cmd.expected_lease_revision is not None:
        _check_lease(resource, grant, cmd.expected_lease_revision)
    out = [
        event(
            ids,
            state.repo,
            resource.name,
            ev.RESOURCE_RELEASED,
            fencingToken=grant.fencing_token,
            holder=grant.principal,
            forced=cmd.by != grant.principal,
        )
    ]
    left = len(resource.holders) - 1
    return out + promote(resource, left, resource.capacity, Tokens(state), ids, now)


def decide_declare(state: RepoState, cmd: Declare, now: datetime, ids: IdSource) -> list[ev.Event]:
    """``resource.declared`` (a new resource at ``expectedRevision`` 0, or a new capacity),
    and the grants a larger capacity lets the waiters have. A smaller capacity revokes
    nothing: the holders keep their slots and no new grant is made until one is free.

    Raises:
        ValidationError: ``name`` or ``capacity``.
        RevisionConflict: ``revision_conflict`` (``expectedRevision`` is not current).
    """
    name = check_resource_name(cmd.name)
    capacity = _capacity(cmd.capacity)
    existing = state.resources.get(resource_id(state.repo, name))
    if existing is None:
        if cmd.expected_revision != 0:
            raise RevisionConflict(
                f"resource {name} does not exist (revision 0), not revision "
                f"{cmd.expected_revision}",
                expected=cmd.expected_revision,
                actual=0,
            )
        return [event(ids, state.repo, name, ev.RESOURCE_DECLARED, capacity=capacity)]
    check_revision("resource", existing, cmd.expected_revision, resource_to_wire)
    declared = event(
        ids,
        state.repo,
        name,
        ev.RESOURCE_DECLARED,
        capacity=capacity,
        previousCapacity=existing.capacity,
    )
    held = len(existing.holders)
    return [declared, *promote(existing, held, capacity, Tokens(state), ids, now)]
