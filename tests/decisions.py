"""Given/when/then for the pure domain (importable as ``decisions``): decisions tested
directly, without a store, a service or a clock that moves by itself.

The shape is eventsourcing's::

    given(opened_alice, opened_bob).when(RenewLease(...)).then(ev(LEASE_RENEWED, revision=2))
    given(opened_alice).after(61).when(RenewLease(...)).raises("lease_expired")

- ``given(*history)``: events, or commands (decided on the state so far and folded with the
  reactions they trigger, as the service's command path does; a command of the history
  must succeed). The time is :data:`T0`; :meth:`Given.after` moves it.
- ``when(command)``: a command the table :data:`DECISIONS` knows (its decide function is
  called with the fixed time, the deterministic ids and the policy), or any
  ``(state, context) -> events`` for decisions that need facts gathered outside the domain
  (git facts, deployment facts, a takeover's predecessor facts) or take no command
  (expiry, deadlines).
- ``then(*expected)``: the event types, in order, each with the payload fields it names
  (:func:`ev`); ``raises(code, **extra)``: the refusal's stable code and problem fields.

Every ``when`` also checks that the decision left the state it read unchanged (decisions
are pure).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from detente.domain.claims.commands import (
    ChangeObjective,
    ChangeScope,
    OpenClaim,
    RenewLease,
    SetStatus,
)
from detente.domain.claims.model import Agent
from detente.domain.events import Event
from detente.domain.meetings.commands import Accept, AcceptHandoff, Propose, Resolve
from detente.domain.meetings.resolutions import OwnersOf
from detente.domain.policy import DEFAULT_POLICY, Policy
from detente.domain.state import RepoState
from detente.errors import DetenteError

__all__ = [
    "DECISIONS",
    "T0",
    "Context",
    "Expected",
    "Given",
    "ev",
    "given",
    "open_claim",
]

#: The time every scenario starts at (UTC).
T0 = datetime(2026, 1, 1, tzinfo=UTC)
#: A base commit for claims that do not care which.
BASE = "a" * 40


def no_owners(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """A repository without CODEOWNERS."""
    return [], []


@dataclass
class Context:
    """What a decision gets besides the state: the time, an id source, the policy and the
    CODEOWNERS lookup."""

    now: datetime = T0
    ids: Callable[[str], str] = field(default_factory=lambda: _counting())
    policy: Policy = DEFAULT_POLICY
    owners_of: OwnersOf = no_owners


def _counting() -> Callable[[str], str]:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter):06d}"


#: ``(state, context) -> events``: a decision with its command and facts bound.
Decision = Callable[[RepoState, Context], list[Event]]


def _table() -> dict[type[Any], Callable[[RepoState, Any, Context], list[Event]]]:
    from detente.domain.checks.drift import RecordDrift, decide_drift
    from detente.domain.checks.merge import RecordMergeCheck, decide_merge_check
    from detente.domain.claims.decide import decide_renew, decide_scope_change, decide_status
    from detente.domain.claims.objective import decide_objective_change
    from detente.domain.claims.opening import decide_open
    from detente.domain.gates.deployments import SetPolicy, decide_policy
    from detente.domain.gates.patches import (
        DiscardPatch,
        PublishPatch,
        decide_discard,
        decide_publish,
    )
    from detente.domain.meetings.decide import (
        decide_accept,
        decide_accept_handoff,
        decide_propose,
        decide_resolve,
    )
    from detente.domain.resources import decide as res
    from detente.domain.resources.commands import Acquire, Declare, NextNumber, Release, Renew
    from detente.domain.resources.counter import decide_next

    return {
        OpenClaim: lambda s, c, x: decide_open(s, c, x.now, x.ids, x.policy),
        RenewLease: lambda s, c, x: decide_renew(s, c, x.now, x.ids, x.policy),
        ChangeScope: lambda s, c, x: decide_scope_change(s, c, x.now, x.ids, x.policy),
        ChangeObjective: lambda s, c, x: decide_objective_change(s, c, x.now, x.ids, x.policy),
        SetStatus: lambda s, c, x: decide_status(s, c, x.now, x.ids, x.policy),
        Propose: lambda s, c, x: decide_propose(s, c, x.now, x.ids, x.owners_of),
        Accept: lambda s, c, x: decide_accept(s, c, x.now, x.ids, x.owners_of),
        Resolve: lambda s, c, x: decide_resolve(s, c, x.now, x.ids, x.owners_of),
        AcceptHandoff: lambda s, c, x: decide_accept_handoff(s, c, x.now, x.ids),
        SetPolicy: lambda s, c, x: decide_policy(s, c, x.ids),
        PublishPatch: lambda s, c, x: decide_publish(s, c, x.ids),
        DiscardPatch: lambda s, c, x: decide_discard(s, c, x.ids),
        Acquire: lambda s, c, x: res.decide_acquire(s, c, x.now, x.ids, x.policy),
        Renew: lambda s, c, x: res.decide_renew(s, c, x.now, x.ids, x.policy),
        Release: lambda s, c, x: res.decide_release(s, c, x.now, x.ids),
        Declare: lambda s, c, x: res.decide_declare(s, c, x.now, x.ids),
        NextNumber: lambda s, c, x: decide_next(s, c, x.ids),
        RecordMergeCheck: lambda s, c, x: decide_merge_check(s, c, x.now, x.ids, x.policy),
        RecordDrift: lambda s, c, x: decide_drift(s, c, x.ids),
    }


#: Command type -> its decide function, called with the scenario's context.
DECISIONS = _table()


def open_claim(
    claim_id: str, *paths: str, agent: str = "alice", ttl: int = 60, **kw: Any
) -> OpenClaim:
    """An opening of ``claim_id`` on ``paths`` by ``agent`` (a lease of ``ttl`` seconds)."""
    return OpenClaim(
        repo="demo",
        objective=kw.pop("objective", f"{agent} works on {', '.join(paths)}"),
        base_commit=BASE,
        agent=Agent(id=agent, name=agent),
        lease_ttl_seconds=ttl,
        paths=tuple(paths),
        claim_id=claim_id,
        **kw,
    )


@dataclass(frozen=True)
class Expected:
    """An event type and the payload fields it must carry (others are not compared)."""

    type: str
    fields: dict[str, Any]

    def check(self, event: Event) -> None:
        assert event.type == self.type, f"expected {self.type}, decided {event.type}"
        for key, value in self.fields.items():
            assert key in event.data, f"{event.type} has no {key!r}: {event.data}"
            assert event.data[key] == value, f"{event.type}.{key}: {event.data[key]!r} != {value!r}"


def ev(event_type: str, **fields: Any) -> Expected:
    """An expected event: its type and the payload fields (camelCase) it must carry."""
    return Expected(event_type, fields)


class Given:
    """A state folded from a history, at a time (see the module docstring)."""

    def __init__(self, history: Sequence[Event | object], context: Context) -> None:
        self.context = context
        self.state = RepoState("demo")
        self._fold_at = context.now
        for item in history:
            events = item if isinstance(item, Event) else self._decide(item)
            self.fold(events if isinstance(events, list) else [events])

    def _decide(self, command: object) -> list[Event]:
        if callable(command):
            decision: Decision = command
            return decision(self.state, self.context)
        return DECISIONS[type(command)](self.state, command, self.context)

    def fold(self, events: Sequence[Event]) -> None:
        """Fold ``events`` and the reactions they trigger (as the service commits them)."""
        from detente.domain.meetings.reactions import react

        batch = list(events)
        for _ in range(16):
            if not batch:
                return
            for e in batch:
                seq = self.state.last_seq + 1
                at = self.context.now
                self.state.apply(e.type, e.data, at=at, event_id=e.id, seq=seq, subject=e.subject)
            batch = react(
                self.state,
                [(e.type, e.data) for e in batch],
                self.context.ids,
                self.context.now,
                self.context.policy,
            )
        raise AssertionError("reactions did not settle")

    def after(self, seconds: float) -> Given:
        """The same state, ``seconds`` later."""
        self.context = replace(self.context, now=self.context.now + timedelta(seconds=seconds))
        return self

    def and_(self, *history: Event | object) -> Given:
        """More history, decided and folded at the current time."""
        for item in history:
            events = item if isinstance(item, Event) else self._decide(item)
            self.fold(events if isinstance(events, list) else [events])
        return self

    def when(self, command: object) -> When:
        """Decide ``command`` (a known command or a :data:`Decision`) on this state."""
        before = copy.deepcopy(self.state)
        try:
            outcome: list[Event] | DetenteError = self._decide(command)
        except DetenteError as exc:
            outcome = exc
        _assert_unchanged(before, self.state)
        return When(self, outcome)


def _assert_unchanged(before: RepoState, after: RepoState) -> None:
    assert after.claims == before.claims, "the decision changed the claims it read"
    assert after.meetings == before.meetings, "the decision changed the meetings it read"
    assert after.resources == before.resources, "the decision changed the resources it read"
    assert after.stream_revisions == before.stream_revisions


@dataclass
class When:
    """A decision's outcome: its events, or its refusal."""

    given: Given
    outcome: list[Event] | DetenteError

    def then(self, *expected: Expected | str) -> list[Event]:
        """Assert the decided events: types in order, and the named payload fields.

        Returns:
            The events (for further assertions).
        """
        if isinstance(self.outcome, DetenteError):
            raise AssertionError(f"refused ({self.outcome.code}): {self.outcome.detail}")
        events = self.outcome
        wanted = [e if isinstance(e, Expected) else Expected(e, {}) for e in expected]
        assert [e.type for e in events] == [w.type for w in wanted], [e.type for e in events]
        for event, want in zip(events, wanted, strict=True):
            want.check(event)
        return events

    def raises(self, code: str, **extra: Any) -> DetenteError:
        """Assert the decision was refused with ``code`` and these problem fields."""
        if not isinstance(self.outcome, DetenteError):
            raise AssertionError(f"decided {[e.type for e in self.outcome]}, not {code}")
        assert self.outcome.code == code, f"{self.outcome.code}: {self.outcome.detail}"
        for key, value in extra.items():
            assert self.outcome.extra.get(key) == value, (key, self.outcome.extra)
        return self.outcome

    def and_then(self) -> Given:
        """Fold the decided events (and their reactions) into the scenario: a next step."""
        assert not isinstance(self.outcome, DetenteError), self.outcome
        self.given.fold(self.outcome)
        return self.given


def given(*history: Event | object, context: Context | None = None) -> Given:
    """A scenario whose state is folded from ``history`` (events or commands) at :data:`T0`."""
    return Given(history, context or Context())
