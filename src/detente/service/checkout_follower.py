"""Checkouts follow memory commits off the command path, in commit order.

A memory commit is acknowledged once the branch moved and the store committed its
events (:mod:`detente.service.memory_branch`); bringing the checkouts of the branch
along (:func:`~detente.vcs.memory_follow.follow_checkouts`: a ``git read-tree -u -m``
per checkout, files rewritten) is not part of that answer and must not hold the
repository's command lock while commands wait for it, or every later batch would wait
for it. After a batch of one command with none waiting, the batch follows it right away
(:meth:`CheckoutFollower.run_now`: a caller writing one command at a time, a person at
the CLI, finds the write in the checkout when answered; the lock is idle anyway).
Otherwise the batch queues a :class:`FollowJob` and one thread per repository runs the
queue:

- in commit order, never two at a time for one repository (a later commit's follow on a
  checkout the earlier one has not reached would find it "behind" and leave it there);
- a run of jobs that continue each other (each starts at the tip the previous one made)
  and give nothing back is followed as one (``read-tree -u -m <first old> <last new>``);
  a job that gives a merged edit back to a checkout runs on its own, in its place;
- the thread is not a daemon and ends when the queue is empty: a process that exits
  (the CLI in local mode) finishes its follows first. A ``kill -9`` before a follow
  leaves that checkout ``behind``, as a crash between the commit and the follow always
  could; the branch has every write.

:meth:`CheckoutFollower.settle` waits until a repository's queue is done: a read that
reports checkouts (``memory show``), a person's edit looked for in a checkout whose file
differs from its index (a follow halfway looks exactly like that), and an integration
that moves the branch and its checkouts itself (both would take the checkout's
``index.lock``) call it first. They call it holding the command lock, so no new job is
queued until they are done.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field, replace
from pathlib import Path

from detente.vcs.git import Git
from detente.vcs.memory_follow import follow_checkouts

__all__ = ["SETTLE_SECONDS", "CheckoutFollower", "FollowJob"]

_log = logging.getLogger("detente.memory")

#: Seconds :meth:`CheckoutFollower.settle` waits by default.
SETTLE_SECONDS = 30.0


@dataclass(frozen=True)
class FollowJob:
    """One memory commit for the checkouts to follow.

    Attributes:
        root: the repository's directory.
        ref: the integration branch.
        old_tip: the commit the branch named before (None: the commit is a root commit).
        new_tip: the memory commit.
        old_blobs: path -> the blob ``old_tip`` held (None: absent), for each written path.
        files: path -> the bytes ``new_tip`` holds, for each written path.
        oid_length: 40 (SHA-1) or 64 (SHA-256).
        adopted: ``(checkout, path, the human's bytes, the adopted bytes)`` of each edit
            the commit adopted from a checkout (that checkout gets the adopted bytes).
    """

    root: Path
    ref: str
    old_tip: str | None
    new_tip: str
    old_blobs: dict[str, str | None]
    files: dict[str, bytes]
    oid_length: int = 40
    adopted: tuple[tuple[Path, str, bytes, bytes], ...] = field(default=())

    def then(self, later: FollowJob) -> FollowJob | None:
        """This job and ``later`` as one, when ``later`` continues it and neither gives
        anything back (else None)."""
        if self.adopted or later.adopted or later.old_tip != self.new_tip:
            return None
        old = {**later.old_blobs, **self.old_blobs}  # a path's oldest version is this job's
        return replace(
            self, new_tip=later.new_tip, old_blobs=old, files={**self.files, **later.files}
        )


class CheckoutFollower:
    """The follow queues of a service's repositories (see the module docstring)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._jobs: dict[str, deque[FollowJob]] = defaultdict(deque)
        self._running: set[str] = set()
        #: Follows run (a run of joined jobs counts once; for tests and benchmarks).
        self.follows = 0

    def submit(self, repo: str, job: FollowJob) -> None:
        """Queue ``job`` behind the repository's earlier ones (starts its thread)."""
        with self._cond:
            self._jobs[repo].append(job)
            if repo in self._running:
                return
            self._running.add(repo)
        threading.Thread(target=self._run, args=(repo,), name=f"detente-follow-{repo}").start()

    def run_now(self, job: FollowJob) -> None:
        """Follow ``job`` on this thread (the caller made sure none of its repository's
        jobs is queued or running, and none is queued meanwhile: it holds the lock)."""
        self.follows += 1
        _follow(job)

    def settled(self, repo: str) -> bool:
        """No job of ``repo`` is queued or running."""
        with self._cond:
            return repo not in self._running

    def settle(self, repo: str, timeout: float = SETTLE_SECONDS) -> bool:
        """Wait until every job queued for ``repo`` ran; False when ``timeout`` seconds
        passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: repo not in self._running, timeout)

    def _run(self, repo: str) -> None:
        ended = False
        try:
            while True:
                with self._cond:
                    pending = list(self._jobs[repo])
                    self._jobs[repo].clear()
                    if not pending:  # in the same hold as the check: no job is orphaned
                        self._running.discard(repo)
                        self._cond.notify_all()
                        ended = True
                        return
                for job in _joined(pending):
                    self.follows += 1
                    _follow(job)
        finally:
            if not ended:  # interrupted: the next submit starts a thread again
                with self._cond:
                    self._running.discard(repo)
                    self._cond.notify_all()


def _joined(jobs: list[FollowJob]) -> list[FollowJob]:
    out: list[FollowJob] = []
    for job in jobs:
        both = out[-1].then(job) if out else None
        if both is None:
            out.append(job)
        else:
            out[-1] = both
    return out


def _follow(job: FollowJob) -> None:
    try:
        follow_checkouts(
            job.root,
            job.ref,
            job.old_blobs,
            job.files,
            job.oid_length,
            (job.old_tip, job.new_tip) if job.old_tip else None,
        )
        for worktree, path, human, adopted in job.adopted:
            _give_back(worktree, path, human, adopted)
    except Exception as exc:  # the branch has the writes; a checkout just stays behind
        _log.warning("memory commit %s: a checkout did not follow: %s", job.new_tip, exc)


def _give_back(worktree: Path, path: str, human: bytes, adopted: bytes) -> None:
    """A checkout whose edit was merged into the branch gets the merged bytes, if its file
    still holds exactly the edit (else the human changed it again: left alone)."""
    target = worktree / path
    try:
        if target.read_bytes() != human:
            return
    except OSError:
        return
    if human != adopted:
        target.write_bytes(adopted)
    Git(worktree).run("update-index", "--add", "--", path, check=False)
