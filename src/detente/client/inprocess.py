"""The in-process transport of the client: :class:`InProcessClient`.

It hands each operation, with its path and query values and its camelCase body, to the
application layer (:class:`~detente.operations.door.Operations`), which validates the
body with the model the HTTP edge uses, authorizes, limits and calls the service. No
ASGI app, no JSON encoding: records go straight to their wire dicts (copied with JSON's
types by :func:`plain`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from datetime import date, datetime
from enum import Enum
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from detente.client.base import Call, Follow, Wire
from detente.client.protocol import Client
from detente.client.sse import SseMessage
from detente.operations.door import Operations

if TYPE_CHECKING:
    from detente.operations import wire
    from detente.service import Service

__all__ = ["InProcessClient", "plain"]


#: Values :func:`plain` keeps as they are (exact types: an enum member of ``str`` is not one).
_LEAVES = frozenset({str, int, float, bool, type(None)})
_SEQUENCES = (list, tuple, set, frozenset)


def plain(value: Any) -> Any:
    """A private copy of a wire value with JSON's types (tuples and sets as lists, enums
    by value, times in ISO 8601, paths as strings), as an HTTP response would decode:
    the caller may keep or change it without touching the service's records.

    The exact types of decoded JSON go first (a page of 100 claims: 1.6 ms instead of
    16 ms when every value went through the ``isinstance`` chain)."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is dict:
        return {
            k if type(k) is str else str(k): v if type(v) in _LEAVES else plain(v)
            for k, v in value.items()
        }
    if kind is list:
        return [v if type(v) in _LEAVES else plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, _SEQUENCES):
        return [plain(v) for v in value]
    if isinstance(value, Enum):
        return plain(value.value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    return value


class InProcessClient(Client):
    """The client of a service in this process: every call goes through the application
    layer (:class:`~detente.operations.door.Operations`), as ``/v1``'s do.

    Args:
        service: the use cases (its store stays open unless ``owns_store``).
        repo_name: the current repository's name; None means the only one served, if one.
        repo_path: top level of the current repository's working tree, if any.
        owns_store: close the service's store in :meth:`close`.
        operations: the application layer to call; default one over ``service`` (no
            rate limiter; the principal bound by the caller, ``local`` when none is). A
            served app gives the instance ``/v1`` calls (the same rules and limiter for
            MCP over HTTP); a local process one that asks
            :func:`~detente.operations.local_principal.local_principal` before writes.
    """

    def __init__(
        self,
        service: Service,
        *,
        repo_name: str | None = None,
        repo_path: Path | None = None,
        owns_store: bool = False,
        operations: Operations | None = None,
    ) -> None:
        self.operations = operations if operations is not None else Operations(service)
        if repo_name is None:
            names = [r.name for r in service.list_repos()]
            repo_name = names[0] if len(names) == 1 else None
        super().__init__(
            mode="local",
            repo_name=repo_name,
            repo_path=repo_path,
            on_close=self.operations.close_store if owns_store else None,
        )
        self.clock = service.clock

    @property
    def url(self) -> str:
        """A placeholder: nothing travels over a network."""
        return "inprocess://detente"

    def _send(self, call: Call) -> Wire:
        answer = self.operations.call(
            call.route, path=call.path, params=call.params, body=call.body
        )
        result: Wire = plain(answer)
        return result

    def open_typed_claim(self, seed: Mapping[str, Any]) -> wire.ClaimView:
        """``POST /v1/claims`` for a seed this process built from typed values (the CLI's
        options, :func:`detente.cli.workspace.claim_body`; no ``takeoverOf``): the
        operation's principal, rule and limit and the same decision as
        :meth:`open_claim`, without the request model (pydantic costs a command-line
        process about 0.15 s). Its text is checked as the model checks it
        (:func:`~detente.operations.unicode_text.refuse_surrogates`); the decision checks
        every value.

        Raises:
            ValidationError: a lone surrogate, or a field no seed has.
            ForbiddenError / RateLimited / DetenteError: as :meth:`open_claim`.
        """
        from detente.operations.claim_command import open_command
        from detente.operations.claims import OPEN_CLAIM, open_claim_command
        from detente.operations.unicode_text import refuse_surrogates

        refuse_surrogates(seed)
        command = open_command(seed)
        answer = self.operations.run(OPEN_CLAIM, open_claim_command, command)
        view: wire.ClaimView = plain(answer)
        return view

    def check_commit_typed(
        self,
        repo: str,
        claim_id: str | None,
        paths: list[str],
        *,
        edits: list[Mapping[str, Any]] | None = None,
    ) -> wire.CommitCheck:
        """``POST /v1/hooks/pre-commit`` for values this process built (the harness
        hooks, :mod:`detente.harness.judge`): the operation's principal and rule and the
        same check as :meth:`pre_commit`, without the request model (pydantic costs a
        hook process about 0.1 s). Text is checked as the model checks it; the check
        validates every path.

        Raises:
            ValidationError: a lone surrogate, no path, or a malformed path.
            ForbiddenError / DetenteError: as :meth:`pre_commit`.
        """
        from detente.errors import ValidationError
        from detente.operations.gates import PRE_COMMIT, pre_commit_paths
        from detente.operations.unicode_text import refuse_surrogates

        refuse_surrogates({"repo": repo, "claimId": claim_id, "paths": paths, "edits": edits})
        if not paths or not repo:
            raise ValidationError("repo and at least one path are required", field="paths")
        mapped = (
            {str(e["path"]): (tuple(e["symbols"]), bool(e["outside"])) for e in edits}
            if edits is not None
            else None
        )
        answer = self.operations.run(PRE_COMMIT, pre_commit_paths, repo, claim_id, paths, mapped)
        check: wire.CommitCheck = plain(answer)
        return check

    def register_agent_typed(self, body: Mapping[str, Any]) -> wire.AgentOut:
        """``POST /v1/agents`` for a body this process built (the harness hooks' session
        registration and heartbeat): the operation's principal, rule and limit and the
        same decision as :meth:`register_agent`, without the request model. Text is
        checked as the model checks it; the decision checks every field.

        Raises:
            ValidationError: a lone surrogate, a field no registration has, a value of
                the wrong type, or what the decision refuses.
            ForbiddenError / RateLimited: as :meth:`register_agent`.
        """
        from detente.domain.agents.commands import RegisterAgent
        from detente.errors import ValidationError
        from detente.operations.agents import REGISTER_AGENT, register_agent_command
        from detente.operations.unicode_text import refuse_surrogates

        refuse_surrogates(body)
        texts = ("sessionId", "agentName", "intent", "branch", "worktree", "repo")
        unknown = set(body) - {*texts, "ttlSeconds"}
        if unknown:
            raise ValidationError(f"unknown field {sorted(unknown)[0]!r}", field=sorted(unknown)[0])
        for key in texts:
            value = body.get(key)
            if value is not None and not isinstance(value, str):
                raise ValidationError(f"{key} must be a string", field=key)
        ttl = body.get("ttlSeconds", 900)
        if type(ttl) is not int:
            raise ValidationError("ttlSeconds must be an integer", field="ttlSeconds")
        command = RegisterAgent(
            repo=body.get("repo") or "",
            session_id=body.get("sessionId") or "",
            agent_name=body.get("agentName") or "",
            ttl_seconds=ttl,
            intent=body.get("intent") or "",
            branch=body.get("branch"),
            worktree=body.get("worktree"),
        )
        answer = self.operations.run(REGISTER_AGENT, register_agent_command, command)
        out: wire.AgentOut = plain(answer)
        return out

    def record_notices_typed(self, session_id: str, receipt: str, up_to: int) -> wire.AgentOut:
        """:meth:`record_notices` from typed values (the harness hooks): the operation's
        principal and rule and the same decision, without the request model.

        Raises:
            ValidationError / NotFoundError / ForbiddenError: as :meth:`record_notices`.
        """
        from detente.domain.agents.commands import RecordNotices
        from detente.errors import ValidationError
        from detente.operations.agents import RECORD_NOTICES, record_notices_command

        if type(up_to) is not int or up_to < 0:
            raise ValidationError("upTo must be a non-negative integer", field="upTo")
        command = RecordNotices(session_id=session_id, receipt=receipt, up_to=up_to)
        answer = self.operations.run(RECORD_NOTICES, record_notices_command, session_id, command)
        out: wire.AgentOut = plain(answer)
        return out

    def check_edit_typed(
        self,
        repo: str,
        paths: list[str],
        *,
        session_id: str | None = None,
        claim_id: str | None = None,
        worktree: str | None = None,
        branch: str | None = None,
        edits: list[Mapping[str, Any]] | None = None,
    ) -> wire.EditCheck:
        """``POST /v1/hooks/edit-check`` for values this process built (the harness
        hooks): the operation's principal and rule and the same judgement as
        :meth:`check_edit`, without the request model. Text is checked as the model
        checks it; the check validates every path.

        Raises:
            ValidationError: a lone surrogate, no path, or a malformed path.
            ForbiddenError / NotFoundError / DetenteError: as :meth:`check_edit`.
        """
        from detente.errors import ValidationError
        from detente.operations.gates import CHECK_EDIT, check_edit_query, edit_query
        from detente.operations.unicode_text import refuse_surrogates

        asked = {"repo": repo, "paths": paths, "sessionId": session_id, "claimId": claim_id}
        refuse_surrogates({**asked, "worktree": worktree, "branch": branch, "edits": edits})
        if not paths or not repo:
            raise ValidationError("repo and at least one path are required", field="paths")
        query = edit_query(
            repo,
            paths,
            session_id=session_id,
            claim_id=claim_id,
            worktree=worktree,
            branch=branch,
            edits={str(e["path"]): (tuple(e["symbols"]), bool(e["outside"])) for e in edits or ()},
        )
        answer = self.operations.run(CHECK_EDIT, check_edit_query, query)
        judged: wire.EditCheck = plain(answer)
        return judged

    def _follow(self, position: int, repo: str | None, options: Follow) -> Iterator[SseMessage]:
        """Poll the log every ``poll_interval`` seconds (other processes may write to the
        same store)."""
        import json

        while True:
            page = self.events(since=position, limit=500, repo=repo)
            for event in page["events"]:
                position = int(event["seq"])
                yield SseMessage(str(position), str(event["type"]), json.dumps(event))
            if not page["events"]:
                time.sleep(options.poll_interval)
