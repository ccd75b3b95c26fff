"""The ``pre-commit`` check, read-only: may a claim (or nobody) commit these staged paths?

It reads the repository's state (snapshot and tail) and asks the domain
(:func:`~detente.domain.gates.findings.commit_findings`, which asks
:mod:`detente.domain.authority`); it decides nothing else and writes nothing. The
service's :meth:`~detente.service.gates.GatesService.check_commit` (the server's
``/v1`` pre-commit operation) and the local hook
(:func:`detente.client.local_check.check_commit_locally`, on a bare
:class:`~detente.service.core.ServiceCore`: no write services, no views) both call
:func:`check_commit`, so the same function decides on every surface.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from detente.domain.claims.guards import get_claim
from detente.domain.gates.findings import PathFinding, commit_findings
from detente.domain.named_authority import Edit
from detente.domain.overlap.paths import normalize_path
from detente.errors import ValidationError
from detente.service.core import ServiceCore
from detente.service.repo_index import symbols_matter, worktree_edits

__all__ = ["LIVE", "CommitCheck", "branch_claim", "check_commit"]

#: Claim statuses whose holder may still commit (the claim of a checked-out branch).
LIVE = ("active", "negotiating", "blocked", "suspended", "ready_for_review")


@dataclass(frozen=True)
class CommitCheck:
    """The ``pre-commit`` guard's answer.

    Attributes:
        claim_id: the committing claim (None: nobody claimed this commit).
        problems: sentences about the claim itself (not active, ...).
        findings: refused paths (held by another live claim, or outside the claim).
    """

    claim_id: str | None
    problems: list[str] = field(default_factory=list)
    findings: list[PathFinding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and not self.findings

    def to_wire(self) -> dict[str, Any]:
        """``{ok, claimId, problems[], findings[{path, kind, claimId, agent}], reasons[]}``."""
        return {
            "ok": self.ok,
            "claimId": self.claim_id,
            "problems": list(self.problems),
            "findings": [f.to_wire() for f in self.findings],
            "reasons": self.problems + [f.sentence(self.claim_id) for f in self.findings],
        }


def branch_claim(core: ServiceCore, repo: str, branch: str) -> str | None:
    """The one live claim (:data:`LIVE`) of ``repo`` whose branch is ``branch``; None
    when there is none or several."""
    name = core.repo(repo).name
    state = core.fresh(name)
    with core.lock(name):
        mine = [
            c.id for c in state.claims.values() if c.branch == branch and c.status.value in LIVE
        ]
    return mine[0] if len(mine) == 1 else None


def check_commit(
    core: ServiceCore,
    repo: str,
    claim_id: str | None,
    paths: Sequence[str],
    *,
    edits: Mapping[str, Edit] | None = None,
    read_edits: Callable[[], Mapping[str, Edit] | None] | None = None,
) -> CommitCheck:
    """May ``claim_id`` (or nobody) commit these staged paths?

    Args:
        core: the service's core (its store and repositories).
        repo: the repository name.
        claim_id: the committing claim, or None.
        paths: staged repo-relative file paths.
        edits: what the staged diff does to the symbols of each file (``path ->
            (innermost symbols touched, lines outside every symbol)``, read by the
            hook from the index git commits); a staged file missing from it is
            judged whole. None: read from the claim's worktree (a superset).
        read_edits: reads ``edits`` (None when it cannot), called only when symbols
            matter to this commit (the local hook: parsing is skipped otherwise).

    Returns:
        The :class:`CommitCheck` (the hook refuses unless ``ok``).

    Raises:
        ValidationError: unknown repository or a malformed path (``paths[i]``).
        NotFoundError: unknown ``claim_id``.
    """
    state = core.fresh(core.repo(repo).name)
    with core.lock(repo):
        norm = [
            normalize_path(p, case_insensitive=state.case_insensitive, field=f"paths[{i}]")
            for i, p in enumerate(paths)
        ]
        claim = get_claim(state, claim_id) if claim_id is not None else None
        staged = edits is not None or read_edits is not None
        matter = symbols_matter(state, claim, norm, staged=staged)
    if matter and edits is None and read_edits is not None:
        edits = read_edits()
        if edits is None:  # unreadable: as if the hook had sent none
            with core.lock(repo):
                matter = symbols_matter(state, claim, norm)
    if edits is not None:
        judged = _normalized_edits(edits, state.case_insensitive) if matter else None
    else:  # an older hook: the claim's worktree diff (a superset of what is staged)
        judged = worktree_edits(core.repos[state.repo].path, claim) if matter else None
    with core.lock(repo):
        problems, findings = commit_findings(state, claim, norm, judged)
    return CommitCheck(claim_id, problems, findings)


def _normalized_edits(edits: Mapping[str, Edit], case_insensitive: bool) -> dict[str, Edit]:
    """Staged edits keyed by normalised path (a malformed path is left out: judged whole)."""
    out: dict[str, Edit] = {}
    for path, edit in edits.items():
        try:
            out[normalize_path(path, case_insensitive=case_insensitive)] = edit
        except ValidationError:
            continue
    return out
