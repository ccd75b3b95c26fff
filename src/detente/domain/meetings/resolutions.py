"""Meeting resolutions checked against a meeting (a decision), and the scopes a split leaves.

A resolution is one of the classes of :mod:`detente.domain.meetings.resolution_types`
(API.md "Meetings"); :func:`validate` checks it against the meeting and the claims it
names, one ``match`` case per type:

- ``split_ownership {assignments[{claimId, targets[]}]}``: partitions the *contested*
  targets only (``targets: []`` names a claim that gets nothing contested; at least one
  assignment is non-empty). Each listed claim keeps every target of its own; where one of its
  patterns meets another claim's assigned target, that target is *carved out* of the
  pattern (``docs/**`` minus ``docs/a.md``, :mod:`~detente.domain.overlap.carveouts`),
  and a pattern wholly inside others' assignments is given up. It gains its assigned
  targets (``path#section`` targets become memory impacts on that section).
  Assigned targets must come from what the claim asked for and be pairwise disjoint, and
  the resulting scopes must not overlap (else ``validation_error`` naming what is left);
  the claims go ``active`` unless another, unrelated claim still blocks them.
- ``serialize {first, then}``: ``then`` is ``suspended`` until ``first`` is integrated,
  completed or abandoned (see :mod:`detente.domain.meetings.reactions`); ``first`` goes ``active``.
- ``handoff {fromClaimId, toClaimId}``: the recipient's targets of every kind that meet
  the sender's scope (``targets``, :mod:`~detente.domain.meetings.target_kinds`) become
  the recipient's once it accepts (the sender must have been granted; moving nothing is
  refused); the sender keeps the rest of its
  patterns with those targets carved out, and is closed (``abandoned``) when nothing is
  left. Until the accept the sender keeps everything and the recipient waits
  (``negotiating``).
- ``joint {claimIds[]}``: one coupled group sharing the contested targets; all ``active``.
- ``human_arbitration {}``: the meeting escalates; participants are ``blocked`` until an
  arbitrator (from CODEOWNERS) resolves with one of the types above.

Every type must name each live participant of the meeting (else ``validation_error``
naming the unsettled ones), and only live claims (else ``invalid_transition``).

The claim events each type implies live in :mod:`detente.domain.meetings.resolution_events`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, assert_never

from detente.domain.claims.model import Claim, MemoryImpact
from detente.domain.meetings import split_named, target_kinds
from detente.domain.meetings.model import Decided, Meeting
from detente.domain.meetings.resolution_types import (
    Assignment,
    Handoff,
    HumanArbitration,
    Joint,
    Resolution,
    Serialize,
    SplitOwnership,
)
from detente.domain.overlap import modules
from detente.domain.overlap.carveouts import carved_may_overlap, intersect_carved, is_covered
from detente.domain.overlap.globs import Undecided, intersect, may_overlap
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.state import RepoState
from detente.domain.validation import section_key
from detente.errors import InvalidTransition, ValidationError

OwnersOf = Callable[[Sequence[str]], tuple[list[str], list[str]]]
"""``paths -> (owners, invalid CODEOWNERS lines)`` for choosing arbitrators."""


def _participant(state: RepoState, meeting: Meeting, value: str, fld: str) -> str:
    """``value``, a live participant of ``meeting``.

    Raises:
        InvalidTransition: ``invalid_transition`` (409) when the claim no longer holds
            (taken over, completed, abandoned ...): a resolution names only live claims;
            ``claimId``, ``status`` and ``successorId`` (a takeover's) are in the problem.
        ValidationError: ``validation_error`` naming ``fld`` when it is not a participant.
    """
    claim = state.claims.get(value)
    if claim is not None and not claim.holding:
        successor = f" (its successor is {claim.successor_id})" if claim.successor_id else ""
        raise InvalidTransition(
            claim.status.value,
            "resolution",
            f"{fld} names claim {value}, which is {claim.status.value}{successor}: a "
            "resolution names only live claims",
            field=fld,
            claimId=value,
            successorId=claim.successor_id,
        )
    if value not in meeting.participants:
        raise ValidationError(
            f"{fld} must be a participant of meeting {meeting.id} "
            f"({', '.join(meeting.participants)}), got {value!r}",
            field=fld,
        )
    return value


def validate(state: RepoState, meeting: Meeting, submitted: Resolution) -> Decided:
    """Check a submitted resolution against the meeting and the claims it names.

    Returns:
        The resolution normalised (a split's targets normalised, a joint's ids sorted, a
        handoff's moved ``targets`` derived, not yet accepted) with the claims it
        ``affected``.

    Raises:
        ValidationError: ``validation_error`` with ``field`` = ``resolution.<field>``.
    """
    decided = _validate(state, meeting, submitted)
    if not decided.resolution.escalates:
        target_kinds.settles_everyone(state, meeting, decided)
    return decided


def _validate(state: RepoState, meeting: Meeting, submitted: Resolution) -> Decided:
    match submitted:
        case SplitOwnership():
            return _validate_split(state, meeting, submitted)
        case Serialize(first=first, then=then):
            _participant(state, meeting, first, "resolution.first")
            _participant(state, meeting, then, "resolution.then")
            if first == then:
                raise ValidationError(
                    "serialize needs two different claims", field="resolution.then"
                )
            return Decided(submitted, submitted.affected(meeting.participants))
        case Handoff(from_claim_id=src, to_claim_id=dst):
            _participant(state, meeting, src, "resolution.fromClaimId")
            _participant(state, meeting, dst, "resolution.toClaimId")
            if src == dst:
                raise ValidationError(
                    "handoff needs two different claims", field="resolution.toClaimId"
                )
            if not state.claims[src].granted:
                raise ValidationError(
                    f"claim {src} was never granted: it holds nothing to hand off (hand "
                    f"off from the holder, to {src})",
                    field="resolution.fromClaimId",
                )
            moved = target_kinds.handed_targets(state.claims[src], state.claims[dst])
            if not moved:
                contested = sorted({t.target for t in meeting.contested_targets})
                raise ValidationError(
                    f"a handoff from {src} to {dst} moves nothing: none of {dst}'s "
                    f"targets lies in {src}'s scope (contested: {', '.join(contested)}); "
                    "a contract area or a whole memory file is not handed off: choose "
                    "joint, serialize or a split",
                    field="resolution.toClaimId",
                )
            handoff = Handoff(src, dst, tuple(moved), accepted=False)
            return Decided(handoff, handoff.affected(meeting.participants))
        case Joint(claim_ids=members):
            if len(set(members)) < 2:
                raise ValidationError(
                    "joint needs at least two claimIds", field="resolution.claimIds"
                )
            for i, c in enumerate(members):
                _participant(state, meeting, c, f"resolution.claimIds[{i}]")
            joint = Joint(tuple(sorted(set(members))))
            return Decided(joint, joint.affected(meeting.participants))
        case HumanArbitration():
            return Decided(submitted, submitted.affected(meeting.participants))
        case _:
            assert_never(submitted)


def _validate_split(state: RepoState, meeting: Meeting, split: SplitOwnership) -> Decided:
    if not split.assignments:
        raise ValidationError(
            "split_ownership needs assignments[{claimId, targets[]}]",
            field="resolution.assignments",
        )
    out: list[Assignment] = []
    for i, item in enumerate(split.assignments):
        fld = f"resolution.assignments[{i}]"
        claim_id = _participant(state, meeting, item.claim_id, f"{fld}.claimId")
        claim = state.claims[claim_id]
        normalised = tuple(
            _own_target(state, claim, target, f"{fld}.targets[{j}]")
            for j, target in enumerate(item.targets)
        )
        out.append(Assignment(claim_id, normalised))
    if not any(a.targets for a in out):
        raise ValidationError(
            "a split assigns at least one target (an empty list means: this claim keeps "
            "only what nobody else is assigned)",
            field="resolution.assignments",
        )
    seen = [a.claim_id for a in out]
    if len(set(seen)) != len(seen):
        raise ValidationError(
            "each claim may appear in one assignment", field="resolution.assignments"
        )
    if len(seen) < 2:
        others = [c for c in meeting.participants if c not in seen]
        raise ValidationError(
            "a split names at least two claims: name the other participant too "
            f"({', '.join(others)}), with no targets (CLAIM=) to give it none of the "
            "contested ones",
            field="resolution.assignments",
        )
    for a in range(len(out)):
        for b in range(a + 1, len(out)):
            for ta in out[a].targets:
                for tb in out[b].targets:
                    clash = _targets_meet(ta, tb)
                    if clash is not None:
                        raise ValidationError(
                            f"assigned targets still overlap: {ta!r} ({out[a].claim_id}) and "
                            f"{tb!r} ({out[b].claim_id}) both cover {clash!r}",
                            field="resolution.assignments",
                        )
    resolution = SplitOwnership(tuple(out))
    scopes = split_scopes(state, resolution)
    given = {x.claim_id for x in out if x.targets}
    for i, a_id in enumerate(seen):
        for b_id in seen[i + 1 :]:
            if a_id not in given and b_id not in given:
                continue  # two bystanders: whatever they share, this split did not give
            clash = _scope_clash(state, a_id, scopes[a_id], b_id, scopes[b_id])
            if clash is not None:
                raise ValidationError(
                    f"the split leaves claims {a_id} and {b_id} both covering {clash!r}: "
                    "assign every contested target to one of them (or choose serialize "
                    "or joint)",
                    field="resolution.assignments",
                )
    return Decided(resolution, resolution.affected(meeting.participants))


def _own_target(state: RepoState, claim: Claim, target: str, fld: str) -> str:
    """``target`` normalised, if it lies *inside* what ``claim`` asked for.

    A path target must be covered by the claim's own patterns (minus its carve-outs): a
    target that merely meets them (``**`` against ``bin/**``) would grant territory other
    claims hold. Symbol and module targets are checked by :func:`split_named.asked_for`.

    Raises:
        ValidationError: ``validation_error`` naming ``fld``.
    """
    refusal = (
        f"{fld} {target!r} is not part of what claim {claim.id} asked for "
        "(a split narrows scopes, it never grants new territory)"
    )
    kind = split_named.named_kind(claim, target)
    if kind is not None:
        name = split_named.bare(target)
        if not split_named.asked_for(claim, kind, name):
            raise ValidationError(refusal, field=fld)
        return f"{split_named.MODULE_PREFIX}{name}" if kind == "module" else name
    path, _, section = target.partition("#")
    norm = normalize_pattern(path, case_insensitive=state.case_insensitive, field=fld)
    if not section and norm in claim.paths + claim.pending_paths:
        return norm  # its own pattern, carve-outs and all
    own = claim.paths + claim.pending_paths + tuple(m.path for m in claim.memory_impacts)
    carved = [c for p in claim.paths + claim.pending_paths for c in claim.carved(p)]
    if not is_covered(norm, own) or any(may_overlap(norm, c) for c in carved):
        raise ValidationError(refusal, field=fld)
    return f"{norm}#{section_key(section, fld)}" if section else norm


class Scope(NamedTuple):
    """A claim's scope after a split."""

    paths: list[str]
    memory: list[MemoryImpact]
    carve_outs: dict[str, list[str]]
    """``{pattern: carve-outs}``"""
    modules: list[str]
    symbols: list[str]


def _trim_impact(impact: MemoryImpact, theirs: Sequence[str]) -> MemoryImpact | None:
    """``impact`` minus the ``path#section`` (or plain path) targets in ``theirs``."""
    sections = list(impact.sections)
    for target in theirs:
        path, _, section = target.partition("#")
        if not may_overlap(impact.path, path):
            continue
        if not section or not sections:
            return None  # a whole file on either side cannot be subtracted from
        sections = [s for s in sections if s != section]
        if not sections:
            return None
    return MemoryImpact(path=impact.path, mode=impact.mode, sections=tuple(sections))


def split_scopes(state: RepoState, resolution: SplitOwnership) -> dict[str, Scope]:
    """Each assigned claim's scope after a split: its assigned targets plus all of its
    own scope that no *other* assignment names (a split partitions only the contested
    targets; uncontested scope is kept, with the others' targets carved out of the
    patterns that cover them)."""
    assigned = resolution.assigned()
    out: dict[str, Scope] = {}
    for claim_id, targets in assigned.items():
        claim = state.claims[claim_id]
        theirs = [t for other, ts in assigned.items() if other != claim_id for t in ts]
        their_paths = [t.partition("#")[0] for t in theirs if not _named(t)]
        mine = [t for t in targets if "#" not in t and not _named(t)]
        kept: list[str] = []
        carve_outs: dict[str, list[str]] = {}
        mods, syms = split_named.kept_named(claim, theirs)
        # A module that meets another's target becomes its path patterns, carved like
        # any glob: the module's uncontested files stay this claim's.
        from_modules = [
            q
            for m in claim.modules
            if m not in mods
            for q in modules.module_patterns(m)
            if q not in claim.paths + claim.pending_paths
        ]
        for p in claim.paths + claim.pending_paths + tuple(from_modules):
            if p in mine:
                if claim.carved(p):  # assigned its own pattern: it keeps its carve-outs
                    carve_outs[p] = list(claim.carved(p))
                continue
            own = list(claim.carved(p))
            cuts = [q for q in dict.fromkeys(their_paths) if carved_may_overlap(p, own, q)]
            cuts += split_named.named_cuts(p, own, theirs)
            cuts = list(dict.fromkeys(cuts))
            if cuts and is_covered(p, own + cuts):
                continue  # wholly inside what the others were assigned
            kept.append(p)
            if own + cuts:
                carve_outs[p] = list(dict.fromkeys(own + cuts))
        memory: list[MemoryImpact] = []
        for impact in claim.memory_impacts:
            trimmed = _trim_impact(impact, theirs)
            if trimmed is not None:
                memory.append(trimmed)
        for t in targets:
            if "#" in t:
                path, _, section = t.partition("#")
                impact = MemoryImpact(path=path, mode="section", sections=(section,))
                if impact not in memory:
                    memory.append(impact)
        own_order = [
            p for p in (*claim.paths, *claim.pending_paths, *from_modules) if p in kept or p in mine
        ]
        mods += [split_named.bare(t) for t in targets if t.startswith(split_named.MODULE_PREFIX)]
        syms += [t for t in targets if "::" in t]
        out[claim_id] = Scope(
            paths=list(dict.fromkeys(own_order + mine)),
            memory=memory,
            carve_outs=carve_outs,
            modules=list(dict.fromkeys(mods)),
            symbols=list(dict.fromkeys(syms)),
        )
    return out


def _named(target: str) -> bool:
    return "::" in target or target.startswith(split_named.MODULE_PREFIX)


def _scope_clash(state: RepoState, a: str, sa: Scope, b: str, sb: Scope) -> str | None:
    """A target both scopes would still cover after the split, or None."""
    for pa in sa[0]:
        for pb in sb[0]:
            try:
                witness = intersect_carved(pa, sa[2].get(pa, ()), pb, sb[2].get(pb, ()))
            except Undecided:  # undecided counts as a clash, never as disjoint
                return f"{pa} and {pb} (undecided within the search budget)"
            if witness is not None:
                return witness
    labels_a = [f"{m.path}#{s}" for m in sa[1] for s in (m.sections or ("",))]
    labels_b = [f"{m.path}#{s}" for m in sb[1] for s in (m.sections or ("",))]
    pairs = [(ta, tb) for ta in labels_a for tb in labels_b + sb[0]]
    pairs += [(ta, tb) for ta in sa[0] for tb in labels_b]
    for ta, tb in pairs:
        clash = _targets_meet(ta.rstrip("#"), tb.rstrip("#"))
        if clash is not None:
            return clash
    named = split_named.named_clash(
        (sa.paths, sa.modules, sa.symbols, sa.carve_outs),
        (sb.paths, sb.modules, sb.symbols, sb.carve_outs),
    )
    if named is not None:
        return named
    shared = sorted(set(state.claims[a].contract_areas) & set(state.claims[b].contract_areas))
    return shared[0] if shared else None


def _targets_meet(a: str, b: str) -> str | None:
    pa, _, sa = a.partition("#")
    pb, _, sb = b.partition("#")
    try:
        witness = intersect(pa, pb)
    except Undecided:
        witness = "a path of both (undecided within the search budget)"
    if witness is None or (sa and sb and sa != sb):
        return None
    return f"{witness}#{sa or sb}" if (sa or sb) else witness
