"""A deterministic in-memory stand-in for a repository's refs and commits (replays only).

:class:`FakeRefStore` implements :class:`~detente.vcs.refstore.RefStore` with git's
semantics where detente depends on them, and nothing else:

- a commit is a whole tree (``{path: text}``), its parents and a committer time; its OID
  is the SHA-1 of those (so a script builds the same OIDs on every run, on any machine);
- a revision is a full OID, a unique abbreviation of at least 4 hex digits, a full ref
  name (``refs/heads/main``) or a branch name (``main``);
- :meth:`FakeRefStore.cas_update_ref` is ``git update-ref <ref> <new> <old>``: the ref
  moves only if it is at ``old`` (:data:`~detente.vcs.refs.ZERO_OID`: must not exist),
  else ``stale_base`` with the current OID in ``actual``; every move is recorded in
  :attr:`FakeRefStore.reflog`;
- a checkout of a branch (:meth:`FakeRefStore.check_out`) has local edits; moving the
  branch follows the ``updateInstead`` rule of :mod:`detente.vcs.checkout` (any edit
  refuses with ``branch_in_use``, except a registered memory document the move leaves
  alone);
- generated-artifact patterns are read from the tree's ``.gitattributes`` and
  ``detente.toml`` by the same parsers as the git reader (:mod:`detente.vcs.trees`).

It exists so races replay exactly: the integration CAS, deploying stale code, generated
files in a change. Real git stays the subject of the tests about git.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from detente.domain.overlap.trees import TreeView
from detente.errors import BranchInUse, StaleBase, ValidationError
from detente.vcs.refs import ZERO_OID, CommitFacts, check_ref_name

__all__ = ["FakeCheckout", "FakeCommit", "FakeRefStore"]

_HEX = re.compile(r"^[0-9a-f]{4,40}$")


@dataclass(frozen=True)
class FakeCommit:
    """One commit: its whole tree, parents and committer time (UTC)."""

    oid: str
    parents: tuple[str, ...]
    files: Mapping[str, str]
    time: datetime
    message: str = ""


@dataclass
class FakeCheckout:
    """A worktree with ``ref`` checked out at ``head``; ``edits`` are its local changes
    (``{path: text}``, None for a deleted file)."""

    path: Path
    ref: str
    head: str
    edits: dict[str, str | None] = field(default_factory=dict)

    def files(self, commits: Mapping[str, FakeCommit]) -> dict[str, str]:
        """What the worktree holds: ``head``'s tree with the local edits."""
        out = dict(commits[self.head].files)
        for path, text in self.edits.items():
            if text is None:
                out.pop(path, None)
            else:
                out[path] = text
        return out


class FakeRefStore:
    """Refs, commits and checkouts of one repository, in memory (thread-safe).

    Build the history with :meth:`commit` and :meth:`set_ref`, then hand the store to a
    service (``RepoConfig("demo", refs=store)``).
    """

    def __init__(self) -> None:
        self.commits: dict[str, FakeCommit] = {}
        self.refs: dict[str, str] = {}
        self.checkouts: list[FakeCheckout] = []
        #: Every ref move, in order: ``(ref, old, new, message)``.
        self.reflog: list[tuple[str, str | None, str, str]] = []
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ building history

    def commit(
        self,
        files: Mapping[str, str | None],
        *,
        parent: str | None,
        when: datetime,
        message: str = "change",
        ref: str | None = None,
    ) -> str:
        """A commit of ``parent``'s tree with ``files`` changed (None deletes a path).

        Args:
            files: ``{repo-relative path: text or None}``.
            parent: the parent revision, or None for a root commit.
            when: the committer time (UTC).
            message: the commit message.
            ref: a ref to point at the new commit (set unconditionally).

        Returns:
            The new commit's OID (40 hex digits, the same for the same inputs).
        """
        with self._lock:
            parents: tuple[str, ...] = ()
            tree: dict[str, str] = {}
            if parent is not None:
                base = self.commits[self._resolve(parent, "parent")]
                parents, tree = (base.oid,), dict(base.files)
            for path, text in files.items():
                if text is None:
                    tree.pop(path, None)
                else:
                    tree[path] = text
            body = json.dumps(
                [sorted(tree.items()), parents, when.isoformat(), message], sort_keys=True
            )
            oid = hashlib.sha1(body.encode(), usedforsecurity=False).hexdigest()
            self.commits[oid] = FakeCommit(oid, parents, tree, when, message)
            if ref is not None:
                self.refs[ref] = oid
            return oid

    def set_ref(self, ref: str, oid: str) -> None:
        """Point ``ref`` at ``oid`` unconditionally (setting up a script)."""
        with self._lock:
            self.refs[check_ref_name(ref, field="ref")] = self._resolve(oid, "oid")

    def read_ref(self, ref: str) -> str | None:
        """Where ``ref`` points now (None: it does not exist)."""
        with self._lock:
            return self.refs.get(ref)

    def check_out(self, ref: str, path: str = "/fake/checkout") -> FakeCheckout:
        """A worktree with ``ref`` checked out (clean); edit it through ``edits``."""
        with self._lock:
            checkout = FakeCheckout(Path(path), ref, self.refs[ref])
            self.checkouts.append(checkout)
            return checkout

    def diff(self, base: str, head: str) -> list[str]:
        """Paths that differ between two commits, sorted."""
        with self._lock:
            return self._diff(self._resolve(base, "base"), self._resolve(head, "head"))

    # ------------------------------------------------------------------ RefStore

    def resolve_commit(self, rev: str, *, field: str = "baseCommit") -> str:
        with self._lock:
            return self._resolve(rev, field)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        with self._lock:
            a = self._resolve(ancestor, "ancestor")
            return a in self._ancestry(self._resolve(descendant, "descendant"))

    def commit_facts(
        self, *, head: str, base: str, claim_base: str, branch: str | None
    ) -> CommitFacts:
        with self._lock:
            head_oid, base_oid = self._find(head), self._find(base)
            claim_base_oid = self._find(claim_base)
            branch_head = self.refs.get(f"refs/heads/{branch}") if branch else None
            if head_oid is None:
                return CommitFacts(
                    None, None, base_oid, claim_base_oid, branch_head, False, False, ()
                )
            ancestry = self._ancestry(head_oid)
            from_base = base_oid is not None and base_oid in ancestry
            return CommitFacts(
                head_oid=head_oid,
                head_time=self.commits[head_oid].time,
                base_oid=base_oid,
                claim_base_oid=claim_base_oid,
                branch_head=branch_head,
                from_base=from_base,
                from_claim_base=claim_base_oid is not None and claim_base_oid in ancestry,
                diff=tuple(self._diff(base_oid, head_oid)) if base_oid and from_base else (),
            )

    def cas_update_ref(self, ref: str, new: str, old: str, *, message: str) -> None:
        check_ref_name(ref)
        with self._lock:
            current = self.refs.get(ref)
            if current != (None if old == ZERO_OID else old):
                raise StaleBase(
                    f"{ref} is at {current or 'nothing'}, not {old}: another integration moved it",
                    expected=old,
                    actual=current,
                    ref=ref,
                )
            target = self._resolve(new, "new")
            self.refs[ref] = target
            self.reflog.append((ref, current, target, message))

    def refuse_dirty_checkouts(
        self, ref: str, old: str, new: str, maintained: Collection[str]
    ) -> list[Path]:
        with self._lock:
            moving = set(self._diff(old, new)) if old in self.commits else set()
            found = [c for c in self.checkouts if c.ref == ref]
            for checkout in found:
                dirty = sorted(
                    path
                    for path, text in checkout.edits.items()
                    if path in moving or path not in maintained
                )
                if dirty:
                    raise BranchInUse(
                        f"{ref} is checked out in {checkout.path}, which is not clean "
                        f"({', '.join(dirty)}): commit or stash those changes there, then "
                        "complete again (nothing was moved)",
                        worktree=str(checkout.path),
                        dirtyPaths=dirty,
                        ref=ref,
                    )
            return [c.path for c in found]

    def update_checkouts(self, worktrees: Sequence[Path], old: str, new: str) -> None:
        with self._lock:
            for checkout in self.checkouts:
                if checkout.path in worktrees and checkout.head == old:
                    checkout.head = new

    def view(self, commit: str) -> TreeView | None:
        from detente.vcs.trees import gitattributes_generated, toml_generated

        with self._lock:
            oid = self._find(commit)
            if oid is None:
                return None
            files = self.commits[oid].files
        generated: list[str] = []
        if ".gitattributes" in files:
            generated += gitattributes_generated(files[".gitattributes"].encode())
        if "detente.toml" in files:
            generated += toml_generated(files["detente.toml"].encode())
        return TreeView(oid, tuple(sorted(files)), tuple(dict.fromkeys(generated)))

    # ------------------------------------------------------------------ internals

    def _find(self, rev: str) -> str | None:
        if rev in self.commits:
            return rev
        for name in (rev, f"refs/heads/{rev}"):
            if name in self.refs:
                return self.refs[name]
        if _HEX.match(rev):
            found = [oid for oid in self.commits if oid.startswith(rev)]
            if len(found) == 1:
                return found[0]
        return None

    def _resolve(self, rev: str, field: str) -> str:
        oid = self._find(rev)
        if oid is None:
            raise ValidationError(
                f"unknown commit {rev!r} in the fake repository", field=field, value=rev
            )
        return oid

    def _ancestry(self, oid: str) -> set[str]:
        seen: set[str] = set()
        todo = [oid]
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(self.commits[current].parents)
        return seen

    def _diff(self, base: str | None, head: str) -> list[str]:
        old = self.commits[base].files if base is not None else {}
        new = self.commits[head].files
        return sorted(p for p in set(old) | set(new) if old.get(p) != new.get(p))
