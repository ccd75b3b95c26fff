"""The key layout of the etcd store and the JSON stored under it.

Key layout (``P`` = the URL's prefix, default ``detente``; components URL-quoted)::

    /P/head                          {"seq", "hash", "at"} of the last event, and
                                     "leaseStamp": the highest lease-row stamp
    /P/events/<seq, 20 digits>       the stored event (JSON envelope)
    /P/repos/<repo>/events/<seq>     the same event again: per-repository reads in one range
    /P/streams/<subject>             the stream's revision ("7"): the CAS target
    /P/records/<kind>/<id>           the projection row (JSON)
    /P/leases/<repo>/<claim>         the claim's lease row (JSON; moved by compare-and-swap)

Events and their per-repository copies are written once and never overwritten; the
head, the stream revisions, the projection rows and the lease rows are rewritten by
every commit that moves them (see :mod:`detente.storage.etcd` for the transaction that
writes them all).
"""

from __future__ import annotations

import json
from urllib.parse import quote, unquote

from detente.eventlog.envelope import StoredEvent
from detente.eventlog.records import LeaseRow
from detente.storage import rowjson
from detente.storage.base import RecordRow


class EtcdKeys:
    """The keys of one detente installation (one prefix), as bytes.

    Args:
        prefix: the key namespace, without slashes (``detente``).
    """

    def __init__(self, prefix: str) -> None:
        self.root = f"/{quote(prefix, safe='')}/".encode()

    def key(self, *parts: str) -> bytes:
        """``/P/part1/part2...`` with each part URL-quoted."""
        return self.root + "/".join(quote(p, safe="") for p in parts).encode()

    @property
    def head(self) -> bytes:
        """``/P/head``."""
        return self.key("head")

    @property
    def events(self) -> bytes:
        """``/P/events/``: the prefix of the global log."""
        return self.root + b"events/"

    def event(self, seq: int) -> bytes:
        """``/P/events/<seq>``."""
        return self.events + b"%020d" % seq

    def repo_events(self, repo: str) -> bytes:
        """``/P/repos/<repo>/events/``: the prefix of one repository's copies."""
        return self.key("repos", repo, "events") + b"/"

    def repo_event(self, repo: str, seq: int) -> bytes:
        """``/P/repos/<repo>/events/<seq>``."""
        return self.repo_events(repo) + b"%020d" % seq

    def stream(self, subject: str) -> bytes:
        """``/P/streams/<subject>``."""
        return self.key("streams", subject)

    def records(self, kind: str) -> bytes:
        """``/P/records/<kind>/``: the prefix of one kind's rows."""
        return self.key("records", kind) + b"/"

    def record(self, kind: str, record_id: str) -> bytes:
        """``/P/records/<kind>/<id>``."""
        return self.key("records", kind, record_id)

    def leases(self, repo: str) -> bytes:
        """``/P/leases/<repo>/``: the prefix of one repository's lease rows."""
        return self.key("leases", repo) + b"/"

    def lease(self, repo: str, claim_id: str) -> bytes:
        """``/P/leases/<repo>/<claim>``."""
        return self.key("leases", repo, claim_id)


def prefix_end(prefix: bytes) -> bytes:
    """The end of the key range of every key starting with ``prefix``."""
    return prefix[:-1] + bytes([prefix[-1] + 1])


def event_to_json(event: StoredEvent) -> bytes:
    """The stored form of ``event``: its wire envelope, keys sorted."""
    return rowjson.dumps_bytes(event.to_wire())


def event_from_json(raw: bytes) -> StoredEvent:
    """The event stored as ``raw`` (see :func:`event_to_json`)."""
    w = rowjson.loads(raw)
    return StoredEvent(
        seq=w["seq"],
        id=w["id"],
        type=w["type"],
        version=w["version"],
        repo=w["repo"],
        subject=w["subject"],
        subject_revision=w["subjectRevision"],
        data=w["data"],
        at=w["at"],
        prev_hash=w["prevHash"],
        hash=w["hash"],
    )


def head_to_json(seq: int, hash_: str, at: str | None, lease_stamp: int) -> bytes:
    """The head: ``{"seq", "hash", "at", "leaseStamp"}`` (the last event's sequence, hash
    and time; the highest lease-row stamp, so a renewal moves the head too)."""
    body = {"seq": seq, "hash": hash_, "at": at, "leaseStamp": lease_stamp}
    return json.dumps(body).encode()


def lease_to_json(row: LeaseRow) -> bytes:
    """The stored form of a lease row (every field, keys sorted)."""
    return rowjson.dumps_bytes(
        {
            "claimId": row.claim_id,
            "repo": row.repo,
            "leaseId": row.lease_id,
            "revision": row.revision,
            "ttlSeconds": row.ttl_seconds,
            "expiresAt": row.expires_at,
            "at": row.at,
            "stamp": row.stamp,
        }
    )


def lease_from_json(raw: bytes) -> LeaseRow:
    """The lease row stored as ``raw`` (see :func:`lease_to_json`)."""
    w = rowjson.loads(raw)
    return LeaseRow(
        claim_id=w["claimId"],
        repo=w["repo"],
        lease_id=w["leaseId"],
        revision=int(w["revision"]),
        ttl_seconds=int(w["ttlSeconds"]),
        expires_at=w["expiresAt"],
        at=w["at"],
        stamp=int(w["stamp"]),
    )


def record_to_json(row: RecordRow) -> bytes:
    """The stored form of a projection row (its kind and id are in the key)."""
    body = {"repo": row.repo, "revision": row.revision, "status": row.status}
    body["body"] = row.body
    return rowjson.dumps_bytes(body)


def record_from_json(kind: str, quoted_id: bytes, raw: bytes) -> RecordRow:
    """The row stored as ``raw`` under ``/P/records/<kind>/<quoted_id>``."""
    body = rowjson.loads(raw)
    return RecordRow(
        kind,
        unquote(quoted_id.decode()),
        body["repo"],
        body["revision"],
        body["status"],
        body["body"],
    )
