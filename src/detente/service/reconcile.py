"""Diff-vs-intent use cases: the symbols a claim's work touches now, and where two
intents meet (``reconcile_diff_intent``, ``POST /v1/reconcile``, ``detente reconcile``).

An *intent* is one side of a comparison:

- ``{claimId}``: what a claim declared (paths, modules, symbols) at its base commit;
- ``{claimId, actual: true}``: what the claim's work actually touches: its worktree
  (uncommitted and untracked files included) when it exists on disk, else its branch
  head, diffed against its work base (its base commit, or the merge-base with the
  default branch once it rebased: :mod:`detente.service.claim_work`) and mapped onto
  symbols on both sides;
- ``{paths, symbols, modules, roughChangeKind}``: an explicit plan, read at ``commit``
  (default: the repository's ``HEAD``).

The answer lists the symbols (and the files, for whole-file targets) both sides touch,
and the blast radius: references to the touched symbols found with tree-sitter, followed
``depth`` hops and at most ``limit`` references, truncation stated; ``interactions`` are
the references from one side's symbols into the other's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from detente.domain.authority import owns
from detente.domain.claims.model import Claim
from detente.domain.overlap import modules as mod
from detente.domain.overlap import symbols as sym
from detente.domain.overlap.globs import compile_pattern
from detente.domain.overlap.paths import normalize_pattern
from detente.errors import ValidationError
from detente.index.references import blast_radius
from detente.index.symbols import SymbolIndex, SymbolTable
from detente.service.claim_work import claim_work
from detente.service.core import ServiceCore
from detente.service.repo_index import symbol_index

__all__ = ["IntentSpec", "ReconcileService"]

_MAX_LISTED = 200
#: The most (glob, file) pairs one side of a reconciliation may read through the glob
#: automaton: the files left after each glob's literal prefix and suffix test (``dir/**``
#: costs nothing). A wildcard-heavy glob costs up to ~0.1 ms per file in the pure-Python
#: matcher, so this keeps one request to a few seconds, not minutes.
MAX_PATTERN_FILE_PAIRS = 50_000


@dataclass(frozen=True)
class IntentSpec:
    """One side of a reconciliation (see the module docstring)."""

    claim_id: str | None = None
    actual: bool = False
    paths: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    rough_change_kind: str | None = None
    label: str = ""


@dataclass
class _Side:
    label: str
    source: str
    commit: str
    files: set[str] = field(default_factory=set)
    symbols: set[str] = field(default_factory=set)
    change_kind: str | None = None
    claim_id: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "source": self.source,
            "claimId": self.claim_id,
            "commit": self.commit,
            "roughChangeKind": self.change_kind,
            "files": sorted(self.files)[:_MAX_LISTED],
            "symbols": sorted(self.symbols)[:_MAX_LISTED],
            "truncated": len(self.files) > _MAX_LISTED or len(self.symbols) > _MAX_LISTED,
        }


class ReconcileService:
    """Symbols touched by a claim's work, and two intents reconciled."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def _index_for(self, repo: str) -> tuple[SymbolIndex, Path]:
        path = self.core.repo(repo).path
        if path is None:
            raise ValidationError(
                f"repository {repo!r} has no checkout on this server: symbols need one",
                field="repo",
            )
        return symbol_index(path), path

    def _claim(self, claim_id: str) -> Claim:
        for name in sorted(self.core.repos):
            state = self.core.fresh(name)
            claim = state.claims.get(claim_id)
            if claim is not None:
                return claim
        from detente.errors import NotFoundError

        raise NotFoundError(f"no claim {claim_id!r}", claimId=claim_id)

    def claim_touches(self, claim_id: str) -> dict[str, Any]:
        """What a claim's work touches now (API ``GET /v1/claims/{id}/symbols``).

        Returns:
            ``{claimId, base, head, worktree, files[{path, oldPath, symbols[],
            outsideSymbols}], symbols[], outsideScope[]}``; ``outsideScope`` lists the
            touched symbols and files the claim's targets do not cover.

        Raises:
            NotFoundError: ``not_found``; ValidationError: no checkout or no work yet;
            ConflictError: ``conflict`` (409, ``field: worktree``) when the claim's
            worktree is not a git worktree of its repository.
        """
        claim = self._claim(claim_id)
        index, path = self._index_for(claim.repo)
        work = claim_work(path, index, claim)
        files, head, worktree = work.files, work.head, work.worktree
        touched_symbols = sorted({s for f in files for s in f.symbols})
        # The write rule's own answer (domain/authority.py), symbol by symbol.
        outside = [s for s in touched_symbols if not _owns_symbol(claim, s)]
        outside += [f.path for f in files if f.outside and not owns(claim, f.path)]
        return {
            "claimId": claim.id,
            "base": work.base,
            "head": head,
            "worktree": str(worktree) if worktree else None,
            "files": [f.to_wire() for f in files],
            "symbols": touched_symbols,
            "outsideScope": sorted(set(outside)),
        }

    def reconcile_intents(
        self, repo: str, a: IntentSpec, b: IntentSpec, *, depth: int = 2, limit: int = 50
    ) -> dict[str, Any]:
        """Where two intents meet (API ``POST /v1/reconcile``).

        Args:
            repo: the repository.
            a: one side; b: the other.
            depth: blast-radius hops (1 to 5).
            limit: the most references reported (1 to 500).

        Returns:
            ``{overlap, shared[{target, a, b}], a, b, blastRadius, interactions[]}``.

        Raises:
            ValidationError: ``validation_error`` (a side names nothing, bad bounds,
                ambiguous symbol); NotFoundError: an unknown claim.
        """
        if not 1 <= depth <= 5:
            raise ValidationError("depth must be between 1 and 5", field="depth")
        if not 1 <= limit <= 500:
            raise ValidationError("limit must be between 1 and 500", field="limit")
        index, _ = self._index_for(repo)
        side_a = self._side(index, repo, a, "a")
        side_b = self._side(index, repo, b, "b")
        shared = _shared(side_a, side_b)
        start = sorted(
            {s["target"] for s in shared if sym.split_symbol(s["target"])[0] is not None}
            | side_a.symbols
            | side_b.symbols
        )
        radius = blast_radius(index, side_b.commit, start, depth=depth, limit=limit)
        interactions = [
            r.to_wire()
            for r in radius.references
            if r.within is not None
            and (
                (_in_side(side_a, r.symbol) and _in_side(side_b, r.within))
                or (_in_side(side_b, r.symbol) and _in_side(side_a, r.within))
            )
        ]
        return {
            "overlap": bool(shared),
            "shared": shared,
            "a": side_a.to_wire(),
            "b": side_b.to_wire(),
            "blastRadius": radius.to_wire(),
            "interactions": interactions,
            "next": (
                "split the shared symbols between you, or serialize the work"
                if shared
                else (
                    "no shared symbol, but one side references what the other changes: "
                    "agree on the interface first"
                    if interactions
                    else "no shared symbol: both can proceed"
                )
            ),
        }

    def _side(self, index: SymbolIndex, repo: str, spec: IntentSpec, label: str) -> _Side:
        if spec.claim_id:
            claim = self._claim(spec.claim_id)
            if claim.repo != repo:
                raise ValidationError(
                    f"{label}: claim {claim.id} is in repository {claim.repo!r}, not {repo!r}",
                    field=f"{label}.claimId",
                )
            if spec.actual:
                work = claim_work(self._index_for(repo)[1], index, claim)
                side = _Side(label, "actual", work.base, claim_id=claim.id)
                for f in work.files:
                    side.symbols |= set(f.symbols)
                    if f.outside or not f.symbols:
                        side.files.add(f.path)
                side.change_kind = spec.rough_change_kind
                return side
            table = index.at(claim.base_commit)
            side = _Side(label, "declared", table.commit, claim_id=claim.id)
            _declare(side, table, claim.paths + claim.pending_paths, claim.modules, claim.symbols)
            side.change_kind = spec.rough_change_kind
            return side
        if not (spec.paths or spec.symbols or spec.modules):
            raise ValidationError(
                f"{label} names nothing: give claimId, or paths, symbols or modules",
                field=label,
            )
        table = index.at("HEAD")
        patterns = tuple(
            normalize_pattern(p, field=f"{label}.paths[{i}]") for i, p in enumerate(spec.paths)
        )
        symbols = index.resolve_all(spec.symbols, table.commit, field=f"{label}.symbols")
        side = _Side(label, "explicit", table.commit, change_kind=spec.rough_change_kind)
        _declare(side, table, patterns, spec.modules, symbols)
        return side


def _declare(
    side: _Side,
    table: SymbolTable,
    patterns: tuple[str, ...],
    module_names: tuple[str, ...],
    symbols: tuple[str, ...],
) -> None:
    """Whole files matched by patterns and modules; symbols as named.

    Raises:
        ValidationError: ``validation_error`` when the patterns times the commit's files
            exceed :data:`MAX_PATTERN_FILE_PAIRS` (nothing is matched).
    """
    module_patterns = [p for m in module_names for p in mod.module_patterns(m)]
    globs = [p for p in (*patterns, *module_patterns) if any(ch in p for ch in "*?[")]
    compiled = [compile_pattern(p) for p in globs]
    pairs = 0
    for c in compiled:
        if pairs > MAX_PATTERN_FILE_PAIRS:
            break  # refused below: counting further changes nothing
        if c.pattern != f"{c.prefix}**":
            pairs += sum(1 for f in table.files if f.startswith(c.prefix) and f.endswith(c.suffix))
    if pairs > MAX_PATTERN_FILE_PAIRS:
        raise ValidationError(
            f"{side.label}: {len(globs)} glob patterns would each be read against the files "
            f"of commit {table.commit[:12]} (at least {pairs:,} glob matches, more than "
            f"{MAX_PATTERN_FILE_PAIRS:,}): name fewer or narrower patterns (a literal "
            "directory prefix such as 'lib/**' or a literal path costs nothing)",
            field=f"{side.label}.paths",
        )
    for path in table.files:
        if any(c.matches(path) for c in compiled):
            side.files.add(path)
    # A literal path is that file, whether the commit has it or it is a file to create;
    # a module's literal candidates (``pkg/mod.py``) count only where the file exists.
    side.files.update(p for p in patterns if p not in globs)
    existing = set(table.files)
    side.files.update(p for p in module_patterns if p not in globs and p in existing)
    side.symbols |= set(symbols)


def _in_side(side: _Side, symbol: str) -> bool:
    path, _ = sym.split_symbol(symbol)
    return (path is not None and path in side.files) or any(
        sym.contains(s, symbol) for s in side.symbols
    )


def _shared(a: _Side, b: _Side) -> list[dict[str, Any]]:
    """Targets both sides touch: meeting symbols, a symbol in the other's file, a file."""
    found: dict[str, dict[str, Any]] = {}
    for s in sorted(a.symbols):
        for t in sorted(b.symbols):
            met = sym.meet(s, t)
            if met is not None:
                found.setdefault(met, {"target": met, "kind": "symbol", "a": s, "b": t})
        path, _ = sym.split_symbol(s)
        if path in b.files:
            found.setdefault(s, {"target": s, "kind": "symbol", "a": s, "b": path})
    for t in sorted(b.symbols):
        path, _ = sym.split_symbol(t)
        if path in a.files:
            found.setdefault(t, {"target": t, "kind": "symbol", "a": path, "b": t})
    for path in sorted(a.files & b.files):
        found.setdefault(path, {"target": path, "kind": "file", "a": path, "b": path})
    return [found[k] for k in sorted(found)]


def _owns_symbol(claim: Claim, symbol: str) -> bool:
    path, _ = sym.split_symbol(symbol)
    return path is not None and owns(claim, path, ((symbol,), False))
