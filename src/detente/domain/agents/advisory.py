"""The advisory view of a session: its claims, its readiness, two intents reconciled.

Advisory means evidence, never enforcement (DESIGN principle 6): readiness says ``ready``
or ``caution`` and never refuses on overlap grounds; only malformed input is refused
(``validation_error``). Pure functions over :class:`~detente.domain.state.RepoState`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from detente.domain.agents.decide import check_session_id
from detente.domain.authority import carries_authority
from detente.domain.claims.model import ClaimStatus
from detente.domain.overlap import symbols as sym
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.index import PatternIndex
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.overlap.symbols import SEPARATOR
from detente.domain.policy import DEFAULT_POLICY, Policy
from detente.domain.state import RepoState
from detente.domain.validation import pattern_list, symbol_list
from detente.domain.write_check import split_target
from detente.errors import ValidationError

# ---------------------------------------------------------------------------- readiness


@dataclass(frozen=True)
class OverlappingClaim:
    """Another session's holding claim that covers some of the asked paths.

    Attributes:
        claim_id: the claim.
        session_id: its session (None for a claim opened without one, e.g. by the CLI).
        agent_name: its holder's display name.
        paths: the holder's patterns that meet the asked paths.
        witness: one path both sides match (None: undecided within the search budget).
        status: the claim's status (``active``, ``negotiating``, ``expired``...).
        reason: why they hold it (the claim's objective).
    """

    claim_id: str
    session_id: str | None
    agent_name: str
    paths: tuple[str, ...]
    witness: str | None
    status: ClaimStatus
    reason: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "claimId": self.claim_id,
            "sessionId": self.session_id,
            "agentName": self.agent_name,
            "paths": list(self.paths),
            "witness": self.witness,
            "status": self.status.value,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Readiness:
    """``ready`` when no other session's claim covers the paths, else ``caution``."""

    readiness: Literal["ready", "caution"]
    overlapping: tuple[OverlappingClaim, ...] = ()
    #: The session's own live claims whose work drifted outside their scope or predicts
    #: a merge conflict: ``{claimId, drifted[], conflicts[{against, files[]}]}``.
    advisories: tuple[dict[str, Any], ...] = ()

    def to_wire(self) -> dict[str, Any]:
        """``{readiness, overlappingClaims[{claimId, sessionId, agentName, paths, ...}]}``
        and, when there are any, ``advisories[]``."""
        out: dict[str, Any] = {
            "readiness": self.readiness,
            "overlappingClaims": [o.to_wire() for o in self.overlapping],
        }
        if self.advisories:
            out["advisories"] = [dict(a) for a in self.advisories]
        return out


def assess_readiness(
    state: RepoState,
    session_id: str,
    paths: Sequence[str],
    policy: Policy = DEFAULT_POLICY,
) -> Readiness:
    """Whether ``session_id`` may edit ``paths`` without meeting another session's claim.

    Every advisory file lease counts, and every protocol claim whose authority covers
    the paths (:mod:`detente.domain.authority`: granted targets, an expired claim's too:
    its work is frozen, not released; a claim still negotiating holds nothing yet). The
    session's own claims count only when they cover the paths without authority yet
    (negotiating, blocked, suspended): the same answer ``claim check`` gives, so a session
    is never told to edit what its own claim may not write.

    Args:
        state: the repository's projection, expiry applied.
        session_id: the asking session (need not be registered).
        paths: repo-relative paths or globs (at least one), or one symbol of a file each
            (``path::Qualified.name``).
        policy: limits (number of targets).

    Returns:
        The assessment; never refuses because of an overlap. The session's own live
        claims whose work drifted outside their scope or predicts a merge conflict are
        listed as ``advisories`` and make it ``caution`` too.

    Raises:
        ValidationError: ``validation_error`` naming ``sessionId`` or ``paths[i]``.
    """
    check_session_id(session_id)
    files = [p for p in paths if SEPARATOR not in p]
    asked = pattern_list(state, files, "paths", policy)
    # ``path::Symbol``: that symbol alone, as ``claim check`` judges it.
    symbols = tuple(
        dict.fromkeys(
            s for i, p in enumerate(paths) if (s := split_target(state, p, f"paths[{i}]")[1])
        )
    )
    if not asked and not symbols:
        raise ValidationError("paths must name at least one path or glob", field="paths")
    entries: list[OverlappingClaim] = []
    for overlap in find_overlaps(state, Targets(paths=asked, symbols=symbols, advisory=True)):
        other = state.claims[overlap.claim_id]
        theirs = tuple(dict.fromkeys(t.theirs for t in overlap.targets))
        if other.agent.session_id == session_id:
            if other.advisory or all(carries_authority(other, t) for t in theirs):
                continue  # what the session itself holds
        elif not other.advisory and not any(carries_authority(other, t) for t in theirs):
            continue  # the one rule: a claim still negotiating holds nothing yet
        entries.append(
            OverlappingClaim(
                claim_id=other.id,
                session_id=other.agent.session_id,
                agent_name=other.agent.name,
                paths=theirs,
                witness=overlap.targets[0].witness,
                status=other.status,
                reason=other.objective,
            )
        )
    advisories = _own_advisories(state, session_id)
    caution = entries or advisories
    return Readiness("caution" if caution else "ready", tuple(entries), advisories)


def _own_advisories(state: RepoState, session_id: str) -> tuple[dict[str, Any], ...]:
    """What the session's own live claims' work predicts (:mod:`detente.domain.checks`):
    paths changed outside the claim's scope, and merge conflicts with other claims or
    the integration branch."""
    out: list[dict[str, Any]] = []
    for claim_id, checks in sorted(state.checks.items()):
        claim = state.claims.get(claim_id)
        if claim is None or not claim.holding or claim.agent.session_id != session_id:
            continue
        conflicts = checks.merge.conflicts if checks.merge is not None else ()
        if checks.drifted or conflicts:
            out.append(
                {
                    "claimId": claim_id,
                    "drifted": list(checks.drifted),
                    "conflicts": [
                        {"against": c.against, "files": list(c.files)} for c in conflicts
                    ],
                }
            )
    return tuple(out)


# ---------------------------------------------------------------------------- reconcile


@dataclass(frozen=True)
class Intent:
    """What one side means to change: path patterns, symbols and a change kind.

    Attributes:
        label: how the report names this side (a session id, or ``a``/``b``).
        paths: normalised path patterns.
        symbols: symbol names (compared exactly until the symbol index exists).
        change_kind: free text such as ``edit``, ``rename``, ``delete``, ``api``.
    """

    label: str
    paths: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    change_kind: str | None = None

    @staticmethod
    def of(
        label: str,
        *,
        paths: Sequence[str] = (),
        symbols: Sequence[str] = (),
        change_kind: str | None = None,
        case_insensitive: bool = False,
        fld: str = "a",
        policy: Policy = DEFAULT_POLICY,
    ) -> Intent:
        """An intent with validated, normalised targets.

        Raises:
            ValidationError: ``validation_error`` naming ``<fld>.paths[i]`` or
                ``<fld>.symbols[i]``.
        """
        if len(paths) > policy.max_targets:
            raise ValidationError(
                f"{fld}.paths lists more than {policy.max_targets} targets", field=f"{fld}.paths"
            )
        normalised = tuple(
            dict.fromkeys(
                normalize_pattern(p, case_insensitive=case_insensitive, field=f"{fld}.paths[{i}]")
                for i, p in enumerate(paths)
            )
        )
        return Intent(
            label=label,
            paths=normalised,
            symbols=symbol_list(symbols, f"{fld}.symbols", policy),
            change_kind=change_kind,
        )


@dataclass(frozen=True)
class SharedTarget:
    """A target both intents would touch: ``a``'s and ``b``'s spelling and a witness."""

    kind: Literal["path", "symbol"]
    a: str
    b: str
    witness: str | None

    def to_wire(self) -> dict[str, Any]:
        return {"kind": self.kind, "a": self.a, "b": self.b, "witness": self.witness}


def reconcile(a: Intent, b: Intent) -> list[SharedTarget]:
    """Where two intents meet, ``a``'s order first: every pair of overlapping path
    patterns (with a witness path both match); every pair of symbols where one contains
    the other (the same symbol, a class and its method; the witness is the contained
    one); every symbol inside a file the other side's pattern matches.

    The containment rules of the claim protocol (:mod:`detente.domain.overlap.symbols`),
    by name: the caller resolves bare names first where it can read the code.
    """
    index = PatternIndex()
    for pattern in b.paths:
        index.add("b", pattern)
    shared: list[SharedTarget] = []
    for mine in a.paths:
        for _, theirs, witness in index.overlapping(mine):
            shared.append(SharedTarget("path", mine, theirs, witness))
        shared.extend(
            SharedTarget("symbol", mine, t, t) for t in b.symbols if sym.path_meets(mine, t)
        )
    for mine in a.symbols:
        for theirs in b.symbols:
            met = sym.meet(mine, theirs)
            if met is not None:
                shared.append(SharedTarget("symbol", mine, theirs, met))
        shared.extend(
            SharedTarget("symbol", mine, p, mine) for p in b.paths if sym.path_meets(p, mine)
        )
    return shared
