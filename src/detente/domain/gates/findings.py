"""Who may change these concrete files: the checks behind every gate (pure, no IO).

Three gates ask the same question about concrete repo-relative file paths (never
globs): completion evidence (:mod:`detente.domain.evidence`), the server-side
``pre-receive`` check of a push to a protected ref, and the local ``pre-commit`` guard.
For each path :func:`path_findings` reports

- ``held``: another claim's *authority* covers the path (its granted targets while it
  holds: a negotiating newcomer holds nobody off) and no recorded meeting resolution
  lets this claim share it (:mod:`detente.domain.authority`, the one rule);
- ``outside``: no granted path pattern of the committing claim matches the path (and no
  other claim holds it: a held path is reported once, as ``held``);
- ``memory``: the path is a registered (not private) memory document and a claim commits
  it: its writes go through ``detente memory patch``/``append``, which commit them on
  the integration branch (a human's commit, claimed by nobody, is not refused: detente
  adopts it as a new revision).

A finding names the path, the holder's claim id and agent name, so every refusal can say
whom to talk to. :func:`push_failures` and :func:`commit_findings` are the two hook
checks built on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from detente.domain.authority import (
    literal_pattern,
    may_share,
    path_refusals,
    writable,
    writes_granted_scope,
)
from detente.domain.claims.model import Claim, ClaimStatus
from detente.domain.generated_authority import artifact_at
from detente.domain.named_authority import Edit
from detente.domain.overlap.symbols import stray_edits
from detente.domain.state import RepoState

if TYPE_CHECKING:
    from detente.domain.memory.model import MemoryDocument

__all__ = [
    "INTEGRABLE",
    "PathFinding",
    "PushedCommit",
    "commit_findings",
    "holders_of",
    "literal_pattern",
    "may_share",
    "path_findings",
    "push_failures",
]

#: Statuses in which a claim's commits may land on a protected ref by a push.
INTEGRABLE = frozenset({ClaimStatus.READY_FOR_REVIEW, ClaimStatus.INTEGRATED})


@dataclass(frozen=True)
class PathFinding:
    """One refused path.

    Attributes:
        path: the concrete repo-relative path.
        kind: ``held`` (another live claim covers it), ``outside`` (not in the claim's
            granted targets) or ``memory`` (a registered memory document: claims write
            it through detente, never in a commit of their own).
        claim_id: the holder's claim id (``held`` only).
        agent: the holder's agent name (``held`` only).
        inputs: for a first-class generated artifact, its generator inputs (the write
            was judged on them, see :mod:`detente.domain.generated_authority`).
    """

    path: str
    kind: Literal["held", "outside", "memory"]
    claim_id: str | None = None
    agent: str | None = None
    inputs: tuple[str, ...] = ()
    #: ``memory`` only: the registered document's class.
    doc_class: str | None = None

    def sentence(self, claim_id: str | None = None) -> str:
        """One human sentence, e.g. ``"a.py is held by clm_1 (alice)"``."""
        if self.kind == "memory":
            how = (
                f"detente memory append {self.path}"
                if self.doc_class == "append_only"
                else f"detente memory render {self.path}"
                if self.doc_class == "generated"
                else f"detente memory patch '{self.path}#<section>'"
            )
            return (
                f"{self.path} is a registered memory document ({self.doc_class}): a claim never "
                f"commits it; write it with `{how}` (detente memory patch/append commit it on "
                "the integration branch; your worktree picks it up when you rebase) and list "
                "the revision in evidence.memoryUpdates"
            )
        generated = f" (generated from {', '.join(self.inputs)})" if self.inputs else ""
        if self.kind == "held":
            return f"{self.path}{generated} is held by claim {self.claim_id} ({self.agent})"
        who = f"claim {claim_id}'s" if claim_id else "the claim's"
        if self.inputs:
            return f"{self.path}{generated}: {who} targets cover none of its inputs"
        return f"{self.path} is outside {who} targets"

    def to_wire(self) -> dict[str, Any]:
        """``{path, kind, claimId, agent}``, and ``generatorInputs`` for an artifact."""
        wire: dict[str, Any] = {
            "path": self.path,
            "kind": self.kind,
            "claimId": self.claim_id,
            "agent": self.agent,
        }
        if self.inputs:
            wire["generatorInputs"] = list(self.inputs)
        return wire


@dataclass(frozen=True)
class PushedCommit:
    """A commit of a push to a protected ref, as the ``pre-receive`` hook saw it.

    Attributes:
        oid: the commit's OID.
        claim_ids: values of its ``Detente-Claim:`` trailers.
        files: paths it changes relative to its first parent (all paths of a root commit).
    """

    oid: str
    claim_ids: tuple[str, ...]
    files: tuple[str, ...]
    #: ``(path, innermost symbols touched, lines outside every symbol changed)`` per
    #: file whose symbols the hook read on both sides of the diff; the other files are
    #: whole-file changes.
    edits: tuple[tuple[str, tuple[str, ...], bool], ...] = ()


def holders_of(state: RepoState, path: str, exclude: str | None = None) -> list[Claim]:
    """Claims (other than ``exclude``) whose write authority covers ``path``, sorted by id
    (see :mod:`detente.domain.authority`)."""
    return [c for c in path_refusals(state, None, path) if c.id != exclude]


def path_findings(
    state: RepoState,
    claim: Claim | None,
    paths: Iterable[str],
    edits: Mapping[str, Edit] | None = None,
) -> list[PathFinding]:
    """Every refused path (see the module docstring), in the order of ``paths``.

    The answer comes from :func:`detente.domain.authority.writable`, the one rule every
    caller shares.

    Args:
        state: the repository's projection.
        claim: the claim that wants to change the paths, or None (a commit nobody
            claimed: only paths under another claim's authority are refused).
        paths: concrete, normalised repo-relative paths.
        edits: what the change does to symbols, per path (see
            :mod:`detente.domain.named_authority`); a path without one is a change to the
            whole file.

    Returns:
        The findings; empty when every path may change.
    """
    out: list[PathFinding] = []
    edits = edits or {}
    # A repository without memory documents never loads their family.
    memory = state.memory if claim is not None and state.has_memory() else None
    for path in dict.fromkeys(paths):
        doc = memory.get(path) if memory is not None else None
        if doc is not None and not _private(doc):
            out.append(PathFinding(path, "memory", doc_class=doc.doc_class.value))
            continue
        refusing, outside = writable(state, claim, path, edits.get(path))
        artifact = artifact_at(state, claim, path) if refusing or outside else None
        inputs = artifact.inputs if artifact is not None else ()
        for other in refusing:
            out.append(PathFinding(path, "held", other.id, other.agent.name, inputs))
        if outside:
            out.append(PathFinding(path, "outside", inputs=inputs))
    return out


def commit_findings(
    state: RepoState,
    claim: Claim | None,
    paths: Sequence[str],
    edits: Mapping[str, Edit] | None = None,
) -> tuple[list[str], list[PathFinding]]:
    """The ``pre-commit`` check: may ``claim`` (or nobody) commit these staged paths?

    ``edits``: what the change does to symbols, by path (see :func:`path_findings`).

    Returns:
        ``(problems, findings)``: ``problems`` are sentences about the claim itself (not
        live, not ``active``); ``findings`` the refused paths.
    """
    problems: list[str] = []
    if claim is not None and not writes_granted_scope(claim):
        problems.append(
            f"claim {claim.id} is {claim.status.value}: only an active claim (or a granted "
            "one waiting for more) commits work"
        )
    return problems, path_findings(state, claim, paths, edits)


def push_failures(
    state: RepoState, ref: str, commits: Sequence[PushedCommit], *, fast_forward: bool
) -> list[str]:
    """The ``pre-receive`` check of an update of a protected ref.

    Every commit the update adds must name (trailer ``Detente-Claim: <id>``) a claim of
    this repository in ``ready_for_review`` or ``integrated``, change only paths inside
    that claim's targets, and touch no path another live claim holds.

    Args:
        state: the repository's projection.
        ref: the protected ref, e.g. ``refs/heads/main``.
        commits: the commits the update adds (new tip first or last, any order).
        fast_forward: whether the new tip descends from the old one.

    Returns:
        Every failure as one sentence; empty when the update is a valid integration.
    """
    failures: list[str] = []
    if not fast_forward:
        failures.append(f"{ref}: not a fast-forward (protected refs only move forward)")
    for commit in commits:
        short = commit.oid[:12]
        if not commit.claim_ids:
            failures.append(
                f"commit {short} has no 'Detente-Claim: <id>' trailer: {ref} is advanced only "
                "by the integration of a detente claim"
            )
            continue
        claims = [state.claims.get(c) for c in commit.claim_ids]
        for claim_id, claim in zip(commit.claim_ids, claims, strict=True):
            if claim is None:
                failures.append(f"commit {short} names unknown claim {claim_id}")
            elif claim.status not in INTEGRABLE:
                failures.append(
                    f"commit {short}: claim {claim_id} is {claim.status.value}, not "
                    "ready_for_review or integrated"
                )
        known = [c for c in claims if c is not None]
        if not known:
            continue
        edits: dict[str, Edit] = {path: (symbols, out) for path, symbols, out in commit.edits}
        for path in commit.files:
            # A path is fine when any named claim may change it; a symbol-scoped claim
            # (its own, or another's hold) is judged by the symbols the commit touches.
            per_claim = [path_findings(state, c, [path], edits) for c in known]
            if any(not found for found in per_claim):
                continue
            for finding in dict.fromkeys(f for found in per_claim for f in found):
                owner = known[0].id if finding.kind == "outside" else None
                sentence = finding.sentence(owner)
                if finding.kind == "outside" and path in edits:
                    stray = stray_edits(known[0].symbols, path, *edits[path])
                    if stray:
                        sentence = (
                            f"{path} changes {', '.join(stray)} outside claim {owner}'s symbols"
                        )
                failures.append(f"commit {short}: {sentence}")
    return failures


def _private(doc: MemoryDocument) -> bool:
    """Whether a memory document is ``private`` (the family is loaded: it has documents)."""
    from detente.domain.memory.model import DocClass

    return doc.doc_class is DocClass.PRIVATE
