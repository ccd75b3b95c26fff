"""The claims a session works under: :func:`session_claims`.

Its own module (not :mod:`detente.domain.agents.advisory`): a harness hook asks it before
every edit and needs none of the overlap analysis the advisory views import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detente.domain.claims.model import Claim
    from detente.domain.state import RepoState

__all__ = ["session_claims"]


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
