"""Memory document use cases (API.md "Memory documents"): the IO around the pure domain.

A registered document's authoritative copy is the blob at its path on the repository's
integration branch (:mod:`detente.service.memory_branch`): every write is decided on
that copy and lands there as a commit made with git plumbing, in the same batch as the
events recording its new hash and revision; checkouts of the branch follow where they
are clean. A write never reads or writes a claim's worktree: ``worktree`` in a command
is recorded, nothing more.

Before a write is decided, a human's edit of the document is looked for: the branch's
copy differing from the recorded hash (an edit committed on the branch), or a checkout of
the branch whose file differs from its index (an edit not committed yet). Such an edit
is adopted first, in a command of its own (:func:`~detente.domain.memory.adoption.
decide_adopt`: a new section revision, or a reconciliation for a generated region), and
the write is then decided on it: an agent naming the revision it read before gets
``409 revision_conflict``. A checkout edit that no longer merges with the branch is left
in its file, untouched, and reported by ``memory show`` (``checkouts[].state: edited``).
A refused write changes nothing, except that a deferred edit records its patch artifact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from detente.domain.events import Event
from detente.domain.memory import commands as mc
from detente.domain.memory.authority import owners
from detente.domain.memory.decide import decide_reconcile, decide_register, decide_render
from detente.domain.memory.guards import doc_path, get_document
from detente.domain.memory.markdown import digest, parse
from detente.domain.memory.model import DocClass, MemoryDocument
from detente.domain.memory.patching import decide_patch
from detente.domain.memory.writes import decide_append, decide_write
from detente.domain.policy import IdSource
from detente.domain.state import RepoState
from detente.errors import DetenteError, ValidationError
from detente.service.core import ServiceCore
from detente.service.memory_adoption import person_edit
from detente.service.memory_branch import BranchPlan, MemoryBranch
from detente.service.memory_files import Snapshots, inside, merge_file, read_bytes
from detente.service.memory_view import DocumentView
from detente.vcs import default_store_path, list_worktrees
from detente.vcs.memory_follow import checkout_copies

W = TypeVar("W", mc.WriteFile, mc.Append)

__all__ = ["DocumentView", "MemoryService"]

#: Classes whose versions are kept as snapshots (the base of a later three-way merge or
#: of a reconciliation's diff); an append-only document never needs an old version.
_MERGED = frozenset({DocClass.SECTION_OWNED, DocClass.GENERATED})

#: Adoptions one write may go through before it is decided (each one a human edit found).
_MAX_ADOPTIONS = 4


Decide = Callable[[RepoState, bytes | None], mc.Outcome]


@dataclass
class _Adopted:
    """Marker: the command found a human's edit and adopted it instead of deciding."""


class MemoryService:
    """Registering, patching, appending, rendering and reconciling memory documents."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core
        self._snapshots: dict[str, Snapshots] = {}
        self.branch: MemoryBranch = core.effect("memory", lambda: MemoryBranch(core))

    # ------------------------------------------------------------------ plumbing

    def _check_worktree(self, repo: str, worktree: str | None) -> None:
        """A named worktree must be one of the repository's (it is only recorded)."""
        root = self.branch.root(repo)
        if worktree is None:
            return
        wanted = Path(worktree)
        if "\0" not in worktree and wanted.is_absolute():  # a NUL: no path, no worktree
            for entry in list_worktrees(root):
                if entry.path.resolve() == wanted.resolve():
                    return
        raise ValidationError(
            f"{worktree} is not a worktree of repository {repo!r}", field="worktree"
        )

    def _memory_snapshots_of(self, repo: str) -> Snapshots:
        path = self.branch.root(repo)
        if repo not in self._snapshots:
            self._snapshots[repo] = Snapshots(
                default_store_path(path).parent / "memory" / "snapshots"
            )
        return self._snapshots[repo]

    def _document_view(
        self, state: RepoState, doc: MemoryDocument, plan: BranchPlan | None, **extra: Any
    ) -> DocumentView:
        disk_hash = None
        branch = None
        if doc.doc_class is not DocClass.PRIVATE and plan is not None:
            data = plan.read(doc.path)
            if data is not None:
                disk_hash = (
                    self._memory_snapshots_of(doc.repo).put(data)
                    if doc.doc_class in _MERGED
                    else digest(data)
                )
            # A write's answer is built before its batch commits: no commit to name yet.
            branch = {"ref": plan.ref, "commit": None if plan.staged else plan.tip}
        held = {}
        for section in doc.sections:
            found = owners(state, doc, section.key)
            held[section.key] = found[0].id if found else None
        return DocumentView(doc, held, disk_hash, branch=branch, **extra)

    def _memory_command(
        self, repo: str, raw_path: str, worktree: str | None, decide: Decide
    ) -> DocumentView:
        """One write: adopt a human's edit first when there is one, then decide on the
        branch's copy; the batch commits it (see the module docstring)."""
        self._check_worktree(repo, worktree)
        snapshots = self._memory_snapshots_of(repo)
        outcome: list[mc.Outcome | _Adopted] = []
        for _ in range(_MAX_ADOPTIONS + 1):
            outcome.clear()

            def run(state: RepoState) -> list[Event]:
                outcome.clear()
                doc = get_document(state, raw_path)
                plan = self.branch.plan(repo)
                adopted = person_edit(self.branch, state, doc, plan, self.core.ids)
                if adopted:
                    outcome.append(_Adopted())
                    return adopted
                data = plan.read(doc.path)
                if data is not None and doc.doc_class in _MERGED:
                    snapshots.put(data)
                decided = decide(state, data)
                events = decided.events
                if decided.data is not None:
                    self._keep_regions(doc, decided.data)
                    revision = doc.revision + sum(
                        1 for e in events if e.data.get("documentId") == doc.id
                    )
                    plan.write(doc.path, decided.data, revision)
                    if doc.doc_class in _MERGED:
                        snapshots.put(decided.data)
                    events = [
                        replace(e, data={**e.data, "branch": plan.ref, "revision": revision})
                        if e.data.get("documentId") == doc.id and "fileHash" in e.data
                        else e
                        for e in events
                    ]
                outcome.append(decided)
                return events

            def view(state: RepoState, _stored: list[Any]) -> DocumentView:
                doc = get_document(state, raw_path)
                return self._document_view(state, doc, self.branch.plan(repo))

            answer: DocumentView = self.core.run(repo, run, view)
            result = outcome[-1]
            if isinstance(result, _Adopted):
                continue
            if result.refusal is not None:
                raise result.refusal
            return replace(answer, details=result.details)
        raise ValidationError(
            f"{raw_path} kept changing under this write ({_MAX_ADOPTIONS} human edits "
            "adopted meanwhile): read it again and retry",
            field="path",
        )

    def _keep_regions(self, doc: MemoryDocument, data: bytes) -> None:
        """Keep each generated region's body as written (the base of a later
        reconciliation's diff, found by the hash the record keeps)."""
        if doc.doc_class is not DocClass.GENERATED:
            return
        try:
            outline = parse(data, path=doc.path)
        except ValidationError:
            return
        for region in outline.regions:
            self._memory_snapshots_of(doc.repo).put(region.body(data))

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

        The recorded version is the integration branch's copy; a file the branch does not
        hold yet is read from the repository's working tree and committed to the branch
        with the registration.

        Raises:
            ValidationError: bad path or class, missing file, malformed markers.
            RevisionConflict: already registered.
        """
        root = self.branch.root(cmd.repo)
        private = cmd.doc_class == DocClass.PRIVATE.value

        def run(state: RepoState) -> list[Event]:
            path = doc_path(state, cmd.path)
            plan = self.branch.plan(cmd.repo)
            data = None if private else plan.read(path)
            staged = False
            if data is None and not private:
                data = read_bytes(inside(root, path))
                staged = data is not None
            if data is not None:
                self._memory_snapshots_of(cmd.repo).put(data)
            events = decide_register(state, cmd, data, self.core.ids).events
            if data is not None and cmd.doc_class == DocClass.GENERATED.value:
                for region in parse(data, path=path).regions:
                    self._memory_snapshots_of(cmd.repo).put(region.body(data))
            if staged and data is not None:
                plan.write(path, data, 1)
            return events

        def view(state: RepoState, _stored: list[Any]) -> DocumentView:
            doc = get_document(state, cmd.path)
            return self._document_view(state, doc, self.branch.plan(cmd.repo))

        answer: DocumentView = self.core.run(cmd.repo, run, view)
        return answer

    def list_documents(
        self, repo: str, path: str | None = None, *, text: bool = False
    ) -> list[DocumentView]:
        """Registered documents of ``repo`` (one, with ``path``), by path, each with its
        authoritative copy's hash (``onDisk``: the integration branch's) and its copies in
        the branch's checkouts (``checkouts[{worktree, state: current|behind|edited,
        fileHash}]``); ``text`` adds the authoritative text (``memory read``)."""
        state = self.core.fresh(repo)
        with self.core.lock(repo):
            if path is not None:
                docs = [get_document(state, path)]
            else:
                docs = sorted(state.memory.documents.values(), key=lambda d: d.path)
        if not docs:
            return []
        self.branch.settle(repo)  # the checkouts as they are once they followed
        plan = self.branch.snapshot(repo)
        shared = [d for d in docs if d.doc_class is not DocClass.PRIVATE]
        copies = checkout_copies(
            plan.root, plan.ref, {d.path: plan.blob(d.path) for d in shared}, plan.oid_length
        )
        out = []
        for doc in docs:
            mine = tuple(
                {
                    "worktree": str(c.worktree),
                    "state": c.state,
                    "fileHash": digest(c.data) if c.data is not None else None,
                }
                for c in copies
                if c.path == doc.path
            )
            data = plan.read(doc.path) if text and doc in shared else None
            with self.core.lock(repo):
                out.append(
                    self._document_view(
                        state,
                        doc,
                        plan,
                        checkouts=mine,
                        text=data.decode("utf-8", "replace") if data is not None else None,
                    )
                )
        return out

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
        snapshots = self._memory_snapshots_of(cmd.repo)
        return self._memory_command(
            cmd.repo,
            cmd.path,
            cmd.worktree,
            lambda state, disk: decide_patch(
                state,
                cmd,
                disk,
                snapshots.get(cmd.expected_file_hash),
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
                state,
                get_document(state, path),
                disk,
                self.core.ids,
                self._memory_snapshots_of(repo).get,
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
