"""Write authority over first-class generated artifacts: judged on their generator inputs.

A committed generated artifact (``docs/openapi.json`` rebuilt from ``src/app/api/**``) is
changed by whoever changes its inputs: two claims on different routes both regenerate
it, and neither overwrites the other's work (the file is rebuilt, not merged). So a
write to an artifact declared first-class (:class:`~detente.domain.overlap.trees.Artifact`,
``[[generated.artifacts]]`` in ``detente.toml`` at the writer's base commit) is decided
on its inputs, not on its path:

* a claim whose granted path patterns (or modules) meet one of the inputs may write the
  artifact: it is inside its scope, never ``out_of_scope``, and claims holding the
  artifact's path refuse nothing (their conflict, if any, is on the inputs, judged when
  the claims opened);
* a claim that covers none of the inputs is refused by the claims that hold inputs, and
  is outside its scope otherwise.

Pure: the artifact declarations come from the base tree the service hands in.
"""

from __future__ import annotations

from collections.abc import Callable

from detente.domain.claims.model import Claim
from detente.domain.overlap.globs import Budget, Undecided, intersect
from detente.domain.overlap.modules import module_patterns
from detente.domain.overlap.search import ANALYSIS_BUDGET
from detente.domain.overlap.trees import Artifact
from detente.domain.state import RepoState

__all__ = ["artifact_at", "artifact_writable", "covers_inputs"]


def artifact_at(state: RepoState, claim: Claim | None, path: str) -> Artifact | None:
    """The first-class artifact ``path`` is at ``claim``'s base commit (None: not one,
    no claim, or no tree known)."""
    if claim is None or state.trees is None:
        return None
    view = state.trees.view(claim.base_commit)
    return view.artifact(path) if view is not None else None


def _meets(a: str, b: str, budget: Budget) -> bool:
    try:
        return intersect(a, b, budget=budget) is not None
    except Undecided:  # cannot tell within the budget: do not grant on a guess
        return False


def covers_inputs(claim: Claim, artifact: Artifact) -> bool:
    """Whether ``claim``'s granted patterns or modules meet one of the artifact's inputs."""
    budget = Budget(total=ANALYSIS_BUDGET)
    mine = [p for p in claim.paths if p not in claim.pending_paths]
    mine += [p for m in claim.modules for p in module_patterns(m)]
    return any(_meets(p, i, budget) for p in mine for i in artifact.inputs)


def artifact_writable(
    state: RepoState,
    claim: Claim,
    artifact: Artifact,
    refuses: Callable[[Claim], bool],
) -> tuple[list[Claim], bool]:
    """``(refusing claims, outside)`` for ``claim`` writing the artifact (module docstring).

    Args:
        state: the repository's projection.
        claim: the writer.
        artifact: the artifact being written.
        refuses: whether a claim's authority holds the writer off at all
            (:func:`detente.domain.authority.blocks`).

    Returns:
        The claims holding the artifact's inputs that refuse the write (sorted by id;
        empty when ``claim`` covers an input), and whether the write is outside
        ``claim``'s scope.
    """
    if covers_inputs(claim, artifact):
        return [], False
    budget = Budget(total=ANALYSIS_BUDGET)
    found: dict[str, Claim] = {}
    for pattern in artifact.inputs:
        for key, _theirs, _witness in state.claims.path_index.overlapping(
            pattern, exclude=claim.id, budget=budget
        ):
            other = state.claims.get(key)
            if other is not None and refuses(other):
                found[key] = other
    refusing = [found[k] for k in sorted(found)]
    return refusing, not refusing
