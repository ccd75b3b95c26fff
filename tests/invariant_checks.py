"""After every command a service runs in the tests, the protocol invariants must hold.

:func:`checked_execute` wraps :meth:`ServiceCore.execute` (installed for every test by
``conftest.py``): after a command commits, it folds the new events into an independent
:class:`~detente.domain.invariants.Replay` kept per service and repository, and asserts
invariants 1-6 of :mod:`detente.domain.invariants`: the state invariants on the
service's projection, the transition edges and kept scopes along the replay, and that
the service's cached projection equals the replay (with the store's lease rows folded
after the log, as every reader folds them). Large states (bulk tests) skip the
quadratic state check.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from detente.domain.invariants import Replay, state_violations
from detente.domain.state import RepoState
from detente.eventlog.lease_rows import fold_lease_rows
from detente.eventlog.projections import apply_stored
from detente.service.core import ServiceCore
from detente.storage.base import LeaseStore

#: Above this many claims a repo's state check is skipped (bulk and benchmark-like tests).
MAX_CLAIMS = 150

Execute = Callable[..., Any]


def _replay(service: ServiceCore, repo: str) -> Replay:
    replays: dict[str, Replay] = service.__dict__.setdefault("_invariant_replays", {})
    if repo not in replays:
        folded = service.repos[repo].case_insensitive
        state = RepoState(repo, case_insensitive=folded)
        cached = service._states.get(repo)
        state.trees = cached.trees if cached is not None else None  # same severity judge
        replays[repo] = Replay(state)
    replay = replays[repo]
    cached = service._states.get(repo)
    if replay.state.trees is None and cached is not None:
        # A replay made before the service folded its first state judges severity on
        # the same trees once they exist (else every wildcard meeting reads as real).
        replay.state.trees = cached.trees
    return replay


def check(service: ServiceCore, repo: str) -> None:
    """Assert the invariants on ``repo`` as ``service`` sees it now."""
    replay = _replay(service, repo)
    while True:
        batch = service.store.read(since=replay.state.last_seq, limit=1000, repo=repo)
        if not batch:
            break
        if replay.state.last_seq == 0 and batch[0].seq != 1:
            service.__dict__.setdefault("_invariant_partial", set()).add(repo)
        for event in batch:
            replay.fold(event.type, event.data, event.id, partial(apply_stored, event=event))
    if isinstance(service.store, LeaseStore):  # renewals there move rows, not events
        stamp = replay.state.claims.lease_stamp
        fold_lease_rows(replay.state, service.store.leases_after(stamp, repo))
    if repo in service.__dict__.get("_invariant_partial", ()):
        return  # a store that does not retain the whole log: nothing to replay from
    assert not replay.violations, replay.violations
    state = service._states.get(repo)
    if state is None or len(replay.state.claims) > MAX_CLAIMS:
        return
    violations = state_violations(replay.state)
    assert not violations, violations
    if state.last_seq == replay.state.last_seq:
        assert state.claims == replay.state.claims, "cached claims differ from a replay"
        assert vars(state.claims.lookups) == vars(replay.state.claims.lookups), (
            "cached claim lookups differ from a replay"
        )
        assert state.meetings == replay.state.meetings, "cached meetings differ from a replay"
        assert state.meetings.open_ids == {
            m.id for m in replay.state.meetings.values() if m.status.value == "open"
        }, "the cached open-meeting ids differ from a replay's open meetings"


def checked_execute(original: Execute) -> Execute:
    def execute(self: ServiceCore, repo: str, decide_fn: Any) -> Any:
        result = original(self, repo, decide_fn)
        check(self, repo)
        return result

    return execute
