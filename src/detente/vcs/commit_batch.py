"""Is this full object id a commit? Asked of one ``git cat-file --batch-check`` process per
repository, kept running, instead of a ``git rev-parse`` process per question.

Every claim opening checks that its ``baseCommit`` names a commit of the repository.
Agents name the tip of the default branch, which moves with every integration, so the
answer is rarely remembered (:mod:`detente.service.known_commits`) and each opening
started a git process: a few milliseconds on an idle machine, and on a loaded 2-core
machine the largest part of an opening (46% of its samples under a renew + patch load,
``bench/contention.py``), since starting a process from a large Python server slows with
the load. ``git cat-file --batch-check`` (git-cat-file(1), "BATCH OUTPUT") reads one
object name per line on stdin and answers ``<oid> <type> <size>`` or ``<name> missing``
per line; it looks each object up when asked, so commits written after it started (by a
push, a commit, another process) are found.

Only full hexadecimal object ids are asked (immutable names; nothing else reaches the
process, so no input can inject a second line). Anything unexpected (the process cannot
start, dies, answers garbage or nothing within the timeout) kills it and answers None:
the caller falls back to its own ``rev-parse`` and the next question starts a new process.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import subprocess
import threading
import weakref
from pathlib import Path

from detente.vcs.git import Git

__all__ = ["CommitBatch", "CommitBatches"]

_FULL_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class CommitBatch:
    """One repository's ``git cat-file --batch-check`` (started on first use; thread-safe).

    Args:
        repo: a directory inside a working tree of the repository.
        timeout: seconds one answer may take before the process is killed.
    """

    def __init__(self, repo: Path, *, timeout: float = 5.0) -> None:
        self.repo = Path(repo)
        self.timeout = timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._pending = b""
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], CommitBatch] | None = None
        #: Processes started so far (for tests and benchmarks).
        self.starts = 0

    @property
    def pid(self) -> int | None:
        """The process id of the running ``git cat-file``, None when none runs."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def is_commit(self, oid: str) -> bool | None:
        """Whether ``oid`` (a full hex object id) names a commit.

        Returns:
            True: a commit; False: missing or another object type (a tag, a tree, a blob:
            the caller's ``rev-parse`` says what it peels to); None: no answer (not a full
            object id, or the process failed: see the module docstring).
        """
        if not _FULL_OID.fullmatch(oid):
            return None
        with self._lock:
            line = self._ask(oid)
        if line is None:
            return None
        fields = line.split()
        if len(fields) == 3 and fields[0] == oid:
            return fields[1] == "commit"
        if fields == [oid, "missing"]:
            return False
        self._kill()  # an answer out of step: start over next time
        return None

    def close(self) -> None:
        """Stop the process (a later question starts a new one)."""
        with self._lock:
            self._kill()

    def _ask(self, oid: str) -> str | None:
        proc = self._proc if self._proc is not None and self._proc.poll() is None else None
        if proc is None:
            self._kill()
            proc = self._start()
            if proc is None:
                return None
        assert proc.stdin is not None
        try:
            proc.stdin.write(f"{oid}\n".encode())
            proc.stdin.flush()
        except OSError:
            self._kill()
            return None
        return self._read_line(proc)

    def _start(self) -> subprocess.Popen[bytes] | None:
        git = Git(self.repo)
        try:
            proc = subprocess.Popen(
                ["git", "-c", "core.quotepath=false", "cat-file", "--batch-check"],
                cwd=self.repo,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=git.environment(),
            )
        except OSError:
            return None
        # The pipes close when this object is collected: git sees EOF and exits.
        self._finalizer = weakref.finalize(self, _stop, proc)
        self._proc, self._pending = proc, b""
        self.starts += 1
        return proc

    def _read_line(self, proc: subprocess.Popen[bytes]) -> str | None:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        # A selector, not select.select: that one refuses descriptors numbered 1024 and up,
        # which a long-lived server (or a test process) reaches.
        with selectors.DefaultSelector() as waiting:
            waiting.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._pending:
                ready = waiting.select(self.timeout)
                chunk = os.read(fd, 4096) if ready else b""
                if not chunk:  # timed out, or the process ended
                    self._kill()
                    return None
                self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("ascii", "replace")

    def _kill(self) -> None:
        proc, self._proc, self._pending = self._proc, None, b""
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if proc is not None:
            _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Close the pipes, end the process and reap it."""
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


class CommitBatches:
    """A :class:`CommitBatch` per repository path, made on first use (thread-safe)."""

    def __init__(self, *, timeout: float = 5.0) -> None:
        self.timeout = timeout
        self._lock = threading.Lock()
        self._batches: dict[Path, CommitBatch] = {}

    def batch(self, repo: Path) -> CommitBatch:
        """The batch of ``repo`` (made on first use)."""
        with self._lock:
            found = self._batches.get(repo)
            if found is None:
                found = self._batches[repo] = CommitBatch(repo, timeout=self.timeout)
            return found

    def is_commit(self, repo: Path, oid: str) -> bool | None:
        """:meth:`CommitBatch.is_commit` of ``repo``'s batch."""
        return self.batch(repo).is_commit(oid)

    def close(self) -> None:
        """Stop every process."""
        with self._lock:
            batches = list(self._batches.values())
        for batch in batches:
            batch.close()
