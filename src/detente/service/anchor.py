"""The log anchored outside its store: signed checkpoints in git, checked by the audit.

The hash chain proves the log consistent with itself, not with what it was: whoever can
write the store can restore an older copy (a rollback) or rewrite an event and recompute
every hash after it (a consistent rewrite), and the chain still verifies. A checkpoint
pins the log's head where the store cannot follow it:

- **what**: ``{seq, headHash, fencingToken, at, store, key}``: the global sequence number
  of an event, its hash, the highest fencing token granted so far, the time (RFC 3339
  UTC), which store (its URL, password hidden) and which key signed (the fingerprint), as
  canonical JSON, signed with Ed25519 (:class:`~detente.security.anchor_key.AnchorKey`:
  a key file that is not in the store);
- **where**: an append-only commit chain under ``refs/detente/checkpoints`` of the first
  served repository (:mod:`detente.vcs.record_ref`), one commit per checkpoint;
- **when**: by ``detente serve`` only: when it starts (the head it found), after any
  commit that takes the log :data:`CHECKPOINT_EVERY` events past the last checkpoint, and
  at a clean shutdown. A local-mode CLI writes none (and raises no fencing floor).

``audit verify`` (:meth:`Anchor.check`) then requires, for the checkpoints of this store:
every one signed by the key; the store not shorter than the newest (a rollback); the
store's event at each checkpointed sequence carrying the checkpointed hash (a rewrite at
or before it). And for every served repository, each claim a commit on its default
branch names (``Detente-Claim:``) is known to the log and has its ``claim.integrated``
event there (or was taken over, its work landed by its successor): a landing the log
lost (an older store restored after an integration) is found although no checkpoint
covered it. A server's start records the landings of claims still live
(:meth:`~detente.service.gates.GatesService.recover_landings`, ``recovered: true``: a
crash between the ref's compare-and-swap and its events), so what stays named here is a
claim the log does not know or that is no longer live.

Fencing tokens never repeat after a rollback: on start the server raises every
repository's fencing counter to the newest checkpoint's token plus twice
:data:`CHECKPOINT_EVERY` (each token is granted by an event of its own; the server starts
a checkpoint once the log is that many events past the last one, and the second
interval is room for the events committed while it is written), so a token granted in
events a restored copy lost is never granted again.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from detente.errors import DetenteError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from detente.security.anchor_key import AnchorKey
    from detente.storage.base import Store

__all__ = ["CHECKPOINT_EVERY", "CHECKPOINT_REF", "Anchor", "Checkpoint"]

#: The ref holding the chain of signed checkpoints.
CHECKPOINT_REF = "refs/detente/checkpoints"
#: Events the log may grow past its last checkpoint before the server writes another.
CHECKPOINT_EVERY = 100


@dataclass(frozen=True)
class Checkpoint:
    """One signed statement about the log (see the module docstring).

    Attributes:
        seq: the global sequence number of the event checkpointed (0: an empty log).
        headHash: that event's hash (64 hex characters).
        fencingToken: the highest fencing token granted when it was written.
        at: when (RFC 3339 UTC).
        store: the store's URL (password hidden).
        key: the signing key's fingerprint (``sha256:<hex>``).
    """

    seq: int
    headHash: str
    fencingToken: int
    at: str
    store: str
    key: str

    def signed_bytes(self) -> bytes:
        """The canonical JSON the signature covers (sorted keys, no spaces)."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def parse(cls, record: bytes) -> tuple[Checkpoint, str] | None:
        """``(checkpoint, signature)`` from a stored record; None when malformed."""
        try:
            body = json.loads(record)
            point = cls(
                int(body["seq"]),
                str(body["headHash"]),
                int(body["fencingToken"]),
                str(body["at"]),
                str(body["store"]),
                str(body["key"]),
            )
            return point, str(body["signature"])
        except (ValueError, KeyError, TypeError):
            return None


class Anchor:
    """The checkpoints of one store, kept in one repository (see the module docstring).

    Args:
        repo: the repository whose ``refs/detente/checkpoints`` holds the chain.
        key_path: the anchor key's file (made on :meth:`start` when missing).
        store: the store's URL as checkpoints name it (password hidden).
        every: events between periodic checkpoints (>= 1).
    """

    def __init__(
        self, repo: Path, key_path: Path, store: str, *, every: int = CHECKPOINT_EVERY
    ) -> None:
        self.repo = repo
        self.key_path = key_path
        self.store = store
        self.every = every
        self._key: AnchorKey | None = None
        self._last_seq = 0
        self._fencing = 0
        self._lock = threading.Lock()
        #: The thread writing a periodic checkpoint, if any (:mod:`~detente.service.anchoring`).
        self.worker: threading.Thread | None = None

    @property
    def started(self) -> bool:
        """The server started it: it writes checkpoints."""
        return self._key is not None

    def start(self) -> int:
        """Load (or make) the key and read the newest checkpoint of this store.

        Returns:
            The fencing floor: the newest checkpoint's token plus twice :attr:`every`
            (0 without a checkpoint).

        Raises:
            ValidationError: the key file is unreadable or not an Ed25519 key.
        """
        from detente.security.anchor_key import AnchorKey  # cryptography: a server's start only

        key = AnchorKey.load(self.key_path, create=True)
        assert key is not None
        self._key = key
        mine = [p for p, ok in self._verified(key) if ok and p.store == self.store]
        if not mine:
            return 0
        newest = max(mine, key=lambda p: p.seq)
        self._last_seq = newest.seq
        self._fencing = max(p.fencingToken for p in mine)
        return self._fencing + 2 * self.every

    def due(self, seq: int) -> bool:
        """The log at ``seq`` is :attr:`every` events past the last checkpoint."""
        return self.started and seq - self._last_seq >= self.every

    def write(self, seq: int, head_hash: str, fencing_token: int, at: str) -> Checkpoint:
        """Sign and append a checkpoint (the highest token never goes down).

        Raises:
            GitError: ``vcs_error`` when git cannot write the ref.
        """
        from detente.vcs.record_ref import append_record

        key = self._key
        assert key is not None, "start() the anchor before writing checkpoints"
        with self._lock:
            point = Checkpoint(
                seq, head_hash, max(fencing_token, self._fencing), at, self.store, key.fingerprint
            )
            record = {**asdict(point), "signature": key.sign(point.signed_bytes())}
            text = json.dumps(record, sort_keys=True, indent=1).encode() + b"\n"
            append_record(self.repo, CHECKPOINT_REF, text, f"detente checkpoint: event {seq}")
            self._last_seq = seq
            self._fencing = point.fencingToken
            return point

    def _verified(self, key: AnchorKey | None) -> list[tuple[Checkpoint, bool]]:
        from detente.vcs.record_ref import read_records

        out: list[tuple[Checkpoint, bool]] = []
        for record in read_records(self.repo, CHECKPOINT_REF):
            parsed = Checkpoint.parse(record)
            if parsed is None:
                continue
            point, signature = parsed
            out.append((point, key is not None and key.verifies(point.signed_bytes(), signature)))
        return out

    def check(self, store: Store, landed: Mapping[str, Mapping[str, str]]) -> list[str]:
        """What the store contradicts: checkpoints and the branches' landed claims.

        Args:
            store: the store to check.
            landed: per repository, the claims its default branch names
                (``claim id -> commit``, :func:`detente.vcs.landed.claims_on`).

        Returns:
            One sentence per finding (empty: the store agrees with its anchors).
        """
        from detente.security.anchor_key import AnchorKey

        try:
            key = AnchorKey.load(self.key_path, create=False)
            checkpoints = self._verified(key)
        except DetenteError as exc:
            return [f"cannot read the checkpoints ({exc.code}: {exc.detail})"]
        findings: list[str] = []
        if checkpoints and key is None:
            findings.append(
                f"cannot verify {len(checkpoints)} checkpoints: the anchor key "
                f"{self.key_path} is missing (set $DETENTE_ANCHOR_KEY to where it is)"
            )
        elif key is not None and not checkpoints:
            findings.append(
                f"the anchor key {self.key_path} exists but {CHECKPOINT_REF} holds no "
                "checkpoint: the checkpoints were deleted"
            )
        forged = [p for p, ok in checkpoints if key is not None and not ok]
        if forged:
            findings.append(
                f"{len(forged)} checkpoints (first: event {forged[0].seq}) are not signed by "
                "the anchor key: forged or altered"
            )
        findings += _against_store(store, [p for p, ok in checkpoints if ok], self.store)
        findings += _against_branches(store, landed)
        return findings


def _against_store(store: Store, checkpoints: list[Checkpoint], url: str) -> list[str]:
    mine = sorted((p for p in checkpoints if p.store == url), key=lambda p: p.seq)
    if not mine:
        return []
    findings: list[str] = []
    head, _ = store.head()
    newest = mine[-1]
    if head < newest.seq:
        findings.append(
            f"rollback: the store ends at event {head}, but the checkpoint of {newest.at} "
            f"recorded event {newest.seq} (hash {newest.headHash[:16]}): the store was "
            "restored from an older copy or truncated"
        )
    for point in mine:
        if point.seq == 0 or point.seq > head:
            continue
        found = store.read(since=point.seq - 1, limit=1)
        actual = found[0].hash if found and found[0].seq == point.seq else None
        if actual != point.headHash:
            findings.append(
                f"rewrite: event {point.seq} has hash {(actual or 'none')[:16]}, but the "
                f"checkpoint of {point.at} recorded {point.headHash[:16]}: the log was "
                f"rewritten (or rolled back and written again) at or before event {point.seq}"
            )
            break  # every later checkpoint fails with it
    return findings


#: The events after which a claim's commits may sit on a default branch: its own landing,
#: or a takeover (its work carried on and landed by the successor).
_LANDED = ("claim.integrated", "claim.taken_over")


def _against_branches(store: Store, landed: Mapping[str, Mapping[str, str]]) -> list[str]:
    wanted = {repo: claims for repo, claims in landed.items() if claims}
    if not wanted:
        return []
    known: dict[str, set[str]] = {repo: set() for repo in wanted}
    recorded: dict[str, set[str]] = {repo: set() for repo in wanted}
    for event in store.iter_all():
        if event.repo in known and event.subject.startswith("claim/"):
            claim_id = event.subject.partition("/")[2]
            known[event.repo].add(claim_id)
            if event.type in _LANDED:
                recorded[event.repo].add(claim_id)
    findings: list[str] = []
    for repo, claims in sorted(wanted.items()):
        for claim_id, commit in sorted(claims.items()):
            where = f"{repo}: commit {commit[:12]} on the default branch lands claim {claim_id}"
            if claim_id not in known[repo]:
                findings.append(
                    f"{where}, which the log does not know: the landing is missing from the "
                    "log (an older store restored?)"
                )
            elif claim_id not in recorded[repo]:
                findings.append(
                    f"{where}, but the log has no claim.integrated for it: the landing is "
                    "missing from the log (an older store restored, or a push the log never "
                    "recorded)"
                )
    return findings
