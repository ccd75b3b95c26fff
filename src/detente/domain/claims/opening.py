"""Opening a claim: validate the seed, grant lease and fencing token, activate or negotiate.

A multi-target claim is atomic: either every target is granted (``active``) or none is
(``negotiating`` in a meeting listing each contested target and its holders once).
Overlap is decided against the projection inside the repository's command transaction,
so two claims racing for one path can never both become ``active``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.claims.commands import OpenClaim
from detente.domain.claims.declared import declared_to_wire, validate_declared
from detente.domain.claims.guards import check_claim_revision, get_claim
from detente.domain.claims.model import ClaimStatus, MemoryImpact, canonical_memory_mode
from detente.domain.claims.transitions import require
from detente.domain.claims.wire import agent_to_wire, contract_to_wire, memory_impact_to_wire
from detente.domain.meetings.decide import blocking_only, meeting_events_for
from detente.domain.overlap.analysis import Targets, find_overlaps
from detente.domain.overlap.paths import normalize_pattern
from detente.domain.policy import DEFAULT_POLICY, OID_PATTERN, IdSource, Policy
from detente.domain.state import RepoState
from detente.domain.validation import (
    contract_list,
    module_list,
    pattern_list,
    section_key,
    symbol_list,
    test_names,
    text_field,
    ttl_field,
)
from detente.errors import BranchInUse, ValidationError


def decide_open(
    state: RepoState, cmd: OpenClaim, now: datetime, ids: IdSource, policy: Policy = DEFAULT_POLICY
) -> list[ev.Event]:
    """Announce a claim, grant its lease and fencing token, and activate or negotiate.

    A multi-target claim is atomic: either every target is granted (``active``) or none is
    (``negotiating`` with a meeting listing each contested target and its holders once).

    Raises:
        ValidationError: ``validation_error`` naming the field.
    """
    claim_id, announced, targets = announce(state, cmd, now, ids, policy)
    if cmd.draft:
        if cmd.advisory:
            raise ValidationError("an advisory lease cannot be a draft", field="draft")
        # A draft is recorded only: no running lease, no worktree, not indexed for
        # overlap (``draft`` is not a holding status) until it is announced.
        announced.data.update(status=ClaimStatus.DRAFT.value, worktree=None)
        return [announced]
    return [announced, *activate_or_negotiate(state, claim_id, targets, now, ids, policy)]


def decide_announce_draft(
    state: RepoState,
    claim_id: str,
    expected_claim_revision: int,
    ttl_seconds: int | None,
    now: datetime,
    ids: IdSource,
    policy: Policy = DEFAULT_POLICY,
) -> list[ev.Event]:
    """``draft -> announced``: the lease starts now (``ttl_seconds``, default the draft's),
    then the claim activates or negotiates like a fresh claim.

    Raises:
        NotFoundError, RevisionConflict, InvalidTransition (not a draft), ValidationError.
    """
    claim = get_claim(state, claim_id)
    check_claim_revision(claim, expected_claim_revision)
    require(claim.status, ClaimStatus.ANNOUNCED, claim_id=claim.id)
    ttl = ttl_field(
        ttl_seconds if ttl_seconds is not None else claim.lease.ttl_seconds,
        "leaseTtlSeconds",
        policy,
    )
    announced = ev.status_event(
        ids,
        claim.id,
        ev.CLAIM_DRAFT_ANNOUNCED,
        to=ClaimStatus.ANNOUNCED.value,
        was=claim.status.value,
        reason="draft announced",
        leaseRevision=claim.lease.revision + 1,
        ttlSeconds=ttl,
        expiresAt=format_time(now + timedelta(seconds=ttl)),
    )
    return [announced, *activate_or_negotiate(state, claim.id, Targets.of(claim), now, ids, policy)]


#: What a memory impact may declare: its sections (``section``) or appends
#: (``append_only``, the design document's spelling; two appending claims never block
#: each other). ``append`` is an alias, recorded as ``append_only``.
MEMORY_MODES = ("section", "append_only")


def memory_impacts(
    state: RepoState, raw: Sequence[MemoryImpact], fld: str
) -> tuple[MemoryImpact, ...]:
    """Validated memory impacts: a normalised path pattern, a known mode and section keys
    by the one rule of :func:`~detente.domain.validation.section_key`.

    Raises:
        ValidationError: ``validation_error`` naming ``fld[i].path``, ``fld[i].mode`` or
            ``fld[i].sections[j]``.
    """
    out: list[MemoryImpact] = []
    for i, m in enumerate(raw):
        path = normalize_pattern(
            m.path, case_insensitive=state.case_insensitive, field=f"{fld}[{i}].path"
        )
        mode = canonical_memory_mode(m.mode)
        if mode not in MEMORY_MODES:
            raise ValidationError(
                f"{fld}[{i}].mode must be one of {', '.join(MEMORY_MODES)}, got {m.mode!r}",
                field=f"{fld}[{i}].mode",
            )
        keys = [section_key(s, f"{fld}[{i}].sections[{j}]") for j, s in enumerate(m.sections)]
        out.append(MemoryImpact(path=path, mode=mode, sections=tuple(dict.fromkeys(keys))))
    return tuple(out)


def announce(
    state: RepoState,
    cmd: OpenClaim,
    now: datetime,
    ids: IdSource,
    policy: Policy,
    extra: dict[str, Any] | None = None,
) -> tuple[str, ev.Event, Targets]:
    """Validate a seed and build its ``claim.announced`` event (lease and fencing token).

    Returns:
        ``(claim id, the event, the normalised targets)``.

    Raises:
        ValidationError: ``validation_error`` naming the field.
    """
    objective = text_field(cmd.objective, "objective", policy)
    base = cmd.base_commit.strip().lower()
    if not OID_PATTERN.match(base):
        raise ValidationError("baseCommit must be a commit object id (hex)", field="baseCommit")
    ttl = ttl_field(cmd.lease_ttl_seconds, "leaseTtlSeconds", policy)
    paths = pattern_list(state, cmd.paths, "paths", policy)
    modules = module_list(cmd.modules, "modules", policy)
    symbols = symbol_list(cmd.symbols, "symbols", policy)
    contracts = contract_list(cmd.expected_contract_changes, "expectedContractChanges", policy)
    tests, test_plan = test_names(cmd.test_responsibility, "testResponsibility", policy)
    memory = memory_impacts(state, cmd.memory_impacts, "memoryImpacts")
    if not (paths or modules or symbols or contracts or memory):
        raise ValidationError(
            "a claim must name at least one target (paths, modules, symbols, "
            "expectedContractChanges or memoryImpacts)",
            field="paths",
        )
    if cmd.claim_id is not None and cmd.claim_id in state.claims:
        raise ValidationError(f"claim id {cmd.claim_id!r} is already used", field="id")
    branch = workspace_branch(cmd.branch)
    worktree = workspace_path(cmd.worktree)
    refuse_taken_workspace(state, branch, worktree)
    text_field(cmd.agent.id, "agent.id", policy, identifier=True)
    text_field(cmd.agent.name, "agent.name", policy, identifier=True)
    declared = validate_declared(cmd.declared, policy)
    if cmd.agent.session_id is not None:
        text_field(cmd.agent.session_id, "agent.sessionId", policy, identifier=True)

    claim_id = cmd.claim_id or ids("clm")
    token = state.claims.last_fencing_token + 1
    announced = ev.Event(
        id=ids("evt"),
        type=ev.CLAIM_ANNOUNCED,
        subject=ev.claim_subject(claim_id),
        data={
            "claimId": claim_id,
            "status": ClaimStatus.ANNOUNCED.value,
            "objective": objective,
            "agent": agent_to_wire(cmd.agent),
            "baseCommit": base,
            "branch": branch,
            "worktree": worktree,
            "paths": list(paths),
            "modules": list(modules),
            "symbols": list(symbols),
            "expectedContractChanges": [contract_to_wire(c) for c in contracts],
            "testResponsibility": test_plan if test_plan is not None else list(tests),
            **declared_to_wire(declared),
            "memoryImpacts": [memory_impact_to_wire(m) for m in memory],
            "lease": {
                "id": ids("lse"),
                "revision": 1,
                "ttlSeconds": ttl,
                "expiresAt": format_time(now + timedelta(seconds=ttl)),
            },
            "fencingToken": token,
            "advisory": cmd.advisory,
            **(extra or {}),
        },
    )
    targets = Targets(
        advisory=cmd.advisory,
        paths=paths,
        modules=modules,
        symbols=symbols,
        contracts=tuple(dict.fromkeys(c.area for c in contracts)),
        memory=memory,
        base_commit=base,
    )
    return claim_id, announced, targets


def activate_or_negotiate(
    state: RepoState,
    claim_id: str,
    targets: Targets,
    now: datetime,
    ids: IdSource,
    policy: Policy,
    *,
    ignore: frozenset[str] = frozenset(),
) -> list[ev.Event]:
    """``claim.activated`` when nothing blocks ``targets`` (claims in ``ignore`` aside),
    else ``claim.negotiating`` in a meeting with the holders."""
    blocking = [
        o
        for o in blocking_only(find_overlaps(state, targets, exclude=claim_id))
        if o.claim_id not in ignore
    ]
    if not blocking:
        activated = ev.status_event(
            ids, claim_id, ev.CLAIM_ACTIVATED, to=ClaimStatus.ACTIVE.value, reason="no overlap"
        )
        return [activated]
    meeting_ids, meeting_events = meeting_events_for(state, claim_id, blocking, now, ids, policy)
    negotiating = ev.status_event(
        ids,
        claim_id,
        ev.CLAIM_NEGOTIATING,
        to=ClaimStatus.NEGOTIATING.value,
        reason="blocking overlap with " + ", ".join(o.claim_id for o in blocking),
        meetingId=meeting_ids[0],
        meetingIds=meeting_ids,
    )
    return [*meeting_events, negotiating]


_BAD_REF = ("..", "@{", "//", "/.", "\\")


def workspace_branch(branch: str | None) -> str | None:
    """A claim's branch as git names it (``refs/heads/`` dropped), or None.

    Raises:
        ValidationError: ``validation_error`` naming ``branch`` for a name git refuses
            (``git check-ref-format`` rules: no space, control character, ``~^:?*[``,
            ``..``, ``@{``, leading or trailing ``/`` or ``.``, ``.lock`` ending).
    """
    if branch is None:
        return None
    name = branch.removeprefix("refs/heads/")
    bad = (
        not name
        or any(ch.isspace() or ord(ch) < 32 or ch in "~^:?*[" for ch in name)
        or any(part in name for part in _BAD_REF)
        or name.startswith(("/", ".", "-"))
        or name.endswith(("/", ".", ".lock"))
        or name == "@"
    )
    if bad:
        raise ValidationError(f"branch {branch!r} is not a valid git branch name", field="branch")
    return name


def workspace_path(worktree: str | None) -> str | None:
    """A claim's worktree directory, absolute and normalised (``a/../b`` is ``b``), or None.

    Raises:
        ValidationError: ``validation_error`` naming ``worktree`` for a relative path.
    """
    if worktree is None:
        return None
    if not posixpath.isabs(worktree) or "\x00" in worktree:
        raise ValidationError(
            f"worktree {worktree!r} must be an absolute directory path", field="worktree"
        )
    return posixpath.normpath(worktree)


def refuse_taken_workspace(state: RepoState, branch: str | None, worktree: str | None) -> None:
    """One live claim per branch and per worktree (both already normalised).

    A claim naming the branch or worktree of a claim that still holds its work would make
    the hooks attribute that claim's commits to the newcomer, and its cleanup would remove
    the other claim's worktree. Read from the fold's workspace lookups (no walk over the
    claims); the claim named is the first live one in the book's order.

    Raises:
        BranchInUse: ``branch_in_use`` naming the claim that uses it.
    """
    lookups = state.claims.lookups
    on_branch = lookups.branches.get(branch, set()) if branch else set()
    in_worktree = lookups.worktrees.get(worktree, set()) if worktree else set()
    users = on_branch | in_worktree
    if not users:
        return
    # One user unless older records broke the rule: name the first in the book's order.
    first = next(iter(users)) if len(users) == 1 else next(c for c in state.claims if c in users)
    other = state.claims[first]
    if first in on_branch:
        raise BranchInUse(
            f"branch {branch!r} belongs to claim {other.id} ({other.status.value}); "
            "a claim works on a branch of its own",
            branch=branch,
            claimId=other.id,
        )
    raise BranchInUse(
        f"worktree {worktree!r} belongs to claim {other.id} ({other.status.value}); "
        "a claim works in a worktree of its own",
        holder=worktree,
        claimId=other.id,
    )
