"""Shared resource use cases (API.md *(added)* "Shared resources": ``/v1/resources``).

Every command goes through the core's command path (:meth:`ServiceCore.run`: one
group-committed transaction per batch, expiry first), so capacity, the line of waiters,
the fencing counter and the number counter are decided on the state the store
serialises: two servers on one store never both grant a last slot, expire one grant
twice, or hand out one number twice (the loser of the stream-revision race decides again).
The decisions are pure (:mod:`detente.domain.resources.decide`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from detente.domain import events as ev
from detente.domain.resources.commands import Acquire, Declare, NextNumber, Release, Renew
from detente.domain.resources.counter import decide_next
from detente.domain.resources.decide import (
    decide_acquire,
    decide_declare,
    decide_release,
    decide_renew,
)
from detente.domain.resources.model import (
    Resource,
    check_resource_name,
    grant_to_wire,
    number_label,
    resource_id,
    resource_subject,
    resource_to_wire,
)
from detente.domain.state import RepoState
from detente.errors import NotFoundError, ValidationError
from detente.eventlog.envelope import StoredEvent
from detente.service.core import ServiceCore

__all__ = ["Acquired", "Issued", "ResourcesService"]


@dataclass(frozen=True)
class Acquired:
    """What an acquire (or a renewal) left: the resource, the caller's grant (None while
    it waits in line) and, while it waits, its ticket and place in line (from 1)."""

    resource: Resource
    ticket: str | None
    fencing_token: int | None

    def to_wire(self) -> dict[str, Any]:
        """``{resource, grant|null, waiting: {ticket, position}|null}``."""
        grant = self.resource.holder(self.fencing_token) if self.fencing_token else None
        waiting = None
        if grant is None and self.ticket is not None:
            line = [w.ticket for w in self.resource.waiters]
            if self.ticket in line:
                waiting = {"ticket": self.ticket, "position": line.index(self.ticket) + 1}
        return {
            "resource": resource_to_wire(self.resource),
            "grant": grant_to_wire(grant) if grant is not None else None,
            "waiting": waiting,
        }


@dataclass(frozen=True)
class Issued:
    """A number the counter handed out, and the resource after it."""

    resource: Resource
    number: int

    def to_wire(self) -> dict[str, Any]:
        """``{resource, number, label}`` (``label``: at least four digits, ``0042``)."""
        return {
            "resource": resource_to_wire(self.resource),
            "number": self.number,
            "label": number_label(self.number),
        }


def _mine(stored: list[StoredEvent], subject: str, *types: str) -> StoredEvent | None:
    """The command's last event of ``types`` on ``subject`` (timeouts come before it)."""
    return next((e for e in reversed(stored) if e.subject == subject and e.type in types), None)


class ResourcesService:
    """Acquire, renew, release, declare and count shared resources; read them."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def resolve_repo(self, repo: str | None) -> str:
        """``repo`` when given, else the only repository served.

        Raises:
            ValidationError: ``validation_error`` (field ``repo``): an unknown name, or
                several repositories served and none named.
        """
        if repo:
            return self.core.repo(repo).name
        if len(self.core.repos) == 1:
            return next(iter(self.core.repos))
        known = ", ".join(sorted(self.core.repos))
        raise ValidationError(
            f"this server coordinates several repositories ({known}): name one in repo",
            field="repo",
        )

    def _current(self, state: RepoState, name: str) -> Resource:
        found = state.resources.get(resource_id(state.repo, name))
        if found is None:
            raise NotFoundError(f"no resource {name!r} in {state.repo}", resource=name)
        return found

    def acquire(self, cmd: Acquire) -> Acquired:
        """A slot now, a place in line (``cmd.wait``), or ``resource_busy``.

        Returns:
            The resource with the caller's grant, or its ticket while it waits (the
            ``resource.granted`` event naming that ticket tells it when its turn came).

        Raises:
            ValidationError, ResourceBusy: see :func:`~detente.domain.resources.decide.
                decide_acquire`.
        """
        repo = self.resolve_repo(cmd.repo)
        name = check_resource_name(cmd.name)
        subject = resource_subject(repo, name)

        def view(state: RepoState, stored: list[StoredEvent]) -> Acquired:
            event = _mine(stored, subject, ev.RESOURCE_GRANTED, ev.RESOURCE_QUEUED)
            ticket = str(event.data["ticket"]) if event is not None else None
            token = event.data.get("fencingToken") if event is not None else None
            return Acquired(self._current(state, name), ticket, int(token) if token else None)

        return self.core.run(
            repo,
            lambda s: decide_acquire(
                s, cmd, self.core.clock.now(), self.core.ids, self.core.policy
            ),
            view,
        )

    def renew(self, cmd: Renew) -> Acquired:
        """Heartbeat a grant. Raises ``lease_expired``, ``stale_fencing_token``,
        ``revision_conflict``, ``not_found``, ``validation_error``."""
        repo = self.resolve_repo(cmd.repo)
        return self.core.run(
            repo,
            lambda s: decide_renew(s, cmd, self.core.clock.now(), self.core.ids, self.core.policy),
            lambda s, _: Acquired(self._current(s, cmd.name), None, cmd.fencing_token),
        )

    def release(self, cmd: Release) -> Resource:
        """Give back a grant (the waiters first in line get the freed slots in the same
        transaction) or leave the line. Raises as :meth:`renew`."""
        repo = self.resolve_repo(cmd.repo)
        return self.core.run(
            repo,
            lambda s: decide_release(s, cmd, self.core.clock.now(), self.core.ids),
            lambda s, _: self._current(s, cmd.name),
        )

    def declare(self, cmd: Declare) -> Resource:
        """Create a resource with a capacity, or change it (CAS on its revision)."""
        repo = self.resolve_repo(cmd.repo)
        return self.core.run(
            repo,
            lambda s: decide_declare(s, cmd, self.core.clock.now(), self.core.ids),
            lambda s, _: self._current(s, cmd.name),
        )

    def next_number(self, cmd: NextNumber) -> Issued:
        """The counter's next number, handed out exactly once."""
        repo = self.resolve_repo(cmd.repo)
        name = check_resource_name(cmd.name)
        subject = resource_subject(repo, name)

        def view(state: RepoState, stored: list[StoredEvent]) -> Issued:
            event = _mine(stored, subject, ev.RESOURCE_NUMBER_ISSUED)
            assert event is not None  # the decision always issues one
            return Issued(self._current(state, name), int(event.data["number"]))

        return self.core.run(repo, lambda s: decide_next(s, cmd, self.core.ids), view)

    def get(self, name: str, repo: str | None = None) -> Resource:
        """One resource now (due grants expired first). Raises ``not_found``."""
        name = check_resource_name(name)
        repo = self.resolve_repo(repo)
        state = self.core.fresh(repo)
        with self.core.lock(repo):
            return self._current(state, name)

    def list(self, repo: str | None = None) -> list[Resource]:
        """Every resource (of one repository, or all), by repository and name."""
        out: list[Resource] = []
        for name in self.core.names(repo):
            state = self.core.fresh(name)
            with self.core.lock(name):
                out += sorted(state.resources.values(), key=lambda r: r.name)
        return out
