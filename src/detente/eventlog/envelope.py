"""The stored event envelope and its hash chain.

Every stored event carries ``seq`` (one global sequence in commit order), ``prevHash``
(the previous event's ``hash``; the genesis value for the first event) and ``hash`` =
SHA-256 over the canonical encoding of every other envelope field. Canonical encoding:
JSON with sorted keys, no insignificant whitespace, UTF-8, no NaN (RFC 8785-style key
ordering; our payloads hold only strings, integers, booleans, null, lists and objects,
so number formatting is unambiguous).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

GENESIS_HASH = "0" * 64
"""``prevHash`` of the first event of a log."""


@dataclass(frozen=True)
class NewEvent:
    """An event ready to append: the envelope before the store gives it a place.

    Attributes:
        id / type / version / repo / subject / data / at: as in :class:`StoredEvent`.
    """

    id: str
    type: str
    version: int
    repo: str
    subject: str
    data: dict[str, Any]
    at: str


@dataclass(frozen=True)
class StoredEvent:
    """An event as the log keeps it.

    Attributes:
        seq: global sequence (1, 2, ...) in commit order; the SSE ``id:``.
        id: unique event id.
        type / version: stable event type name and payload version.
        repo: repository name.
        subject: stream (``claim/<id>``, ``meeting/<id>``).
        subject_revision: position within the stream (1, 2, ...); unique with ``subject``.
        data: JSON payload.
        at: RFC 3339 UTC time of recording.
        prev_hash / hash: the chain links (64 hex chars).
    """

    seq: int
    id: str
    type: str
    version: int
    repo: str
    subject: str
    subject_revision: int
    data: dict[str, Any]
    at: str
    prev_hash: str
    hash: str

    def to_wire(self) -> dict[str, Any]:
        """The API.md event shape (camelCase), plus ``subjectRevision``."""
        return {
            "seq": self.seq,
            "id": self.id,
            "type": self.type,
            "version": self.version,
            "repo": self.repo,
            "subject": self.subject,
            "subjectRevision": self.subject_revision,
            "data": self.data,
            "at": self.at,
            "prevHash": self.prev_hash,
            "hash": self.hash,
        }


def canonical_json(value: Any) -> bytes:
    """Deterministic UTF-8 JSON: sorted keys, compact separators, no NaN/Infinity."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def compute_hash(
    *,
    seq: int,
    id: str,
    type: str,
    version: int,
    repo: str,
    subject: str,
    subject_revision: int,
    data: dict[str, Any],
    at: str,
    prev_hash: str,
) -> str:
    """SHA-256 (hex) of the canonical encoding of the envelope without ``hash``."""
    body = {
        "seq": seq,
        "id": id,
        "type": type,
        "version": version,
        "repo": repo,
        "subject": subject,
        "subjectRevision": subject_revision,
        "data": data,
        "at": at,
        "prevHash": prev_hash,
    }
    return hashlib.sha256(canonical_json(body)).hexdigest()


def seal(event: NewEvent, *, seq: int, prev_hash: str, subject_revision: int) -> StoredEvent:
    """Give ``event`` its place in the chain: sequence, stream revision, links, hash."""
    fields: dict[str, Any] = {
        "seq": seq,
        "id": event.id,
        "type": event.type,
        "version": event.version,
        "repo": event.repo,
        "subject": event.subject,
        "subject_revision": subject_revision,
        "data": event.data,
        "at": event.at,
        "prev_hash": prev_hash,
    }
    return StoredEvent(**fields, hash=compute_hash(**fields))


@dataclass(frozen=True)
class ChainBreak:
    """The first broken link: at ``seq``, what was wrong."""

    seq: int
    reason: str


def verify_link(
    event: StoredEvent, expected_prev_hash: str, expected_seq: int
) -> ChainBreak | None:
    """Check one event against its predecessor; ``None`` when the link holds."""
    if event.seq != expected_seq:
        return ChainBreak(event.seq, f"sequence gap: expected {expected_seq}, found {event.seq}")
    if event.prev_hash != expected_prev_hash:
        return ChainBreak(event.seq, "prevHash does not equal the previous event's hash")
    recomputed = compute_hash(**{k: v for k, v in vars(event).items() if k != "hash"})
    if recomputed != event.hash:
        return ChainBreak(event.seq, "hash does not match the event's content (tampered?)")
    return None
