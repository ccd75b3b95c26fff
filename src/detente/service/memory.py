"""Memory document use cases (API.md "Memory documents"): the IO around the pure domain.

Every write runs as one repository command (:meth:`ServiceCore.execute`, which
serializes commands on the repo across threads and processes): catch up, read the file,
decide (:mod:`detente.domain.memory`), write the new bytes atomically, append the event
recording the new file hash, commit. If anything fails before the commit the write is
undone (:class:`~detente.service.memory_files.FileJournal`); a crash in between leaves a
file whose hash differs from the record, reported as ``onDisk.inSync: false``. A
refused write changes nothing, except that a deferred edit records its patch artifact.

The file written is ``<worktree>/<path>`` when a worktree of the repository is named,
else ``<repository working tree>/<path>``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from detente.domain.memory import commands as mc
from detente.domain.memory.authority import owners
from detente.domain.memory.decide import decide_reconcile, decide_register, decide_render
from detente.domain.memory.guards import doc_path, get_document
from detente.domain.memory.model import DocClass, MemoryDocument, document_to_wire
from detente.domain.memory.patching import decide_patch
from detente.domain.memory.writes import decide_append, decide_write
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.errors import DetenteError, NotFoundError, ValidationError
from detente.service.core import ServiceCore
from detente.service.memory_files import FileJournal, Snapshots, inside, merge_file, read_bytes
from detente.vcs import default_store_path, list_worktrees

W = TypeVar("W", mc.WriteFile, mc.Append)

__all__ = ["DocumentView", "MemoryService"]


@dataclass(frozen=True)
class DocumentView:
    """A document record with what is derived at read time.

    Attributes:
        document: the recorded document.
        owners: section key -> owner claim id (from the holding claims' memory impacts).
        disk_hash: SHA-256 of the file in the working tree now (None: missing, private).
        details: extra response fields of the command that produced the view.
    """

    document: MemoryDocument
    owners: dict[str, str | None]
    disk_hash: str | None
    details: dict[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """The API record: the stored record plus ``ownerClaimId`` per section and ``onDisk``."""
        wire = document_to_wire(self.document)
        for section in wire["sections"]:
            section["ownerClaimId"] = self.owners.get(section["key"])
        wire["onDisk"] = (
            None
            if self.document.doc_class is DocClass.PRIVATE
            else {"fileHash": self.disk_hash, "inSync": self.disk_hash == self.document.file_hash}
        )
        return wire

    def section(self, key: str) -> dict[str, Any]:
        """One section of :meth:`to_wire` (``not_found`` if absent)."""
        for section in self.to_wire()["sections"]:
            if section["key"] == key:
                return dict(section)
        raise NotFoundError(f"no section {key!r} in {self.document.path}", sectionKey=key)


Plan = Callable[[RepoState], tuple[Path | None, mc.Outcome]]


class MemoryService:
    """Registering, patching, appending, rendering and reconciling memory documents."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core
        self._snapshots: dict[str, Snapshots] = {}

    # ------------------------------------------------------------------ plumbing

    def _memory_root(self, repo: str, worktree: str | None) -> Path:
        config = self.core.repo(repo)
        if config.path is None:
            raise ValidationError(
                f"repository {repo!r} has no working tree: memory documents need one",
                field="repo",
            )
        if worktree is None:
            return config.path
        wanted = Path(worktree)
        if "\0" not in worktree and wanted.is_absolute():  # a NUL: no path, no worktree
            for entry in list_worktrees(config.path):
                if entry.path.resolve() == wanted.resolve():
                    return entry.path
        raise ValidationError(
            f"{worktree} is not a worktree of repository {repo!r}", field="worktree"
        )

    def _memory_snapshots_of(self, repo: str) -> Snapshots:
        path = self.core.repo(repo).path
        assert path is not None
        if repo not in self._snapshots:
            self._snapshots[repo] = Snapshots(
                default_store_path(path).parent / "memory" / "snapshots"
            )
        return self._snapshots[repo]

    def _document_view(
        self, state: RepoState, doc: MemoryDocument, root: Path | None
    ) -> DocumentView:
        disk_hash = None
        if doc.doc_class is not DocClass.PRIVATE and root is not None:
            data = read_bytes(inside(root, doc.path))
            if data is not None:
                disk_hash = self._memory_snapshots_of(doc.repo).put(data)
        held = {}
        for section in doc.sections:
            found = owners(state, doc, section.key)
            held[section.key] = found[0].id if found else None
        return DocumentView(doc, held, disk_hash)

    def _memory_run(self, repo: str, plan: Plan) -> tuple[RepoState, mc.Outcome]:
        """One memory command: decide, write the file, append; undo the write on failure."""
        journal = FileJournal()
        snapshots = self._memory_snapshots_of(repo)
        decided: list[mc.Outcome] = []

        def decide(state: RepoState) -> list[Any]:
            journal.rollback()  # a retried attempt starts again from the original file
            decided.clear()
            target, outcome = plan(state)
            if outcome.data is not None and target is not None:
                snapshots.put(outcome.data)
                journal.write(target, outcome.data)
            decided.append(outcome)
            return outcome.events

        try:
            state, _ = self.core.execute(repo, decide)
        except BaseException:
            journal.rollback()
            raise
        outcome = decided[-1]
        if outcome.refusal is not None:
            raise outcome.refusal
        return state, outcome

    def _memory_command(
        self,
        repo: str,
        raw_path: str,
        worktree: str | None,
        decide: Callable[[RepoState, bytes | None], mc.Outcome],
    ) -> DocumentView:
        root = self._memory_root(repo, worktree)

        def plan(state: RepoState) -> tuple[Path | None, mc.Outcome]:
            doc = get_document(state, raw_path)
            target = inside(root, doc.path)
            return target, decide(state, read_bytes(target))

        with self.core.lock(repo):
            state, outcome = self._memory_run(repo, plan)
            doc = get_document(state, raw_path)
            view = self._document_view(state, doc, root)
        return DocumentView(view.document, view.owners, view.disk_hash, outcome.details)

    def _claimed_write(
        self,
        cmd: W,
        decide: Callable[[RepoState, W, bytes | None, datetime, IdSource], mc.Outcome],
    ) -> DocumentView:
        return self._memory_command(
            cmd.repo,
            cmd.path,
            cmd.worktree,
            lambda state, disk: decide(state, cmd, disk, self.core.clock.now(), self.core.ids),
        )

    # ------------------------------------------------------------------ use cases

    def register_document(self, cmd: mc.Register) -> DocumentView:
        """Register a memory document (API ``POST /v1/memory/documents``).

        Raises:
            ValidationError: bad path or class, missing file, malformed markers.
            RevisionConflict: already registered.
        """
        root = self._memory_root(cmd.repo, None)

        def plan(state: RepoState) -> tuple[Path | None, mc.Outcome]:
            path = doc_path(state, cmd.path)
            data = read_bytes(inside(root, path))
            if data is not None and cmd.doc_class != DocClass.PRIVATE.value:
                self._memory_snapshots_of(cmd.repo).put(data)
            return None, decide_register(state, cmd, data, self.core.ids)

        with self.core.lock(cmd.repo):
            state, _ = self._memory_run(cmd.repo, plan)
            doc = get_document(state, cmd.path)
            return self._document_view(state, doc, root)

    def list_documents(self, repo: str, path: str | None = None) -> list[DocumentView]:
        """Registered documents of ``repo`` (one, with ``path``), by path."""
        state = self.core.fresh(repo)
        root = self.core.repo(repo).path
        with self.core.lock(repo):
            if path is not None:
                docs = [get_document(state, path)]
            else:
                docs = sorted(state.memory.documents.values(), key=lambda d: d.path)
            return [self._document_view(state, d, root) for d in docs]

    def patch_section(self, cmd: mc.PatchSection) -> DocumentView:
        """Patch one section (API ``POST /v1/memory/sections/patch``).

        Returns:
            The document view; ``details["merged"]`` tells whether the file had changed
            since the agent's base and the edit was merged.

        Raises:
            RevisionConflict: stale section revision, or the edit was deferred (the
                problem names ``artifactId`` and ``meetingId``).
            StaleFencingToken, OverlapBlocking, LeaseExpired, ForbiddenError,
            InvalidTransition, NotFoundError, ValidationError.
        """
        snapshots = self._memory_snapshots_of(cmd.repo) if self.core.repo(cmd.repo).path else None
        return self._memory_command(
            cmd.repo,
            cmd.path,
            cmd.worktree,
            lambda state, disk: decide_patch(
                state,
                cmd,
                disk,
                snapshots.get(cmd.expected_file_hash) if snapshots else None,
                self.core.clock.now(),
                self.core.ids,
                self.core.policy,
                merge_file,
            ),
        )

    def write_document(self, cmd: mc.WriteFile) -> DocumentView:
        """Write a whole file (API ``POST /v1/memory/documents/write``)."""
        return self._claimed_write(cmd, decide_write)

    def append_entry(self, cmd: mc.Append) -> DocumentView:
        """Append an entry (API ``POST /v1/memory/append``); ``details["entry"]``."""
        return self._claimed_write(cmd, decide_append)

    def render(self, cmd: mc.Render) -> list[dict[str, Any]]:
        """Render generated documents (API ``POST /v1/memory/render``).

        With ``path`` one document is rendered and its errors raise; without it every
        generated document is, each in its own command, and a failure is reported in its
        entry (``error``: the problem fields) while the others proceed.

        Returns:
            One ``{path, document, rendered[], kept[], reconciliations[]}`` (or
            ``{path, error}``) per document.
        """
        if cmd.path is not None:
            view = self._memory_render_one(cmd.repo, cmd.path, cmd.worktree)
            return [{"path": view.document.path, **view.details, "document": view.to_wire()}]
        state = self.core.fresh(cmd.repo)
        paths = sorted(
            d.path for d in state.memory.documents.values() if d.doc_class is DocClass.GENERATED
        )
        out: list[dict[str, Any]] = []
        for path in paths:
            try:
                view = self._memory_render_one(cmd.repo, path, cmd.worktree)
            except DetenteError as exc:
                out.append({"path": path, "error": exc.to_problem()})
            else:
                out.append({"path": path, **view.details, "document": view.to_wire()})
        return out

    def _memory_render_one(self, repo: str, path: str, worktree: str | None) -> DocumentView:
        return self._memory_command(
            repo,
            path,
            worktree,
            lambda state, disk: decide_render(
                state, get_document(state, path), disk, self.core.ids
            ),
        )

    def reconcile(self, cmd: mc.Reconcile) -> DocumentView:
        """Resolve a reconciliation (API ``POST /v1/memory/reconcile``)."""
        return self._memory_command(
            cmd.repo,
            cmd.path,
            cmd.worktree,
            lambda state, disk: decide_reconcile(state, cmd, disk, self.core.ids),
        )
