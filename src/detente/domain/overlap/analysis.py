"""Overlap analysis: which holding claims a set of targets meets, and why.

Paths are compared as globs (exact automaton intersection with a witness path, found
through :class:`PatternIndex`, never a scan of every claim); contract areas by exact
value, symbols and modules by containment (a file contains
its symbols, a class its methods, a module its submodules and files; see
:mod:`detente.domain.overlap.named`); memory impacts by path intersection and section. Every
overlap with a holding claim is ``blocking`` (DESIGN principle 5: symbolic overlap can
block, semantic similarity only warns), except where either side is an advisory claim
(an MCP file lease): those inform, never block. One report entry per other claim, its
targets listed inside, ordered by claim id for stable output.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from detente.domain.claims.model import Claim, MemoryImpact
from detente.domain.memory.model import DocClass
from detente.domain.overlap.entries import directory_entries
from detente.domain.overlap.globs import Budget, Undecided, compile_pattern, intersect
from detente.domain.overlap.index import PatternIndex
from detente.domain.overlap.model import Overlap, OverlapKind, OverlapTarget, Severity
from detente.domain.overlap.modules import module_patterns
from detente.domain.overlap.named import named_overlaps
from detente.domain.overlap.reasons import overlap_reason
from detente.domain.overlap.search import ANALYSIS_BUDGET
from detente.domain.overlap.trees import Judge, Verdict
from detente.domain.state import RepoState

_KIND_ORDER = (
    OverlapKind.PATH,
    OverlapKind.MEMORY,
    OverlapKind.MODULE,
    OverlapKind.SYMBOL,
    OverlapKind.CONTRACT,
)


def _label(kinds: tuple[OverlapKind, ...]) -> OverlapKind:
    """The kind an entry is labelled with: ``contract`` whenever a contract area is
    shared (two changes to one agreement, whatever else they share; ``kinds`` lists the
    rest), else the first of ``kinds`` in :data:`_KIND_ORDER`."""
    return OverlapKind.CONTRACT if OverlapKind.CONTRACT in kinds else kinds[0]


@dataclass(frozen=True)
class Targets:
    """Everything a claim wants: path patterns, modules, symbols, contract areas, memory."""

    paths: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    contracts: tuple[str, ...] = ()
    memory: tuple[MemoryImpact, ...] = ()
    advisory: bool = False
    base_commit: str | None = None
    #: ``(pattern, carve-outs)`` pairs: what a split cut out of a pattern of ``paths``.
    carve_outs: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @staticmethod
    def of(claim: Claim) -> Targets:
        return Targets(
            paths=claim.paths + claim.pending_paths,
            modules=claim.modules,
            symbols=claim.symbols,
            contracts=claim.contract_areas,
            memory=claim.memory_impacts,
            advisory=claim.advisory,
            base_commit=claim.base_commit,
            carve_outs=claim.carve_outs,
        )

    def carved(self, pattern: str) -> tuple[str, ...]:
        """The carve-outs of one pattern of :attr:`paths` (empty: none)."""
        return next((cuts for p, cuts in self.carve_outs if p == pattern), ())


@dataclass
class _Found:
    kinds: list[OverlapKind] = field(default_factory=list)
    targets: list[OverlapTarget] = field(default_factory=list)
    verdicts: dict[OverlapTarget, Verdict] = field(default_factory=dict)

    def add(
        self, kind: OverlapKind, target: OverlapTarget, verdict: Verdict = Verdict.UNKNOWN
    ) -> None:
        self.verdicts[target] = verdict
        if kind not in self.kinds:
            self.kinds.append(kind)
        if target not in self.targets:
            self.targets.append(target)


def find_overlaps(
    state: RepoState,
    targets: Targets,
    *,
    exclude: str | None = None,
    granted_only: bool = False,
    among: Collection[str] | None = None,
) -> list[Overlap]:
    """Overlaps of ``targets`` with every holding claim of ``state`` except ``exclude``.

    Args:
        state: the repository's current projection.
        targets: normalised targets (see :func:`detente.domain.overlap.paths.normalize_pattern`).
        exclude: a claim id to ignore (the claim being analysed).
        granted_only: meet only the other claims' granted targets (not their
            ``pendingPaths``): the severity of what two claims both hold with authority,
            judged on those targets alone (invariant 3).
        among: when given, report only overlaps with these claims. Each one's overlap is
            the one the whole analysis reports (the index is walked, and its work budget
            spent, alike); the tree judgement of every other claim is skipped, so a room
            asks about its own parties at the cost of its own parties.

    Returns:
        One :class:`Overlap` per other claim, sorted by claim id; empty when none.
    """
    found: dict[str, _Found] = {}

    def add(
        claim_id: str, kind: OverlapKind, target: OverlapTarget, verdict: Verdict = Verdict.UNKNOWN
    ) -> None:
        if not granted_only or target.theirs not in state.claims[claim_id].pending_paths:
            found.setdefault(claim_id, _Found()).add(kind, target, verdict)

    def wanted(claim_id: str) -> bool:
        return among is None or claim_id in among

    budget = Budget(total=ANALYSIS_BUDGET)  # one analysis: bounded work in total
    private = state.memory.private_paths()
    if private:  # private memory documents are scratchpads: never coordinated
        targets = Targets(
            paths=tuple(p for p in targets.paths if p not in private),
            modules=targets.modules,
            symbols=targets.symbols,
            contracts=targets.contracts,
            memory=tuple(m for m in targets.memory if m.path not in private),
            advisory=targets.advisory,
            base_commit=targets.base_commit,
            carve_outs=targets.carve_outs,
        )

    judge = Judge(state.trees, targets.base_commit)
    for mine in targets.paths:
        for claim_id, theirs, witness in state.claims.path_index.overlapping(
            mine, exclude=exclude, budget=budget, carve_outs=targets.carved(mine)
        ):
            if not wanted(claim_id):
                continue
            found_witness = witness
            verdict, witness = _judge_path(
                judge, state.claims[claim_id].base_commit, mine, theirs, witness
            )
            cuts = (*targets.carved(mine), *state.claims[claim_id].carved(theirs))
            if witness is not None and cuts and _carved_out(cuts, witness):
                # The tree judge reads plain patterns: an existing file it found may lie in
                # a carve-out. The index's witness lies outside them; the verdict stays.
                witness = found_witness
            if verdict is not Verdict.GENERATED:
                add(
                    claim_id,
                    OverlapKind.PATH,
                    OverlapTarget(mine=mine, theirs=theirs, witness=witness),
                    verdict,
                )
    for mine in targets.paths:  # a directory claim meets a claim of its own entry
        for claim_id, theirs, own in directory_entries(state.claims.path_index, mine, exclude):
            known = found.get(claim_id, _Found()).targets
            if wanted(claim_id) and not any(t.theirs == theirs for t in known):
                add(claim_id, OverlapKind.PATH, OverlapTarget(mine, theirs, own), Verdict.LITERAL)
    for claim_id, kind_name, mine, theirs, witness in named_overlaps(
        paths=targets.paths,
        module_targets=targets.modules,
        symbol_targets=targets.symbols,
        path_index=state.claims.path_index,
        modules_held=state.claims.modules,
        symbols_held=state.claims.symbols,
        exclude=exclude,
        carve_outs=dict(targets.carve_outs),
    ):
        if not wanted(claim_id):
            continue
        verdict = Verdict.UNKNOWN
        if kind_name == "module":
            verdict, witness = _judge_module(state, judge, targets, claim_id, mine, theirs, witness)
        if verdict is not Verdict.GENERATED:
            add(
                claim_id,
                OverlapKind(kind_name),
                OverlapTarget(mine=mine, theirs=theirs, witness=witness),
                verdict,
            )
    for value in targets.contracts:
        for claim_id in sorted(state.claims.contracts.get(value, ())):
            if claim_id != exclude and wanted(claim_id):
                add(
                    claim_id,
                    OverlapKind.CONTRACT,
                    OverlapTarget(mine=value, theirs=value, witness=value),
                )
    _memory_overlaps(state, targets, exclude, found, budget)
    if among is not None:
        found = {c: f for c, f in found.items() if c in among}

    report: list[Overlap] = []
    for claim_id in sorted(found):
        other = state.claims[claim_id]
        entry = found[claim_id]
        kinds = tuple(k for k in _KIND_ORDER if k in entry.kinds)
        reason = overlap_reason(other, kinds, entry.targets)
        advisory = targets.advisory or other.advisory
        potential = all(v is Verdict.POTENTIAL for v in entry.verdicts.values())
        reason += _tree_note(entry, potential)
        pairs = state.meetings.resolved_pairs
        resolved = pairs.get(frozenset({exclude, claim_id})) if exclude else None
        # A resolution under which the pair may keep overlapping targets: the overlap
        # stays as advisory; who may write is decided by :mod:`detente.domain.authority`.
        if resolved is not None and resolved.resolution.still_shares():
            advisory = True
            reason += f"; settled by meeting {resolved.meeting_id} ({resolved.resolution.TYPE})"
        report.append(
            Overlap(
                claim_id=claim_id,
                agent=other.agent,
                kind=_label(kinds),
                severity=(
                    Severity.ADVISORY
                    if advisory
                    else Severity.POTENTIAL
                    if potential
                    else Severity.BLOCKING
                ),
                targets=tuple(entry.targets),
                reason=reason,
                kinds=kinds,
                their_status=other.status,
            )
        )
    return report


def _carved_out(cuts: tuple[str, ...], path: str) -> bool:
    return any(compile_pattern(c).matches(path) for c in cuts)


def _judge_path(
    judge: Judge, their_base: str | None, mine: str, theirs: str, witness: str | None
) -> tuple[Verdict, str | None]:
    """Tree verdict on a path overlap; an undecided one blocks unless a real file settles it.

    The glob search gave up on an undecided pair (``witness`` None), so nothing says the
    patterns meet only in paths nobody has: it stays blocking (``unknown``) unless a file
    of a base tree is covered by both, which decides it (``existing``, that file the
    witness).
    """
    if witness is not None:
        return judge(their_base, (mine,), (theirs,), witness)
    verdict, found = judge(their_base, (mine,), (theirs,), "")
    if verdict is Verdict.EXISTING:
        return verdict, found
    return Verdict.UNKNOWN, None


def _judge_module(
    state: RepoState,
    judge: Judge,
    targets: Targets,
    claim_id: str,
    mine: str,
    theirs: str,
    witness: str | None,
) -> tuple[Verdict, str | None]:
    """Tree verdict on a module finding met through a path (not by module names alone)."""
    if witness is None:  # undecided within the search budget: it blocks
        return Verdict.UNKNOWN, None
    other = state.claims[claim_id]
    mine_is_module = mine in targets.modules and mine not in targets.paths
    theirs_is_module = theirs in other.modules and theirs not in (other.paths + other.pending_paths)
    if mine_is_module and theirs_is_module:
        return Verdict.UNKNOWN, witness  # module names contain each other: no path involved
    mine_patterns = module_patterns(mine) if mine_is_module else (mine,)
    theirs_patterns = module_patterns(theirs) if theirs_is_module else (theirs,)
    return judge(other.base_commit, mine_patterns, theirs_patterns, witness)


def _tree_note(entry: _Found, potential: bool) -> str:
    """What the base trees said, for the reason: which severity rule applied."""
    if potential:
        return (
            "; potential only: they meet in paths that exist at neither base commit "
            f"(e.g. {entry.targets[0].witness!r})"
        )
    for target in entry.targets:
        verdict = entry.verdicts.get(target)
        if verdict is Verdict.EXISTING:
            return f"; {target.witness!r} exists at the base commit"
        if verdict is Verdict.LITERAL:
            return f"; one claim names {target.witness!r} literally (a file it means to create)"
    return ""


def _memory_overlaps(
    state: RepoState,
    targets: Targets,
    exclude: str | None,
    found: dict[str, _Found],
    budget: Budget,
) -> None:
    """Memory impacts meet when their paths intersect and their sections do (empty = all).

    Only the claims whose impact paths the memory index cannot rule out are examined.
    """
    private = state.memory.private_paths()
    index = state.claims.memory_index
    for claim_id in sorted(_memory_candidates(index, [m.path for m in targets.memory])):
        if claim_id == exclude:
            continue
        other = state.claims[claim_id]
        for mine in targets.memory:
            for theirs in other.memory_impacts:
                if theirs.path in private:
                    continue
                meet, witness = _meet(mine.path, theirs.path, budget)
                if not meet or _appenders(state, witness, mine, theirs):
                    continue
                shared = _shared_sections(mine.sections, theirs.sections)
                if shared is None:
                    continue
                label = witness
                if witness is not None and shared:
                    label = f"{witness}#{shared}"
                found.setdefault(claim_id, _Found()).add(
                    OverlapKind.MEMORY,
                    OverlapTarget(
                        mine=_memory_label(mine), theirs=_memory_label(theirs), witness=label
                    ),
                )
    # A memory impact also meets another claim's plain path pattern on the same file.
    for mine in targets.memory:
        for claim_id, theirs_path, witness in state.claims.path_index.overlapping(
            mine.path, exclude=exclude, budget=budget
        ):
            found.setdefault(claim_id, _Found()).add(
                OverlapKind.MEMORY,
                OverlapTarget(mine=_memory_label(mine), theirs=theirs_path, witness=witness),
            )
    for claim_id in sorted(_memory_candidates(index, targets.paths)):
        if claim_id == exclude:
            continue
        for theirs in state.claims[claim_id].memory_impacts:
            for mine_path in targets.paths:
                meet, witness = _meet(mine_path, theirs.path, budget)
                if meet:
                    found.setdefault(claim_id, _Found()).add(
                        OverlapKind.MEMORY,
                        OverlapTarget(
                            mine=mine_path, theirs=_memory_label(theirs), witness=witness
                        ),
                    )


def _memory_candidates(index: PatternIndex, patterns: Sequence[str]) -> set[str]:
    """Claims holding a memory impact whose path may meet one of ``patterns``."""
    found: set[str] = set()
    for pattern in patterns:
        found |= index.candidates(pattern)
    return found


def _meet(a: str, b: str, budget: Budget) -> tuple[bool, str | None]:
    """Whether two patterns meet, and the witness (None when undecided within budget)."""
    try:
        witness = intersect(a, b, budget=budget)
    except Undecided:
        return True, None
    return witness is not None, witness


def _appenders(state: RepoState, witness: str | None, a: MemoryImpact, b: MemoryImpact) -> bool:
    """Two appenders never contest: an append-only document is never exclusive (appends
    serialize in the repository's command transaction; see :mod:`.authority`)."""
    if a.mode == b.mode == "append_only":
        return True
    if witness is None:  # undecided within the search budget: no document to look at
        return False
    doc = state.memory.get(witness)
    return doc is not None and doc.doc_class is DocClass.APPEND_ONLY


def _shared_sections(a: tuple[str, ...], b: tuple[str, ...]) -> str | None:
    """'' when either side is the whole file, the first shared section, or None if disjoint."""
    if not a or not b:
        return ""
    common = sorted(set(a) & set(b))
    return common[0] if common else None


def _memory_label(impact: MemoryImpact) -> str:
    if impact.sections:
        return f"{impact.path}#{','.join(impact.sections)}"
    return impact.path
