"""Commits a repository is already known to hold, so a claim naming one costs no git call.

Opening a claim resolves its ``baseCommit`` in the repository (``git rev-parse``: a
subprocess, a few milliseconds, more on a busy machine). Agents name the base commit by
its full object id (the CLI resolves ``HEAD`` before it sends), and an object id names
immutable content: once git has said that a full id is a commit, it stays one. A
symbolic revision (``HEAD``, a branch, an abbreviated id) moves or may become ambiguous,
so it is resolved every time.

A full id not yet confirmed is asked, when a ``check`` is given, of a long-running
``git cat-file --batch-check`` (:class:`~detente.vcs.commit_batch.CommitBatches`) rather
than of a new ``git rev-parse`` process; whatever that check cannot confirm (missing, a
tag, no answer) goes to ``resolve``, which gives the answer or the error.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

__all__ = ["KnownCommits"]

_FULL_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

#: ``(repository path, revision) -> full OID``; raises ``validation_error`` when unknown.
Resolve = Callable[[Path, str], str]
#: ``(repository path, full OID) -> True`` when it surely names a commit (else False/None).
Check = Callable[[Path, str], "bool | None"]


class KnownCommits:
    """``resolve`` with the full commit ids it confirmed remembered (thread-safe).

    Args:
        resolve: the real resolution (:func:`detente.vcs.repo.resolve_commit`).
        bound: the most ids remembered (least recently used forgotten first).
        check: a quicker confirmation of full ids
            (:meth:`~detente.vcs.commit_batch.CommitBatches.is_commit`); None: none.
    """

    def __init__(self, resolve: Resolve, *, bound: int = 4096, check: Check | None = None) -> None:
        self._resolve = resolve
        self._check = check
        self._bound = bound
        self._known: OrderedDict[tuple[Path, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, repo: Path, rev: str) -> str:
        """The full OID of the commit ``rev`` names in ``repo``.

        Raises:
            ValidationError: ``validation_error`` (field ``baseCommit``) from ``resolve``
                for an unknown revision (never remembered).
        """
        key = (repo, rev)
        with self._lock:
            if key in self._known:
                self._known.move_to_end(key)
                return rev
        full = _FULL_OID.fullmatch(rev) is not None
        if full and self._check is not None and self._check(repo, rev) is True:
            oid = rev
        else:
            oid = self._resolve(repo, rev)
        if oid == rev and full:
            with self._lock:
                self._known[key] = None
                while len(self._known) > self._bound:
                    self._known.popitem(last=False)
        return oid
