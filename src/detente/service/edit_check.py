"""The whole judgement of an edit, read-only: which claim the session works under, may
it write these files now, and if not, who holds them, where to talk, what to run.

A harness hook asks it before every edit (``POST /v1/hooks/edit-check``,
:mod:`detente.operations.gates`), so one request answers what took five: the session's
claim (:func:`~detente.domain.agents.session_claims.working_claim`), the one authority
rule (:func:`~detente.service.commit_check.check_commit`, the pre-commit check), the
holders' records (objective, agent, lease), the open meeting rooms the session's claim
shares with them, and the ready-to-run options. Nothing is written; the policy for
files no claim holds (``[harness] unclaimed``) stays the caller's, which gets them in
``unclaimed``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from detente.domain.agents.session_claims import working_claim
from detente.domain.claims.model import Claim
from detente.domain.named_authority import Edit
from detente.domain.overlap.paths import normalize_path
from detente.errors import ValidationError
from detente.service.commit_check import CommitCheck, check_commit
from detente.service.core import ServiceCore
from detente.service.repo_index import symbols_matter

__all__ = ["EditJudgement", "EditQuery", "check_edit", "edit_options"]

#: Holders named in full in an answer (the rest are in ``check.findings``).
MAX_HOLDERS = 4


@dataclass(frozen=True)
class EditQuery:
    """What an edit-check asks.

    Attributes:
        repo: the repository's name.
        paths: the repo-relative files the edit writes (at least one).
        session_id: the agent session editing (None: unknown).
        claim_id: the claim to judge under (wins over the session's).
        worktree: the worktree the edit happens in (its top directory).
        branch: that worktree's checked-out branch.
        edits: what the edit does to the symbols of each file (``path -> (innermost
            symbols touched, lines outside every symbol)``); a file missing from it is
            judged whole (stricter, never looser).
    """

    repo: str
    paths: tuple[str, ...]
    session_id: str | None = None
    claim_id: str | None = None
    worktree: str | None = None
    branch: str | None = None
    edits: Mapping[str, Edit] = field(default_factory=dict)


@dataclass(frozen=True)
class EditJudgement:
    """The answer (see :meth:`to_wire`)."""

    claim: Claim | None
    check: CommitCheck
    holders: list[Claim]
    rooms: list[str]
    unclaimed: list[str]
    symbols_matter: bool
    options: list[dict[str, str | None]]

    @property
    def denied(self) -> bool:
        """Held by another live claim, or the session's claim may not write now."""
        return bool(self.check.problems) or any(f.kind == "held" for f in self.check.findings)

    def to_wire(self) -> dict[str, Any]:
        """``{decision: allow|deny, claim, check {ok, claimId, problems[], findings[],
        reasons[]}, holders[], rooms[], unclaimed[], symbolsMatter, options[{action,
        command}]}``."""
        from detente.domain.claims.record import claim_to_wire

        return {
            "decision": "deny" if self.denied else "allow",
            "claim": claim_to_wire(self.claim) if self.claim is not None else None,
            "check": self.check.to_wire(),
            "holders": [claim_to_wire(c) for c in self.holders],
            "rooms": list(self.rooms),
            "unclaimed": list(self.unclaimed),
            "symbolsMatter": self.symbols_matter,
            "options": [dict(o) for o in self.options],
        }


def _same_place(worktree: str | None) -> Any:
    if not worktree:
        return lambda _: False
    try:
        mine = Path(worktree).resolve()
    except (OSError, ValueError):
        return lambda _: False

    def here(other: str | None) -> bool:
        if not other:
            return False
        try:
            return Path(other).resolve() == mine
        except (OSError, ValueError):
            return False

    return here


def check_edit(core: ServiceCore, query: EditQuery, principal: str | None) -> EditJudgement:
    """Judge one edit (see the module docstring).

    Args:
        core: the service's core.
        query: the question.
        principal: the acting principal's name: a session's claims are its own only.

    Returns:
        The :class:`EditJudgement`.

    Raises:
        ValidationError: ``validation_error``: an unknown repository, no path or a
            malformed one (``paths[i]``).
        NotFoundError: ``not_found``: an unknown ``claim_id``.
    """
    if not query.paths:
        raise ValidationError("at least one path is required", field="paths")
    name = core.repo(query.repo).name
    state = core.fresh(name)
    here = _same_place(query.worktree)
    with core.lock(name):
        if query.claim_id is None:
            mine = working_claim(state, query.session_id, principal, here=here, branch=query.branch)
        else:
            mine = state.claims.get(query.claim_id)
        norm = [
            normalize_path(p, case_insensitive=state.case_insensitive, field=f"paths[{i}]")
            for i, p in enumerate(query.paths)
        ]
        matter = symbols_matter(state, mine, norm, staged=True)
    check = check_commit(
        core,
        name,
        mine.id if mine is not None else query.claim_id,
        list(query.paths),
        edits=dict(query.edits),
    )
    held = list(dict.fromkeys(f.claim_id for f in check.findings if f.kind == "held"))
    with core.lock(name):
        holders = [state.claims[h] for h in held[:MAX_HOLDERS] if h and h in state.claims]
        rooms = _shared_rooms(state, mine, [h for h in held if h])
    unclaimed = (
        [f.path for f in check.findings if f.kind == "outside"] if mine is not None else norm
    )
    refused = [f.path for f in check.findings if f.kind == "held"] or norm
    options = edit_options(mine, holders, rooms, refused, unclaimed, bool(check.problems))
    return EditJudgement(mine, check, holders, rooms, unclaimed, matter, options)


def _shared_rooms(state: Any, mine: Claim | None, holders: Sequence[str]) -> list[str]:
    """The open meetings both ``mine`` and one of ``holders`` sit in, oldest first."""
    if mine is None or not holders or not state.has_meetings():
        return []
    from detente.domain.meetings.model import MeetingStatus

    out = []
    for room in state.meetings.rooms_of_claim.get(mine.id, []):
        meeting = state.meetings.get(room)
        if (
            meeting is not None
            and meeting.status is MeetingStatus.OPEN
            and set(meeting.participants).intersection(holders)
        ):
            out.append(room)
    return list(dict.fromkeys(out))


def edit_options(
    mine: Claim | None,
    holders: Sequence[Claim],
    rooms: Sequence[str],
    refused: Sequence[str],
    unclaimed: Sequence[str],
    problems: bool,
) -> list[dict[str, str | None]]:
    """The ready-to-run next steps, ``[{action, command}]`` (``command`` None where
    there is nothing to run; paths are quoted for a POSIX shell): ``settle`` (the
    session's own claim may not write), ``wait`` (for the first holder), ``split`` /
    ``handoff`` (in the shared room), ``claim`` (scope add, or open a claim: opens a
    room with a holder), ``elsewhere``."""
    out: list[dict[str, str | None]] = []
    if problems and mine is not None and not holders:
        out.append({"action": "settle", "command": f"detente claim status {mine.id}"})
        return out
    if holders:
        first = holders[0].id
        out.append({"action": "wait", "command": f"detente claim status {first}"})
        target = ",".join(refused[:4])
        if mine is not None and rooms:
            room = rooms[0]
            out.append(
                {
                    "action": "split",
                    "command": f"detente meeting propose {room} --as {mine.id} "
                    f"--split {shlex.quote(f'{mine.id}={target}')}",
                }
            )
            out.append(
                {
                    "action": "handoff",
                    "command": f"detente meeting propose {room} --as {mine.id} --handoff "
                    f"--from {first} --to {mine.id}",
                }
            )
        else:
            out.append({"action": "claim", "command": _claim_command(mine, refused[0])})
        out.append({"action": "elsewhere", "command": None})
    elif unclaimed:
        out.append({"action": "claim", "command": _claim_command(mine, unclaimed[0])})
    return out


def _claim_command(mine: Claim | None, path: str) -> str:
    if mine is not None:
        return f"detente claim scope add {mine.id} -p {shlex.quote(path)}"
    return f'detente claim open -o "..." -p {shlex.quote(path)}'
