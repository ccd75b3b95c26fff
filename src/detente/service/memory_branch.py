"""Memory writes land on the integration branch: one plan per batch, one commit per batch.

The authoritative copy of a registered memory document is the blob at its path in the
tip of the repository's integration branch (``refs/heads/<default branch>``). Every
memory command decides on that copy, never on a working tree:

- the first memory command of a batch (:mod:`detente.service.group_commit`) opens a
  :class:`BranchPlan`: the branch's tip and, as they are asked for, the documents' bytes
  there. Each command reads what its predecessors in the batch staged, and stages its
  own new bytes with the document revision its events make;
- before the store commits the batch, :meth:`MemoryBranch.prepare` writes ONE commit with
  everything staged (:class:`~detente.vcs.memory_commit.BranchWriter`: plumbing, an
  index of its own, ``update-ref`` with the expected old tip) whose trailers name each
  document's new revision (``Detente-Memory: DECISIONS.md r17``). When the branch moved
  meanwhile (a human's commit, an integration, another detente process), the store
  transaction rolls back and the whole batch is decided again on the new tip
  (:class:`~detente.service.group_commit.Redecide`): a write is retried, never dropped;
- the store commits the events, and only then are the commands answered: every
  acknowledged write is on the branch. Should the store fail after the branch moved,
  :meth:`MemoryBranch.abort` moves it back (by CAS; a crash in between leaves a commit
  whose events never landed: the next write adopts it as a human edit would be);
- :meth:`MemoryBranch.finish` brings the checkouts of the branch along where they are
  clean (:mod:`detente.service.checkout_follower`; the others are reported ``behind`` or
  ``edited`` by ``memory show``): right away after a batch of one command with no
  command waiting for the lock (a caller writing one command at a time finds its write
  in its checkout when answered), else queued for the repository's follow thread, in
  commit order, so that the next batch waits for nobody's checkout.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from detente.errors import StaleBase, ValidationError
from detente.service.batch_effects import Redecide
from detente.service.checkout_follower import SETTLE_SECONDS, CheckoutFollower, FollowJob
from detente.service.core import ServiceCore
from detente.vcs.blobs import read_blobs
from detente.vcs.git import Git
from detente.vcs.memory_commit import (
    MEMORY_TRAILER,
    BranchFile,
    BranchWriter,
    read_files,
    tip_of,
)
from detente.vcs.memory_follow import blob_id
from detente.vcs.refs import cas_update_ref

__all__ = ["BranchPlan", "MemoryBranch"]

_log = logging.getLogger("detente.memory")

#: Versions :meth:`MemoryBranch.following` remembers per repository (the newest).
_FOLLOWING = 256


@dataclass
class BranchPlan:
    """The integration branch as one batch sees it.

    Attributes:
        root: the repository's directory.
        ref: the integration branch (``refs/heads/main``).
        tip: the commit the batch decides on (None: the branch has no commit yet).
        staged: path -> the new bytes the batch's commands wrote.
        revisions: path -> the document revision the last of those writes made.
        adopted: ``(checkout, path, the human's bytes, the adopted bytes)`` of the edits
            adopted from checkouts (their files get the adopted bytes after the commit).
    """

    root: Path
    ref: str
    tip: str | None
    files: dict[str, BranchFile | None] = field(default_factory=dict)
    staged: dict[str, bytes] = field(default_factory=dict)
    revisions: dict[str, int] = field(default_factory=dict)
    adopted: list[tuple[Path, str, bytes, bytes]] = field(default_factory=list)
    #: Documents whose checkouts were looked at for a person's edit in this batch.
    checked: set[str] = field(default_factory=set)
    _marked: tuple[dict[str, bytes], dict[str, int], int] | None = None

    def mark(self) -> None:
        """Remember what is staged before the next command."""
        self._marked = (dict(self.staged), dict(self.revisions), len(self.adopted))

    def retract(self) -> None:
        """Forget what the command since :meth:`mark` staged."""
        staged, revisions, adopted = self._marked or ({}, {}, 0)  # opened by that command
        self.staged, self.revisions = dict(staged), dict(revisions)
        del self.adopted[adopted:]

    @property
    def oid_length(self) -> int:
        return len(self.tip) if self.tip else 40

    def _tip_file(self, path: str) -> BranchFile | None:
        if path not in self.files:
            self.files.update(read_files(self.root, self.tip, [path]) if self.tip else {path: None})
        return self.files[path]

    def read(self, path: str) -> bytes | None:
        """The document's bytes as the batch left them so far (None: absent)."""
        if path in self.staged:
            return self.staged[path]
        found = self._tip_file(path)
        return found.data if found is not None else None

    def blob(self, path: str) -> str | None:
        """The blob OID of :meth:`read`'s bytes (None: absent)."""
        if path in self.staged:
            return blob_id(self.staged[path], self.oid_length)
        found = self._tip_file(path)
        return found.blob if found is not None else None

    def tip_blob(self, path: str) -> str | None:
        """The blob OID the tip holds (what the batch started from; None: absent)."""
        found = self._tip_file(path)
        return found.blob if found is not None else None

    def write(self, path: str, data: bytes, revision: int) -> None:
        """Stage the document's new bytes and the revision they make."""
        self.staged[path] = data
        self.revisions[path] = revision

    def message(self) -> str:
        """The commit message: a subject and one trailer per document written."""
        names = [f"{p} r{r}" for p, r in sorted(self.revisions.items())]
        subject = f"detente memory: {names[0]}" + (
            f" and {len(names) - 1} more" if len(names) > 1 else ""
        )
        trailers = "\n".join(f"{MEMORY_TRAILER}: {n}" for n in names)
        return f"{subject}\n\n{trailers}\n"


class MemoryBranch:
    """The batch effect that commits memory documents (see the module docstring).

    Args:
        core: the command path (its repositories, its lock).
    """

    def __init__(self, core: ServiceCore) -> None:
        self.core = core
        self._plans: dict[str, BranchPlan | None] = {}
        self._moved: dict[str, tuple[BranchPlan, str]] = {}
        self._known: dict[str, tuple[str, dict[str, BranchFile | None]]] = {}
        self._writers: dict[str, BranchWriter] = {}
        self._common: dict[str, Path | None] = {}
        #: Blobs checkouts are being brought through by queued follows, per repository.
        self._following: dict[str, dict[str, None]] = {}
        #: Commands decided in the batch being run, per repository.
        self._commands: dict[str, int] = {}
        self._lock = threading.Lock()
        #: Memory commits made (for benchmarks and tests).
        self.commits = 0
        #: Brings the checkouts along after each commit, off the command path.
        self.follower = CheckoutFollower()

    # ------------------------------------------------------------------ reading

    def ref(self, repo: str) -> str:
        """The integration branch of ``repo`` (``refs/heads/<default branch>``)."""
        return f"refs/heads/{self.core.repo(repo).default_branch}"

    def root(self, repo: str) -> Path:
        """The repository's directory (``validation_error`` when it has none)."""
        path = self.core.repo(repo).path
        if path is None:
            raise ValidationError(
                f"repository {repo!r} has no working tree: memory documents need one",
                field="repo",
            )
        return path

    def plan(self, repo: str) -> BranchPlan:
        """The batch's plan (opened on first use: reads the branch's tip)."""
        found = self._plans.get(repo)
        if found is None:
            root = self.root(repo)
            tip = tip_of(root, self.ref(repo), self._common_dir(repo, root))
            known = self._known.get(repo)
            files = dict(known[1]) if known is not None and known[0] == tip else {}
            found = self._plans[repo] = BranchPlan(root, self.ref(repo), tip, files)
        return found

    def _common_dir(self, repo: str, root: Path) -> Path | None:
        if repo not in self._common:
            out = Git(root).run("rev-parse", "--git-common-dir", check=False)
            common = Path(out.stdout.strip()) if out.ok else None
            self._common[repo] = (
                None if common is None else common if common.is_absolute() else root / common
            )
        return self._common[repo]

    def snapshot(self, repo: str) -> BranchPlan:
        """A plan of the branch now, for a read outside any batch (nothing is staged)."""
        root = self.root(repo)
        return BranchPlan(root, self.ref(repo), tip_of(root, self.ref(repo)))

    def blob_bytes(self, repo: str, oid: str) -> bytes | None:
        """The bytes of blob ``oid`` (None: missing)."""
        try:
            return read_blobs(Git(self.root(repo)), [oid]).get(oid)
        except Exception:  # a missing object: no base to merge from
            return None

    # ------------------------------------------------------------------ the batch effect

    def begin(self, repo: str) -> None:
        self._plans[repo] = None
        self._moved.pop(repo, None)
        self._commands[repo] = 0

    def mark(self, repo: str) -> None:
        self._commands[repo] = self._commands.get(repo, 0) + 1
        plan = self._plans.get(repo)
        if plan is not None:
            plan.mark()

    def retract(self, repo: str) -> None:
        plan = self._plans.get(repo)
        if plan is not None:
            plan.retract()

    def prepare(self, repo: str) -> None:
        plan = self._plans.get(repo)
        if plan is None or not plan.staged:
            return
        modes = {p: f.mode for p, f in plan.files.items() if f is not None}
        writer = self._writers.get(repo)
        if writer is None:
            writer = self._writers[repo] = BranchWriter(plan.root)
        try:
            new = writer.commit(plan.ref, plan.tip, plan.staged, plan.message(), modes=modes)
        except StaleBase as exc:
            raise Redecide(str(exc)) from exc
        self._moved[repo] = (plan, new)

    def abort(self, repo: str) -> None:
        self._plans[repo] = None
        moved = self._moved.pop(repo, None)
        if moved is None:
            return
        plan, new = moved
        try:
            cas_update_ref(
                plan.root, plan.ref, plan.tip or "0" * 40, new, message="detente: memory undone"
            )
        except Exception:
            _log.warning("could not move %s back from %s after a failed batch", plan.ref, new)

    def finish(self, repo: str) -> None:
        self._plans[repo] = None
        moved = self._moved.pop(repo, None)
        if moved is None:
            return
        plan, new = moved
        self.commits += 1
        files = dict(plan.files)
        for path, data in plan.staged.items():
            old = files.get(path)
            files[path] = BranchFile(
                blob_id(data, plan.oid_length), old.mode if old else "100644", data
            )
        self._known[repo] = (new, files)
        old_blobs = {p: (f.blob if (f := plan.files.get(p)) else None) for p in plan.staged}
        job = FollowJob(
            plan.root,
            plan.ref,
            plan.tip,
            new,
            old_blobs,
            dict(plan.staged),
            plan.oid_length,
            tuple(plan.adopted),
        )
        alone = self._commands.get(repo, 0) <= 1 and self.core.group_commit.queued(repo) == 0
        if alone and self.follower.settled(repo):
            # A batch of one command and nobody waiting for the lock: follow now, so a
            # caller writing one command at a time finds its write in its checkout when
            # it is answered. (Writers that batched together come back at once: a batch
            # of several is followed in the background even when none is queued yet.)
            self.follower.run_now(job)
        else:  # commands wait: the next batch must not wait for the checkouts too
            versions = self._following.setdefault(repo, {})
            if self.follower.settled(repo):
                versions.clear()
            for blob in (
                *old_blobs.values(),
                *(blob_id(d, plan.oid_length) for d in plan.staged.values()),
            ):
                if blob is not None:
                    versions[blob] = None
            while len(versions) > _FOLLOWING:  # the oldest go: a checkout that far behind
                del versions[next(iter(versions))]  # has its index asked instead
            self.follower.submit(repo, job)

    def following(self, repo: str) -> frozenset[str]:
        """The blobs of the document versions that checkouts of ``repo``'s branch are
        being brought through by queued follows (meaningful while not :meth:`settled`:
        a checkout's file holding one is behind, not edited)."""
        return frozenset(self._following.get(repo, ()))

    def settled(self, repo: str) -> bool:
        """No follow of ``repo``'s checkouts is queued or running."""
        return self.follower.settled(repo)

    def settle(self, repo: str, timeout: float = SETTLE_SECONDS) -> bool:
        """Wait until the checkouts of ``repo``'s branch followed every memory commit made
        so far (:meth:`CheckoutFollower.settle`); False after ``timeout`` seconds."""
        return self.follower.settle(repo, timeout)
