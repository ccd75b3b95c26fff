"""The claims a session works under: :func:`session_claims` and :func:`working_claim`.

Its own module (not :mod:`detente.domain.agents.advisory`): a harness hook asks it before
every edit and needs none of the overlap analysis the advisory views import.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detente.domain.claims.model import Claim
    from detente.domain.state import RepoState

__all__ = ["HARNESSES", "WORKING", "harness_session", "session_claims", "working_claim"]

#: The agent harnesses whose sessions detente names ``<harness>-<their id>``
#: (``detente hook-harness``, :mod:`detente.harness`), in the order ``detente init``
#: sets them up.
HARNESSES = ("claude", "codex", "cursor", "gemini")
#: Claim statuses a session still works under (it holds, or waits for, its targets).
WORKING = frozenset({"active", "negotiating", "blocked", "suspended", "ready_for_review", "draft"})


def session_claims(state: RepoState, session_id: str, principal: str | None = None) -> list[Claim]:
    """Claims of ``session_id`` that still hold their targets, oldest first.

    Args:
        state: the repository's state.
        session_id: the agent session (an unknown one holds nothing).
        principal: only the claims this principal opened (None: every principal's). A
            session id is chosen by its client: another principal naming the same id
            must not see (and work under) claims that are not its own.
    """
    found = [
        c
        for c in state.claims.values()
        if c.agent.session_id == session_id
        and c.holding
        and (principal is None or c.principal == principal)
    ]
    return sorted(found, key=lambda c: (c.created_at, c.id))


def harness_session(session_id: str | None) -> bool:
    """Whether ``session_id`` names a harness session (``<harness>-...``)."""
    return bool(session_id) and str(session_id).startswith(tuple(f"{h}-" for h in HARNESSES))


def working_claim(
    state: RepoState,
    session_id: str | None,
    principal: str | None,
    *,
    here: Callable[[str | None], bool],
    branch: str | None = None,
) -> Claim | None:
    """The claim a session works under in one worktree, or None.

    In order: a claim of ``session_id`` (the acting ``principal``'s only) in this worktree,
    or its only one; else the one live claim (:data:`WORKING`) of ``principal`` whose
    worktree is this one; else its one live claim of ``branch``. Never a claim another
    harness session opened (two sessions in one checkout each work under their own), nor
    another principal's.

    Args:
        state: the repository's state.
        session_id: the session's id (None: unknown).
        principal: the acting principal's name (None: any).
        here: whether a claim's ``worktree`` is the worktree of the edit (the caller
            compares paths; this module does no IO).
        branch: the worktree's checked-out branch, if known.
    """
    if session_id:
        mine = [
            c for c in session_claims(state, session_id, principal) if c.status.value in WORKING
        ]
        at_hand = [c for c in mine if here(c.worktree)]
        if at_hand or len(mine) == 1:
            return (at_hand or mine)[0]
    live = [
        c
        for c in sorted(state.claims.values(), key=lambda c: (c.created_at, c.id))
        if c.status.value in WORKING
        and (principal is None or c.principal == principal)
        and not (harness_session(c.agent.session_id) and c.agent.session_id != session_id)
    ]
    at_hand = [c for c in live if here(c.worktree)]
    if len(at_hand) == 1:
        return at_hand[0]
    if branch:
        on_branch = [c for c in live if c.branch == branch]
        if len(on_branch) == 1:
            return on_branch[0]
    return None
