"""Agent registry and readiness use cases (API.md "Agents and readiness").

These are the advisory primitives behind the MCP tools: a session registers (and
renews) itself with its intent; anyone can list the sessions with their computed
status; readiness says ``ready`` or ``caution`` for a set of paths and never refuses on
overlap grounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from detente.domain.agents.commands import RecordNotices, RegisterAgent
from detente.domain.agents.decide import check_session_id, decide_notices, decide_register
from detente.domain.agents.model import AgentSession, AgentStatus, agent_status, agent_to_wire
from detente.domain.agents.session_claims import session_claims
from detente.domain.claims.model import Claim
from detente.domain.state import RepoState
from detente.errors import NotFoundError, ValidationError
from detente.service.core import ServiceCore

if TYPE_CHECKING:  # the advisory views (overlap analysis) are imported where used
    from detente.domain.agents import advisory as adv
    from detente.domain.agents.notices import Notice

#: Events of the log read at most for a session's notices.
NOTICE_WINDOW = 200


@dataclass(frozen=True)
class SessionNotices:
    """A session's notices: ``session`` (None: never registered), the ``notices`` and
    the log position read up to (``scanned_up_to``)."""

    session: AgentSession | None
    notices: list[Notice]
    scanned_up_to: int

    def to_wire(self) -> dict[str, Any]:
        """``{notices[{seq, type, claimId, meetingId, turn, text}], scannedUpTo,
        receipts {deliveredUpTo, seenUpTo} | null}``."""
        session = self.session
        return {
            "notices": [n.to_wire() for n in self.notices],
            "scannedUpTo": self.scanned_up_to,
            "receipts": (
                {"deliveredUpTo": session.delivered_up_to, "seenUpTo": session.seen_up_to}
                if session is not None
                else None
            ),
        }


@dataclass(frozen=True)
class AgentView:
    """A session with its status at read time and the ids of its claims whose lease runs."""

    session: AgentSession
    status: AgentStatus
    claim_ids: list[str]
    now: datetime

    def to_wire(self) -> dict[str, Any]:
        """``{sessionId, agentName, status, intent, branch, worktree, ..., claimIds}``."""
        return {**agent_to_wire(self.session, self.now), "claimIds": list(self.claim_ids)}


class AgentsService:
    """The advisory registry of agent sessions, and readiness checks."""

    def __init__(self, core: ServiceCore) -> None:
        self.core = core

    def _agent_view(self, state: RepoState, session: AgentSession) -> AgentView:
        now = self.core.clock.now()
        # Claims whose lease runs; an expired claim is frozen, not the session's live work.
        claims = [c.id for c in session_claims(state, session.session_id) if c.leased]
        return AgentView(session, agent_status(session, now), claims, now)

    def _session_repo(self, session_id: str) -> str | None:
        """The repository ``session_id`` is registered in, if any."""
        return self.core.find_repo(lambda state: session_id in state.agents)

    def resolve_repo(self, repo: str | None, session_id: str | None = None) -> str:
        """The repository a request is about.

        Args:
            repo: the name the client gave, or None.
            session_id: the session the request is for, if any.

        Returns:
            ``repo`` when given; else the repository ``session_id`` is registered in; else
            the only repository served.

        Raises:
            ValidationError: ``validation_error`` (field ``repo``) for an unknown name, or
                when the server coordinates several repositories and none can be inferred.
        """
        if repo:
            return self.core.repo(repo).name
        if session_id:
            found = self._session_repo(session_id)
            if found is not None:
                return found
        if len(self.core.repos) == 1:
            return next(iter(self.core.repos))
        known = ", ".join(sorted(self.core.repos))
        raise ValidationError(
            f"this server coordinates several repositories ({known}): name one in repo",
            field="repo",
        )

    def register_agent(self, cmd: RegisterAgent) -> AgentView:
        """Register a session, or renew it (``expiresAt = now + ttlSeconds``).

        Args:
            cmd: the registration; ``cmd.repo`` may be empty when one repository is served
                or the session is already registered.

        Returns:
            The session, ``active``.

        Raises:
            ValidationError: a bad field (``field`` names it), an unknown repository, or a
                session id already registered in another repository.
        """
        check_session_id(cmd.session_id)
        repo = self.resolve_repo(cmd.repo or None, cmd.session_id)
        elsewhere = self._session_repo(cmd.session_id)
        if elsewhere is not None and elsewhere != repo:
            raise ValidationError(
                f"session {cmd.session_id!r} is registered in repository {elsewhere!r}; "
                "use another session id for this repository",
                field="sessionId",
            )
        seeded = replace(cmd, repo=repo)
        return self.core.run(  # group-committed; the view is built inside the batch
            repo,
            lambda s: decide_register(
                s, seeded, self.core.clock.now(), self.core.ids, self.core.policy
            ),
            lambda state, _: self._agent_view(state, state.agents[cmd.session_id]),
        )

    def get_agent(self, session_id: str) -> AgentView:
        """One session with its status now. Raises ``not_found``."""
        for name in sorted(self.core.repos):
            state = self.core.fresh(name)
            with self.core.lock(name):
                session = state.agents.get(session_id)
                if session is not None:
                    return self._agent_view(state, session)
        raise NotFoundError(f"no agent session {session_id!r}", sessionId=session_id)

    def list_agents(self, *, repo: str | None = None, status: str | None = None) -> list[AgentView]:
        """Sessions (optionally of one repository and one status), oldest registration first.

        Raises:
            ValidationError: unknown repository, or ``status`` not ``active``/``departed``.
        """
        if status is not None and status not in ("active", "departed"):
            raise ValidationError(f"unknown agent status {status!r}", field="status")
        out: list[AgentView] = []
        for name in self.core.names(repo):
            state = self.core.fresh(name)
            with self.core.lock(name):
                views = [self._agent_view(state, s) for s in state.agents.values()]
            out.extend(v for v in views if status is None or v.status == status)
        return sorted(out, key=lambda v: (v.session.registered_at, v.session.session_id))

    def session_claims(
        self, session_id: str, *, repo: str | None = None, principal: str | None = None
    ) -> list[Claim]:
        """The claims of ``session_id`` that still hold their targets, oldest first.

        Args:
            session_id: the session (an unknown one holds nothing).
            repo: the repository; inferred from the session or the only one served.
            principal: only this principal's claims (None: every principal's; the
                operation passes the acting principal's name).

        Raises:
            ValidationError: ``validation_error`` naming ``repo``.
        """
        name = self.resolve_repo(repo, session_id)
        state = self.core.fresh(name)
        with self.core.lock(name):
            return session_claims(state, session_id, principal)

    def notices(
        self, session_id: str, *, repo: str | None = None, principal: str | None = None
    ) -> SessionNotices:
        """What woke the session since its notices were last delivered
        (:func:`~detente.domain.agents.notices.session_notices`), with its receipts.

        Reads at most :data:`NOTICE_WINDOW` events of the log, the newest after the
        session's ``delivered_up_to``: an older wake-up the session never fetched is
        superseded by the state its claims are in now.

        Args:
            session_id: the session (unknown: no notices, no receipts).
            repo: the repository; inferred from the session or the only one served.
            principal: only this principal's claims of the session (None: every one's).

        Raises:
            ValidationError: ``validation_error`` naming ``sessionId`` (not a session id)
                or ``repo``.
        """
        from detente.domain.agents.decide import check_session_id
        from detente.domain.agents.notices import session_notices

        check_session_id(session_id)
        name = self.resolve_repo(repo, session_id)
        state = self.core.fresh(name)
        with self.core.lock(name):
            session = state.agents.get(session_id)
            mine = [c.id for c in session_claims(state, session_id, principal)]
            head = state.last_seq
        if session is None or head <= session.delivered_up_to:
            return SessionNotices(session, [], session.delivered_up_to if session else 0)
        since = max(session.delivered_up_to, head - NOTICE_WINDOW)
        batch, scanned = self.core.events(since=since, limit=NOTICE_WINDOW, repo=name)
        with self.core.lock(name):
            found = session_notices(
                state, mine, ((e.seq, e.type, e.data) for e in batch), session_id
            )
        return SessionNotices(session, found, scanned)

    def record_notices(self, cmd: RecordNotices) -> AgentView:
        """Record a receipt of the session's notices (``delivered`` or ``seen`` up to a
        position of the log); an older or repeated receipt records nothing.

        Raises:
            NotFoundError: ``not_found``: the session was never registered.
            ValidationError: ``validation_error`` naming ``receipt`` or ``upTo``.
        """
        name = self.resolve_repo(None, cmd.session_id)
        return self.core.run(
            name,
            lambda s: decide_notices(s, cmd, self.core.ids),
            lambda state, _: self._agent_view(state, state.agents[cmd.session_id]),
        )

    def readiness(
        self, session_id: str, paths: Sequence[str], *, repo: str | None = None
    ) -> adv.Readiness:
        """``ready``, or ``caution`` with every other session's claim covering the paths.

        Args:
            session_id: the asking session (registered or not).
            paths: repo-relative paths or globs, at least one.
            repo: the repository; inferred from the session or the only one served.

        Returns:
            The assessment (expired leases are released first); never refuses on overlap.

        Raises:
            ValidationError: ``validation_error`` naming ``sessionId``, ``paths[i]`` or
                ``repo``.
        """
        check_session_id(session_id)
        name = self.resolve_repo(repo, session_id)
        state = self.core.fresh(name)
        with self.core.lock(name):
            from detente.domain.agents import advisory

            return advisory.assess_readiness(state, session_id, paths, self.core.policy)
