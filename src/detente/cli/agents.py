"""``detente agents list|register|heartbeat``: the agent registry from the command line.

The same registry the MCP tools ``register_agent_work`` and ``list_active_agents`` use,
through the same client (``/v1/agents``): a *session* announces who it is and what it is
about to do, and counts as ``active`` until its ``expiresAt`` (the server's clock); a
heartbeat is a re-registration of the same session id. Registering is advisory: it never
refuses on overlap and grants no authority (a claim does).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["agents_app"]

agents_app = typer.Typer(
    help="Agent sessions: who works in this repository now, and on what (advisory).",
    no_args_is_help=True,
)

#: The environment variable a session id is read from when none is given.
SESSION_ENV = "DETENTE_SESSION"

RepoName = Annotated[
    str | None, typer.Option("--repo-name", help="Repository name (default: this one).")
]
Ttl = Annotated[
    int | None,
    typer.Option(
        "--ttl",
        metavar="SECONDS",
        help="Seconds the session counts as active without another heartbeat "
        "(register: 3600; heartbeat: the session's current TTL).",
    ),
]


@agents_app.command("list")
def list_(
    ctx: typer.Context,
    all_: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Every registered session, departed ones included (default: active, "
            "and departed ones still holding claims).",
        ),
    ] = False,
    repo: RepoName = None,
    json_flag: JsonFlag = False,
) -> None:
    """Who works in this repository now: sessions with intent, branch, last heartbeat."""

    def body(session: Session) -> None:
        agents = session.client.list_agents(repo=repo or session.client.repo_name)["agents"]
        shown = [a for a in agents if all_ or a.get("status") == "active" or a.get("claimIds")]
        now = session.now()
        session.emit({"agents": shown}, lambda console: print_agents(console, shown, now))

    run(ctx, json_flag, body)


@agents_app.command("register")
def register(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Option("--name", "-n", help="Who you are: claude-code, codex, a name.")
    ],
    intent: Annotated[
        str, typer.Option("--intent", "-i", help="One sentence: what you are about to do, where.")
    ] = "",
    session_id: Annotated[
        str | None,
        typer.Option(
            "--session",
            help=f"Session id to (re-)register (default: ${SESSION_ENV}, else a new one).",
        ),
    ] = None,
    branch: Annotated[
        str | None, typer.Option("--branch", help="Your branch (default: the checked-out one).")
    ] = None,
    worktree: Annotated[
        str | None,
        typer.Option("--worktree", help="Your worktree (default: the current working tree)."),
    ] = None,
    ttl: Ttl = None,
    repo: RepoName = None,
    json_flag: JsonFlag = False,
) -> None:
    """Announce a session (or renew it with --session): prints its id and the others.

    Pass the id to later commands (`--session` of claim open, `agents heartbeat`), or
    export it as DETENTE_SESSION. Run it again before expiresAt to stay active.
    """

    def body(session: Session) -> None:
        from detente.ids import new_id

        sid = session_id or os.environ.get(SESSION_ENV) or new_id("ses")
        here = _checkout(session)
        record = {
            "sessionId": sid,
            "agentName": name,
            "intent": intent,
            "branch": branch or here.get("branch"),
            "worktree": worktree or here.get("worktree"),
            "ttlSeconds": ttl if ttl is not None else 3600,
            "repo": repo or session.client.repo_name,
        }
        _announce(session, {k: v for k, v in record.items() if v is not None})

    run(ctx, json_flag, body)


@agents_app.command("heartbeat")
def heartbeat(
    ctx: typer.Context,
    session_id: Annotated[
        str | None,
        typer.Argument(help=f"The session id (default: ${SESSION_ENV}).", show_default=False),
    ] = None,
    intent: Annotated[
        str | None, typer.Option("--intent", "-i", help="A new intent (default: unchanged).")
    ] = None,
    ttl: Ttl = None,
    json_flag: JsonFlag = False,
) -> None:
    """Renew a registered session: active until now + TTL; name, branch and intent kept.

    A departed session (its deadline passed) becomes active again. Exit 3 when the
    session never registered.
    """

    def body(session: Session) -> None:
        from detente.errors import ValidationError

        sid = session_id or os.environ.get(SESSION_ENV)
        if not sid:
            raise ValidationError(
                f"name the session: detente agents heartbeat SESSION_ID (or set {SESSION_ENV})",
                field="session",
            )
        current = session.client.get_agent(sid)["agent"]
        record = {
            "sessionId": sid,
            "agentName": current["agentName"],
            "intent": intent if intent is not None else current.get("intent") or "",
            "branch": current.get("branch"),
            "worktree": current.get("worktree"),
            "ttlSeconds": ttl if ttl is not None else current.get("ttlSeconds"),
            "repo": current.get("repo"),
        }
        _announce(session, {k: v for k, v in record.items() if v is not None})

    run(ctx, json_flag, body)


def _announce(session: Session, record: Mapping[str, Any]) -> None:
    """Register ``record``; print it and the other active sessions."""
    client = session.client
    agent = client.register_agent(record)["agent"]
    others = [
        a
        for a in client.list_agents(repo=agent.get("repo"))["agents"]
        if a.get("sessionId") != agent["sessionId"] and a.get("status") == "active"
    ]
    now = session.now()

    def text(console: Console) -> None:
        console.print(
            f"session {agent['sessionId']}  {agent['agentName']}  {agent.get('status', '')}  "
            f"until {agent['expiresAt']}",
            markup=False,
        )
        console.print(f"  export {SESSION_ENV}={agent['sessionId']}", markup=False)
        if others:
            console.print("other active sessions:", markup=False)
            print_agents(console, others, now)
        else:
            console.print("no other active session", markup=False)

    session.emit({"agent": agent, "activeAgents": others}, text)


def _checkout(session: Session) -> dict[str, str]:
    """The current working tree and its branch (empty when not in a git checkout)."""
    from detente.vcs.git import Git

    git = Git(session.settings.repo)
    top = git.run("rev-parse", "--show-toplevel", check=False)
    if not top.ok:
        return {}
    found = {"worktree": top.stdout.strip()}
    head = git.run("symbolic-ref", "--short", "-q", "HEAD", check=False)
    if head.ok and head.stdout.strip():
        found["branch"] = head.stdout.strip()
    return found


def print_agents(console: Console, agents: Sequence[Mapping[str, Any]], now: datetime) -> None:
    """One block per session, 80 columns wide: id, name, status, timing, intent, place."""
    from detente.cli.render import duration
    from detente.clock import parse_time

    if not agents:
        console.print("no agent sessions", markup=False)
        return
    for agent in agents:
        left = int((parse_time(str(agent["expiresAt"])) - now).total_seconds())
        span = duration(abs(left), with_seconds=False)
        timing = f"expires in {span}" if left >= 0 else f"departed {span} ago"
        console.print(
            f"{agent['sessionId']}  {agent['agentName']}  {agent.get('status', '?')}  {timing}",
            markup=False,
        )
        if agent.get("intent"):
            console.print(f"  intent  {agent['intent']}", markup=False)
        place = "  ".join(str(agent[k]) for k in ("branch", "worktree") if agent.get(k))
        if place:
            console.print(f"  where   {place}", markup=False)
        if agent.get("claimIds"):
            console.print(f"  claims  {', '.join(agent['claimIds'])}", markup=False)
