"""Projection snapshots: a repository's folded state, saved so a process starts from it.

A snapshot is the :class:`~detente.domain.state.RepoState` of one repository after the
event ``seq`` (whose hash it names), serialized with :mod:`pickle` (protocol 5) and
compressed with zlib. A process catches up from the newest snapshot plus the log's tail
instead of replaying from event 1; ``audit verify`` never reads snapshots (it replays
from zero and compares the projection rows).

A snapshot is only a cache, never an authority. :func:`restore` ignores it (and says why
in one ``detente.storage`` log line) unless every check holds:

- its ``version`` equals :func:`snapshot_version`: the format number plus a fingerprint
  of the fold's source code (``domain/`` and the upcasters), so a release or a local edit
  that changes how events fold never reads a state folded by other code;
- its body's SHA-256 equals the ``digest`` it was saved with;
- the log holds the event ``seq`` with exactly the ``hash`` the snapshot names, in the
  snapshot's repository (a snapshot of another log, or of a log that was rebuilt, fails);
- the body unpickles with only the classes a state is made of (:class:`_StateUnpickler`
  refuses any other global, so a row written by someone else cannot run code).
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import pickle
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from detente.domain.state import RepoState
from detente.eventlog.envelope import StoredEvent

if TYPE_CHECKING:
    import logging

__all__ = [
    "SNAPSHOT_FORMAT",
    "Snapshot",
    "restore",
    "snapshot_version",
    "take_snapshot",
    "thaw",
]

#: The layout of :class:`Snapshot` bodies; bump it when the encoding changes.
SNAPSHOT_FORMAT = 1


def _log() -> logging.Logger:
    """The store's logger (``logging`` is imported on the first warning: a read never
    warns, and importing it costs a one-shot CLI call more than its read)."""
    import logging

    return logging.getLogger("detente.storage")


_PACKAGE = Path(__file__).resolve().parents[1]


@functools.cache
def snapshot_version() -> str:
    """``"<format>-<16 hex digits>"``: the format and a SHA-256 of the fold's sources
    (every ``domain/**/*.py`` and ``eventlog/upcasting.py``, path and bytes, in order).

    Every process computes it once (local mode: once per command), so it walks with
    :func:`os.walk` and plain strings rather than :mod:`pathlib` (40% less CPU)."""
    package = str(_PACKAGE)
    found: list[str] = []
    for root, dirs, files in os.walk(os.path.join(package, "domain")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found += [os.path.join(root, name) for name in files if name.endswith(".py")]
    sources = sorted(found, key=lambda source: source.split(os.sep))  # as sorted Paths
    sources.append(os.path.join(package, "eventlog", "upcasting.py"))
    digest = hashlib.sha256()
    cut = len(package) + len(os.sep)
    for source in sources:
        relative = source[cut:].replace(os.sep, "/")
        digest.update(relative.encode() + b"\0")
        with open(source, "rb") as text:
            digest.update(text.read() + b"\0")
    return f"{SNAPSHOT_FORMAT}-{digest.hexdigest()[:16]}"


@dataclass(frozen=True)
class Snapshot:
    """One repository's folded state as a store keeps it.

    Attributes:
        repo: the repository.
        seq / hash: the last event folded into the state (the repository's last event at
            the time) and its hash: the chain position the snapshot claims.
        version: :func:`snapshot_version` of the process that took it.
        digest: SHA-256 (hex) of ``body``.
        body: the zlib-compressed pickle of the state (bytes).
    """

    repo: str
    seq: int
    hash: str
    version: str
    digest: str
    body: bytes


def take_snapshot(state: RepoState, head_hash: str) -> Snapshot:
    """The snapshot of ``state``, whose last folded event (``state.last_seq``) has
    ``head_hash``. The state's tree source (it reads git) is left out and set again by
    whoever restores it. Costs about 75 µs per claim on a 2-core machine (measured)."""
    trees, state.trees = state.trees, None
    try:
        raw = pickle.dumps(state, protocol=5)
    finally:
        state.trees = trees
    body = zlib.compress(raw, 1)
    return Snapshot(
        repo=state.repo,
        seq=state.last_seq,
        hash=head_hash,
        version=snapshot_version(),
        digest=hashlib.sha256(body).hexdigest(),
        body=body,
    )


def restore(
    snapshot: Snapshot, *, repo: str, case_insensitive: bool, named: StoredEvent | None
) -> RepoState | None:
    """The state saved in ``snapshot``, or None (with a log line saying why) when any check
    of the module docstring fails.

    Args:
        snapshot: as loaded from the store.
        repo / case_insensitive: the repository the caller serves and its path folding.
        named: the log's event at ``snapshot.seq`` (None when the log has none).
    """
    reason = _refusal(snapshot, repo, named)
    state: RepoState | None = None
    if reason is None:
        try:
            loaded = thaw(snapshot)
        except Exception as exc:  # any undecodable body is a reason to replay, never a crash
            reason = f"its body does not decode ({type(exc).__name__}: {exc})"
        else:
            if not isinstance(loaded, RepoState) or loaded.repo != repo:
                reason = "its body is not this repository's state"
            elif loaded.case_insensitive != case_insensitive or loaded.last_seq != snapshot.seq:
                reason = "its state was folded with other settings"
            else:
                state = loaded
    if reason is not None:
        _log().warning(
            "ignoring the projection snapshot of %s at seq %d: %s; replaying the log",
            repo,
            snapshot.seq,
            reason,
            extra={"repo": repo, "seq": snapshot.seq, "snapshot_version": snapshot.version},
        )
    return state


def thaw(snapshot: Snapshot) -> Any:
    """The object pickled in ``snapshot``'s body, unchecked (for a copy this process took
    itself; :func:`restore` for anything read from a store).

    Raises:
        zlib.error / pickle.UnpicklingError: an undecodable body or a foreign global.
    """
    return _StateUnpickler(io.BufferedReader(_Inflating(snapshot.body))).load()


class _Inflating(io.RawIOBase):
    """The decompressed body as a stream, inflated :data:`_INFLATE_CHUNK` bytes of input at
    a time, so loading a state never holds its whole pickle (15 MB for 10,000 claims, next
    to the state being built) as one buffer."""

    def __init__(self, body: bytes) -> None:
        super().__init__()
        self._body = memoryview(body)
        self._at = 0
        self._inflate = zlib.decompressobj()
        self._out = b""
        self._used = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while self._used == len(self._out):
            if self._at >= len(self._body):
                if not self._inflate.eof:
                    raise zlib.error("the snapshot body is truncated")
                return 0
            piece = self._body[self._at : self._at + _INFLATE_CHUNK]
            self._at += len(piece)
            self._out, self._used = self._inflate.decompress(piece), 0
        count = min(len(view), len(self._out) - self._used)
        view[:count] = memoryview(self._out)[self._used : self._used + count]
        self._used += count
        return count


#: Compressed bytes inflated at a time by :class:`_Inflating` (about 5x that comes out).
_INFLATE_CHUNK = 64 * 1024


def _refusal(snapshot: Snapshot, repo: str, named: StoredEvent | None) -> str | None:
    if snapshot.version != snapshot_version():
        return f"version {snapshot.version} is not this release's {snapshot_version()}"
    if snapshot.repo != repo:
        return f"it is the snapshot of {snapshot.repo!r}"
    if hashlib.sha256(snapshot.body).hexdigest() != snapshot.digest:
        return "its body does not match its digest"
    if named is None or named.seq != snapshot.seq:
        return f"the log has no event {snapshot.seq}"
    if named.hash != snapshot.hash or named.repo != repo:
        return f"the log's event {snapshot.seq} is not the one it names (another log?)"
    return None


#: Globals a snapshot may name outside ``detente.domain``: the containers and times a
#: state is made of. Anything else (``os.system``, ``builtins.eval``, ...) is refused.
_ALLOWED: dict[str, frozenset[str]] = {
    "builtins": frozenset(
        {"set", "frozenset", "dict", "list", "tuple", "bytes", "int", "str", "float", "bool"}
    ),
    "collections": frozenset({"deque", "OrderedDict", "defaultdict", "Counter"}),
    "datetime": frozenset({"datetime", "date", "timedelta", "timezone"}),
}


class _StateUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the classes of a folded state (the "restricting
    globals" pattern of the :mod:`pickle` documentation)."""

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith("detente.domain.") or name in _ALLOWED.get(module, ()):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"global {module}.{name} is not part of a state")
