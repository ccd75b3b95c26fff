"""What every tool shares: the client, the activity log, and the one way a call runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp.types import CallToolResult

from detente.client import Client
from detente.clock import Clock
from detente.domain.agents.decide import check_session_id
from detente.errors import DetenteError, NotFoundError, ValidationError
from detente.mcp_server.activity import Activity
from detente.mcp_server.results import failure, success
from detente.operations import wire

__all__ = ["ToolContext"]


@dataclass
class ToolContext:
    """The tools' shared dependencies.

    Attributes:
        client: where calls go (a service in-process, or a server over HTTP).
        clock: timestamps of the activity log (the service's clock in-process).
        activity: recent calls per session (``detente://activity/current``).
    """

    client: Client
    clock: Clock
    activity: Activity = field(default_factory=Activity)
    _case_insensitive: dict[str, bool] = field(default_factory=dict)

    def run(
        self,
        tool: str,
        session_id: str | None,
        scope: Sequence[str],
        call: Callable[[], Mapping[str, Any]],
    ) -> CallToolResult:
        """Run one tool body: a result, or a tool error carrying the detente ``code``.

        The call is recorded in the activity log under ``session_id`` (or the
        ``sessionId`` of its result) with outcome ``ok``, ``caution`` or the error code.
        Exceptions other than :class:`DetenteError` propagate (the SDK reports them as
        an unexpected tool error).
        """
        try:
            data = call()
        except DetenteError as exc:
            self._record(session_id, tool, scope, exc.code)
            return failure(exc)
        outcome = "caution" if data.get("readiness") == "caution" else "ok"
        self._record(session_id or data.get("sessionId"), tool, scope, outcome)
        return success(data)

    def _record(self, session_id: object, tool: str, scope: Sequence[str], outcome: str) -> None:
        if isinstance(session_id, str) and session_id:
            self.activity.record(session_id, tool, scope, outcome, self.clock.now())

    # ------------------------------------------------------------------ lookups

    def agents(self, repo: str | None = None) -> list[wire.AgentSession]:
        """Registered sessions (API records, with ``status`` and ``claimIds``)."""
        return self.client.list_agents(repo=repo)["agents"]

    def session(self, session_id: str) -> wire.AgentSession | None:
        """The registry record of ``session_id``, or None when it never registered."""
        for agent in self.agents():
            if agent.get("sessionId") == session_id:
                return agent
        return None

    def known_session(
        self, session_id: str, *, active: bool, field: str = "session_id"
    ) -> wire.AgentSession:
        """The registry record of ``session_id``, which must have registered.

        A session id is how the other agents, ``release_files`` and the activity log find
        an agent's claims: a mistyped or stale one would file work under a ghost session
        nobody can see or release.

        Args:
            session_id: the id the agent passed.
            active: also refuse a session that has ended (departed: no heartbeat before its
                deadline); for the tools that take new targets under it.
            field: the argument named in errors.

        Raises:
            ValidationError: ``validation_error`` naming ``field``: not a session id.
            NotFoundError: ``not_found`` naming ``field``, with the next step.
        """
        check_session_id(session_id, field)
        found = self.session(session_id)
        renew = (
            f"call register_agent_work with session_id={session_id!r} to renew it, then "
            "call this tool again"
        )
        if found is None:
            raise NotFoundError(
                f"no registered session {session_id!r}: session ids come from register_agent_work",
                field=field,
                sessionId=session_id,
                next="call register_agent_work (agent_name, intent) and pass the sessionId "
                "it returns as session_id",
            )
        if active and found.get("status") != "active":
            raise NotFoundError(
                f"session {session_id!r} has ended (no heartbeat before its deadline "
                f"{found.get('expiresAt')})",
                field=field,
                sessionId=session_id,
                next=renew,
            )
        return found

    def repo_for(self, session_id: str | None, repo: str | None = None) -> str:
        """The repository a call is about: ``repo``, the default, or the session's.

        Raises:
            ValidationError: ``validation_error`` (field ``repo``) when none can be told.
        """
        if repo:
            return repo
        if self.client.repo_name:
            return self.client.repo_name
        found = self.session(session_id) if session_id else None
        if found is not None and found.get("repo"):
            return str(found["repo"])
        raise ValidationError(
            "this detente server coordinates several repositories: pass repo "
            "(or register_agent_work with repo first)",
            field="repo",
        )

    def case_insensitive(self, repo: str) -> bool:
        """Whether ``repo`` compares paths case-folded (cached after the first lookup)."""
        if repo not in self._case_insensitive:
            for served in self.client.repos()["repos"]:
                self._case_insensitive[str(served["name"])] = bool(served.get("caseInsensitive"))
        return self._case_insensitive.get(repo, False)
