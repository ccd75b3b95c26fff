"""Session start, stop and end: the agent session bound to the harness's session.

- start: register (or renew) the agent session ``<harness>-<session id>``
  (:func:`~detente.harness.context.session_key`, the ``register_agent`` operation) for
  this worktree, and answer a summary (at most about 300 tokens) of the live claims and
  open meeting rooms of the repository, this worktree's first;
- every gated tool call: a heartbeat (the session renewed at most once a minute,
  :func:`heartbeat`);
- stop: the agent goes on when its claim's turn came meanwhile (its notices,
  :mod:`detente.harness.wakeups`); else a reminder of the session's claims not completed
  or released;
- end: the session is renewed with the shortest lease (it departs; its claims keep
  their leases).

Subagents report their parent's session id: they work under the parent's claim.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from detente.harness.context import LIVE, HookContext, session_claim, session_key
from detente.harness.payloads import HookEvent
from detente.harness.verdicts import Verdict, short

__all__ = ["SESSION_TTL", "end", "heartbeat", "start", "stop"]

#: Seconds a registered harness session lives without a heartbeat.
SESSION_TTL = 3600
_BEAT_EVERY = 60.0
_END_TTL = 1


def _register(
    ctx: HookContext, event: HookEvent, ttl: int = SESSION_TTL, *, fallback: bool = True
) -> str | None:
    key = session_key(event.harness, event.session)
    if key is None:
        return None
    from detente.errors import ValidationError

    body: dict[str, Any] = {
        "sessionId": key,
        "agentName": event.harness,
        "worktree": str(ctx.top),
        "ttlSeconds": ttl,
        "repo": ctx.repo,
    }
    # In process, from typed values (no request model: pydantic costs a hook process
    # about 0.1 s); else one request.
    register = getattr(ctx.client, "register_agent_typed", None) or ctx.client.register_agent
    try:
        register(body)
    except ValidationError:  # a TTL out of the repository's bounds: its default instead
        if not fallback:
            return key  # ending: never renew a session for longer
        body.pop("ttlSeconds")
        register(body)
    return key


def start(ctx: HookContext, event: HookEvent) -> Verdict:
    """Register the session; the summary goes back as context."""
    key = _register(ctx, event)
    claims = [c for c in ctx.client.list_claims(repo=ctx.repo)["claims"] if c["status"] in LIVE]
    mine = session_claim(ctx, key)
    here = [c for c in claims if mine is not None and c["id"] == mine["id"]]
    others = [c for c in claims if not here or c["id"] != here[0]["id"]]
    lines = [f"detente coordinates this repository ({ctx.repo}); session {key or '?'}."]
    if here:
        lines.append(f"You work under claim {_line(here[0])}")
    else:
        lines.append(
            'You hold no claim here: claim before you edit (detente claim open -o "..." -p PATH, '
            "or the MCP tool claim_open)."
        )
    if others:
        lines.append(f"Other live claims ({len(others)}):")
        lines += [f"- {_line(c)}" for c in others[:5]]
    rooms = [m for m in ctx.client.list_meetings(repo=ctx.repo, status="open")["meetings"]]
    if rooms:
        lines.append(f"Open meeting rooms ({len(rooms)}): " + ", ".join(m["id"] for m in rooms[:5]))
    lines.append("Edits of files another claim holds are refused before they happen.")
    return Verdict("allow", context=short("\n".join(lines)))


def _line(claim: Mapping[str, Any]) -> str:
    paths = ", ".join(claim.get("paths", [])[:3])
    agent = (claim.get("agent") or {}).get("name", "?")
    return (
        f"{claim['id']} ({agent}, {claim['status']}): {short(str(claim.get('objective', '')), 80)}"
        f" [{paths}]"
    )


def heartbeat(ctx: HookContext, event: HookEvent) -> None:
    """Renew the session at most once a minute (a stamp under the common git directory)."""
    key = session_key(event.harness, event.session)
    if key is None:
        return
    stamp = ctx.info.common_dir / "detente" / "harness" / f"{key}.beat"
    try:
        if time.time() - stamp.stat().st_mtime < _BEAT_EVERY:
            return
    except OSError:
        pass
    _register(ctx, event)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.touch()
    except OSError:
        return


def stop(ctx: HookContext, event: HookEvent) -> Verdict:
    """The agent goes on when its claim's turn came while it waited (the session's
    notices, :mod:`detente.harness.wakeups`); else a reminder of the session's claims
    still open (not completed or released), with any other notice."""
    key = session_key(event.harness, event.session)
    woke = ""
    if key is not None:
        from detente.harness.wakeups import deliver, turn_came

        found = ctx.client.session_notices(key, repo=ctx.repo)
        woke = deliver(ctx, key, found)
        if turn_came(found):
            return Verdict("allow", context=short(woke), resume=True)
    reminder = _reminder(ctx, key)
    said = "\n".join(t for t in (woke, reminder.context) if t)
    return Verdict("allow", context=short(said)) if said else reminder


def _reminder(ctx: HookContext, key: str | None) -> Verdict:
    """A reminder of the session's claims still open (not completed or released)."""
    open_claims: list[Mapping[str, Any]] = (
        [c for c in ctx.client.session_claims(key, repo=ctx.repo)["claims"] if c["status"] in LIVE]
        if key
        else []
    )
    mine = session_claim(ctx, key)
    if mine is not None and all(c["id"] != mine["id"] for c in open_claims):
        open_claims.append(mine)
    if not open_claims:
        return Verdict("allow")
    names = ", ".join(f"{c['id']} ({c['status']})" for c in open_claims[:4])
    return Verdict(
        "allow",
        context=short(
            f"detente: your claims still hold their files: {names}. When the work is done, "
            f"complete with evidence (detente claim complete {open_claims[0]['id']} ...) or "
            f"release (detente claim abandon {open_claims[0]['id']}) so others may edit them."
        ),
    )


def end(ctx: HookContext, event: HookEvent) -> Verdict:
    """End the session (it departs; its claims keep their leases)."""
    _register(ctx, event, ttl=_END_TTL, fallback=False)
    return Verdict("allow")
