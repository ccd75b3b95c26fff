"""A write question: may claim C write these targets now? (``claim check``, MCP
``claim_check``, ``POST /v1/claims/{id}/writes/check``).

The answer is the rule of :mod:`detente.domain.authority` (its ``writable``), the one
the ``pre-commit`` guard, the ``pre-receive`` check and completion evidence apply, asked
about a change that may not exist yet:

* a target may be a file or one symbol of it (``path::Qualified.name``): a symbol is
  judged as a change to that symbol alone (inside the claim's symbol, module or path;
  refused by a claim holding that symbol, its class, a method of it, or the whole file);
* a file with a known change (the claim's worktree diff) is judged on that change, as the
  guard will judge it;
* a file the claim holds only through symbols, with no change known, is answered as a
  change inside those symbols, and the answer says so (:attr:`WriteAnswer.limits`): the
  guard lets such a change through, and another claim's different function of the same
  file does not refuse it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from detente.domain.authority import check_writer_status, owns, writable
from detente.domain.claims.guards import check_alive, check_fencing, get_claim
from detente.domain.claims.model import Claim
from detente.domain.named_authority import Edit
from detente.domain.overlap.globs import matches
from detente.domain.overlap.paths import normalize_path
from detente.domain.overlap.symbols import SEPARATOR, split_symbol, stray_edits
from detente.domain.state import RepoState
from detente.errors import OutOfScope, OverlapBlocking, ValidationError

__all__ = ["WriteAnswer", "asked_edit", "check_targets", "split_target"]


@dataclass(frozen=True)
class WriteAnswer:
    """What :func:`check_targets` allows.

    Attributes:
        targets: the normalised targets, all allowed (files, and ``path::Symbol``).
        limits: ``file -> symbols`` for each file target the claim holds only through
            symbols: the write is allowed inside those symbols, nothing else of the file.
    """

    targets: list[str]
    limits: dict[str, tuple[str, ...]] = field(default_factory=dict)


def split_target(state: RepoState, target: str, field_name: str) -> tuple[str, str | None]:
    """``"a.py::C.m"`` -> ``("a.py", "a.py::C.m")``; a file path -> ``(path, None)``.

    The path part is normalised like any written path.

    Raises:
        ValidationError: ``validation_error`` naming ``field_name`` (a bad path, or a
            ``path::`` with no symbol name).
    """
    path, qualname = split_symbol(target) if SEPARATOR in target else (target, "")
    norm = normalize_path(path or "", case_insensitive=state.case_insensitive, field=field_name)
    if SEPARATOR not in target:
        return norm, None
    if not qualname:
        raise ValidationError(
            f"{field_name}: {target!r} names no symbol after '{SEPARATOR}' "
            "(give path::Qualified.name, or the file alone)",
            field=field_name,
        )
    return norm, f"{norm}{SEPARATOR}{qualname}"


def asked_edit(
    claim: Claim, path: str, symbol: str | None, known: Edit | None
) -> tuple[Edit | None, tuple[str, ...]]:
    """The change a write question about ``path`` stands for, and the symbols it is
    limited to.

    ``symbol`` given: a change to that symbol alone. Else the change known from the
    claim's worktree (``known``), as the ``pre-commit`` guard will judge it. Else, when
    ``claim`` holds ``path`` only through symbols (no path pattern, no module covers
    it), a change inside those symbols (returned as the limit); else the whole file.
    """
    if symbol is not None:
        return ((symbol,), False), ()
    if known is not None:
        return known, ()
    if owns(claim, path):
        return None, ()
    mine = tuple(s for s in claim.symbols if split_symbol(s)[0] == path)
    if not mine:
        return None, ()
    return (mine, False), mine


def check_targets(
    state: RepoState,
    claim_id: str,
    targets: Sequence[str],
    now: datetime,
    fencing_token: int | None = None,
    edits: Mapping[str, Edit] | None = None,
) -> WriteAnswer:
    """Authorize ``claim_id`` to write ``targets``: concrete files, or one symbol of a
    file each (``path::Qualified.name``), judged by :func:`asked_edit` and
    :func:`writable`.

    Order: fencing (a taken-over claim is fenced off before anything else), liveness,
    the writer's status, then each target. ``edits``: what the claim's change does to
    the symbols of each file, when known (see :mod:`detente.domain.named_authority`).

    Returns:
        The normalised targets, with the symbols a file write is limited to.

    Raises:
        NotFoundError, StaleFencingToken (taken over, or an older token; ``expected`` and
        ``actual``), LeaseExpired, InvalidTransition, OverlapBlocking (``blockers`` lists
        ``{path, claimId, agent}``, ``path`` the target as asked, normalised), OutOfScope
        (``paths`` lists them), ValidationError.
    """
    claim = get_claim(state, claim_id)
    check_fencing(state, claim, fencing_token)
    check_alive(claim, now)
    check_writer_status(claim, state)
    split = [split_target(state, t, f"paths[{i}]") for i, t in enumerate(targets)]
    blockers: list[dict[str, str]] = []
    outside: list[tuple[str, str]] = []
    limits: dict[str, tuple[str, ...]] = {}
    for path, symbol in dict.fromkeys(split):
        target = symbol or path
        edit, limit = asked_edit(claim, path, symbol, (edits or {}).get(path))
        refusing, out = writable(state, claim, path, edit)
        blockers += [{"path": target, "claimId": o.id, "agent": o.agent.name} for o in refusing]
        if out:
            outside.append((target, path))
        elif limit and not refusing:
            limits[target] = limit
    if blockers:
        names = "; ".join(f"{b['path']} is held by {b['claimId']} ({b['agent']})" for b in blockers)
        raise OverlapBlocking(f"refused: {names}", claimId=claim.id, blockers=blockers)
    pending = [t for t, p in outside if any(matches(q, p) for q in claim.pending_paths)]
    if pending:
        raise OverlapBlocking(
            f"claim {claim.id}'s scope change adding {', '.join(pending)} is still being "
            "negotiated: those writes wait for the meeting's resolution",
            claimId=claim.id,
            paths=pending,
            meetingIds=list(claim.meeting_ids),
        )
    if outside:
        raise OutOfScope(
            f"outside claim {claim.id}'s targets: {', '.join(t for t, _ in outside)} "
            f"{_outside_hint(claim, [p for _, p in outside], edits or {})}",
            claimId=claim.id,
            paths=[t for t, _ in outside],
        )
    return WriteAnswer([symbol or path for path, symbol in dict.fromkeys(split)], limits)


def _outside_hint(claim: Claim, paths: Sequence[str], edits: Mapping[str, Edit]) -> str:
    """Why a refused target is outside: the worktree's changes outside the claim's
    symbols of a file it holds symbols in, else "add them with a scope change"."""
    strays: list[str] = []
    for path in dict.fromkeys(paths):
        edit = edits.get(path)
        if edit is None:
            continue
        stray = stray_edits(claim.symbols, path, *edit)
        if stray:
            strays.append(f"{path} changes {', '.join(stray)} outside the claim's symbols")
    if strays:
        return "(" + "; ".join(strays) + ")"
    return "(add them with a scope change)"
