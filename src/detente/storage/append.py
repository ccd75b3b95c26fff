"""The one append routine of every store: expected stream revisions, then the hash chain.

Every backend appends the same way inside its transaction: check that each subject's
stream is at the revision the caller expects (the domain's check exists for good
messages; this one, with the store's ``UNIQUE (subject, subject_revision)`` or its
compare, is the guarantee), then give each event the next global sequence, the next
revision of its stream and its link in the hash chain. Stores differ only in where they
read the head and a stream's revision and where they put the result.

:class:`BufferedTx` is the transaction of the stores that collect a command's writes and
publish them at commit (memory, etcd); the SQL stores write through
:class:`detente.storage.sql.SqlTx`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from detente.errors import ConcurrencyError
from detente.eventlog.envelope import NewEvent, StoredEvent, seal
from detente.eventlog.records import RecordRow

#: ``subject -> its stream's current revision`` (0 = no event yet).
RevisionOf = Callable[[str], int]


def check_expected(expected: Mapping[str, int], revision_of: RevisionOf) -> None:
    """Refuse the append unless every subject's stream is at its expected revision.

    Raises:
        ConcurrencyError: ``store_concurrency``, naming the subject and both revisions.
    """
    for subject, want in expected.items():
        have = revision_of(subject)
        if have != want:
            raise ConcurrencyError(
                f"stream {subject} is at revision {have}, expected {want}",
                subject=subject,
                expected=want,
                actual=have,
            )


def seal_appends(
    events: Sequence[NewEvent],
    expected: Mapping[str, int],
    *,
    head: tuple[int, str],
    revision_of: RevisionOf,
) -> list[StoredEvent]:
    """Check ``expected``, then chain ``events`` after ``head``.

    Args:
        events: in order; may touch several subjects.
        expected: for every subject touched, its current stream revision (0 = new).
        head: ``(sequence, hash)`` of the event the first one follows.
        revision_of: the current revision of a stream, including this transaction's
            earlier appends.

    Returns:
        The sealed events: sequences ``head + 1 ...``, each stream's revisions counting on.

    Raises:
        ConcurrencyError: ``store_concurrency`` when a stream is not at its expected revision.
    """
    check_expected(expected, revision_of)
    seq, prev = head
    revisions: dict[str, int] = {}
    out: list[StoredEvent] = []
    for event in events:
        revision = revisions.get(event.subject)
        revision = (revision_of(event.subject) if revision is None else revision) + 1
        revisions[event.subject] = revision
        seq += 1
        stored = seal(event, seq=seq, prev_hash=prev, subject_revision=revision)
        prev = stored.hash
        out.append(stored)
    return out


class BufferedTx:
    """A transaction that keeps its appends and rows until the store commits them.

    Args:
        head: ``(sequence, hash)`` of the log when the transaction began.
        stream_revision: reads a stream's revision at the transaction's snapshot.

    Attributes:
        events: the sealed events, in order.
        base: the stream revisions read at the snapshot (what a commit compares).
        revisions: the stream revisions after this transaction's appends.
        rows: the projection rows to write, by ``(kind, id)``.
    """

    def __init__(self, head: tuple[int, str], stream_revision: RevisionOf) -> None:
        self._head = head
        self._stream_revision = stream_revision
        self.events: list[StoredEvent] = []
        self.base: dict[str, int] = {}
        self.revisions: dict[str, int] = {}
        self.rows: dict[tuple[str, str], RecordRow] = {}

    def revision(self, subject: str) -> int:
        """The stream's revision as this transaction sees it."""
        if subject in self.revisions:
            return self.revisions[subject]
        if subject not in self.base:
            self.base[subject] = self._stream_revision(subject)
        return self.base[subject]

    def append(self, events: Sequence[NewEvent], expected: Mapping[str, int]) -> list[StoredEvent]:
        """See :meth:`detente.storage.base.StoreTx.append`."""
        last = self.events[-1] if self.events else None
        head = (last.seq, last.hash) if last else self._head
        out = seal_appends(events, expected, head=head, revision_of=self.revision)
        for event in out:
            self.revisions[event.subject] = event.subject_revision
        self.events.extend(out)
        return out

    def upsert_records(self, rows: Sequence[RecordRow]) -> None:
        """See :meth:`detente.storage.base.StoreTx.upsert_records`."""
        for row in rows:
            self.rows[(row.kind, row.id)] = row
