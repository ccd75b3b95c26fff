"""What integration and deployment ask of a repository's refs and commits: one protocol.

The service reads commit facts, moves protected refs by compare-and-swap and keeps
checkouts of a moved branch in step through a :class:`RefStore`. :class:`GitRefStore` is
the real one (the git CLI, :mod:`detente.vcs.refs`, :mod:`detente.vcs.checkout`,
:mod:`detente.vcs.repo`); :class:`~detente.vcs.fake_refs.FakeRefStore` is the
deterministic in-memory stand-in that replays of races use (DESIGN: "every race can be
replayed exactly": fake clock, fake ref store). A served repository names a ref store in
:class:`~detente.service.core.RepoConfig` (``refs``); without one, its ``path`` gives a
:class:`GitRefStore`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Protocol

from detente.domain.overlap.trees import TreeView
from detente.vcs.checkout import refuse_dirty_checkouts, update_checkouts
from detente.vcs.refs import CommitFacts, cas_update_ref, commit_facts
from detente.vcs.repo import is_ancestor, resolve_commit

__all__ = ["GitRefStore", "RefStore"]


class RefStore(Protocol):
    """A repository's refs and commits, as integration and deployment use them.

    Every method raises the same typed errors as the git implementation:
    ``validation_error`` for an unknown revision, ``stale_base`` for a lost CAS (``actual``
    = the ref's current OID), ``branch_in_use`` for a dirty checkout of the moved branch.
    """

    def resolve_commit(self, rev: str, *, field: str = "baseCommit") -> str:
        """``rev`` (full or abbreviated OID, ref name) as a full commit OID.

        Raises:
            ValidationError: unknown, or not a commit (names ``field``).
        """
        ...

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """``ancestor`` is reachable from (or is) ``descendant``.

        Raises:
            ValidationError: an unknown revision.
        """
        ...

    def commit_facts(
        self, *, head: str, base: str, claim_base: str, branch: str | None
    ) -> CommitFacts:
        """The facts completion evidence is validated against (see :class:`CommitFacts`)."""
        ...

    def cas_update_ref(self, ref: str, new: str, old: str, *, message: str) -> None:
        """Move ``ref`` from ``old`` to ``new`` atomically, or not at all.

        Raises:
            StaleBase: the ref is not at ``old`` (``expected``, ``actual``).
        """
        ...

    def refuse_dirty_checkouts(
        self, ref: str, old: str, new: str, maintained: Collection[str]
    ) -> list[Path]:
        """The checkouts of ``ref`` to bring along; refuses a dirty one.

        Raises:
            BranchInUse: a checkout of ``ref`` is not clean (``worktree``, ``dirtyPaths``).
        """
        ...

    def update_checkouts(self, worktrees: Sequence[Path], old: str, new: str) -> None:
        """Bring the (clean) checkouts from ``old`` to ``new`` after the ref moved."""
        ...

    def view(self, commit: str) -> TreeView | None:
        """The commit's files and generated-artifact patterns (None: unknown commit)."""
        ...


class GitRefStore:
    """The repository at ``path``, through the git CLI.

    Args:
        path: a directory of the repository (working tree or bare).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def resolve_commit(self, rev: str, *, field: str = "baseCommit") -> str:
        return resolve_commit(self.path, rev, field=field)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return is_ancestor(self.path, ancestor, descendant)

    def commit_facts(
        self, *, head: str, base: str, claim_base: str, branch: str | None
    ) -> CommitFacts:
        return commit_facts(self.path, head=head, base=base, claim_base=claim_base, branch=branch)

    def cas_update_ref(self, ref: str, new: str, old: str, *, message: str) -> None:
        cas_update_ref(self.path, ref, new, old, message=message)

    def refuse_dirty_checkouts(
        self, ref: str, old: str, new: str, maintained: Collection[str]
    ) -> list[Path]:
        return refuse_dirty_checkouts(self.path, ref, old, new, maintained)

    def update_checkouts(self, worktrees: Sequence[Path], old: str, new: str) -> None:
        update_checkouts(list(worktrees), old, new)

    def view(self, commit: str) -> TreeView | None:
        from detente.vcs.trees import GitTrees

        return GitTrees(self.path).view(commit)
