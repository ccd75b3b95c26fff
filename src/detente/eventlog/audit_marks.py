"""Where the last passing ``audit verify`` stopped, so the next one verifies only what is new.

After an audit that found nothing, the store keeps (in its snapshot slots, under names
no repository can take) the verified head and, per repository, the audit's own replay at
that head:

- ``audit:``: the verified head ``(seq, hash)``; its body lists the repositories replayed;
- ``audit:<repo>``: the replayed state of ``<repo>`` (a projection snapshot, with every
  check of :func:`~detente.eventlog.snapshots.restore`: this release's fold, the digest,
  the log's event at its position with the hash it names).

The next audit checks that the log still holds the verified head with its hash (a log
rewritten at or before it is a broken link), then checks the chain link by link from
there and folds only the new events into the kept replays; the projection rows, the lease
rows and the state invariants are compared on the result as in a full audit. What it
does not re-check: the events before the mark (a rewrite there that keeps the mark's own
hash needs a hash collision, but the *replay* before the mark is trusted) and the
transition invariants of events before it. ``audit verify --full`` replays from zero.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Protocol

from detente.domain.state import RepoState
from detente.eventlog.envelope import StoredEvent
from detente.eventlog.snapshots import Snapshot, restore, snapshot_version, take_snapshot

__all__ = ["AuditMark", "MarkStore", "load_mark", "save_mark"]

_HEAD = "audit:"


class MarkStore(Protocol):
    """The store capabilities the marks need (:class:`~detente.storage.base.SnapshotStore`
    and ``read``)."""

    def load_snapshot(self, repo: str) -> Snapshot | None: ...

    def save_snapshot(self, snapshot: Snapshot) -> None: ...

    def read(
        self, *, since: int = 0, limit: int = 1000, repo: str | None = None
    ) -> list[StoredEvent]: ...


@dataclasses.dataclass
class AuditMark:
    """Where the last passing audit stopped.

    Attributes:
        seq / hash: the verified head.
        states: the audit's replay of each repository at the head, with the hash of the
            repository's last event.
        moved: the log no longer holds ``hash`` at ``seq`` (the log was rewritten).
    """

    seq: int
    hash: str
    states: dict[str, tuple[RepoState, str]]
    moved: bool = False


def _named(store: MarkStore, seq: int) -> StoredEvent | None:
    found = store.read(since=seq - 1, limit=1)
    return found[0] if found and found[0].seq == seq else None


def load_mark(store: MarkStore, case_insensitive: Mapping[str, bool]) -> AuditMark | None:
    """The last passing audit's mark, or None (none kept, or one this release cannot use:
    the next audit replays from zero)."""
    head = store.load_snapshot(_HEAD)
    if head is None or head.version != snapshot_version() or head.seq <= 0:
        return None
    if hashlib.sha256(head.body).hexdigest() != head.digest:
        return None
    at = _named(store, head.seq)
    if at is None or at.hash != head.hash:
        return AuditMark(head.seq, head.hash, {}, moved=True)
    states: dict[str, tuple[RepoState, str]] = {}
    for repo in json.loads(head.body):
        kept = store.load_snapshot(_HEAD + repo)
        if kept is None:
            return None
        folded = case_insensitive.get(repo, False)
        state = restore(
            dataclasses.replace(kept, repo=repo),
            repo=repo,
            case_insensitive=folded,
            named=_named(store, kept.seq),
        )
        if state is None:
            return None
        states[repo] = (state, kept.hash)
    return AuditMark(head.seq, head.hash, states)


def save_mark(
    store: MarkStore, head: tuple[int, str], states: Mapping[str, tuple[RepoState, str]]
) -> None:
    """Keep ``head`` as verified and each repository's replay (``state``, the hash of its
    last event). Call only after an audit that found nothing; an empty log keeps nothing."""
    if head[0] <= 0:
        return
    for repo, (state, last_hash) in sorted(states.items()):
        if state.last_seq:
            kept = take_snapshot(state, last_hash)
            store.save_snapshot(dataclasses.replace(kept, repo=_HEAD + repo))
    body = json.dumps(sorted(r for r, (s, _) in states.items() if s.last_seq)).encode()
    digest = hashlib.sha256(body).hexdigest()
    store.save_snapshot(Snapshot(_HEAD, head[0], head[1], snapshot_version(), digest, body))
