"""Agent decisions: registering a session (commands in, events out)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from detente.clock import format_time
from detente.domain import events as ev
from detente.domain.agents.commands import RecordNotices, RegisterAgent
from detente.domain.agents.model import agent_subject
from detente.domain.policy import DEFAULT_POLICY, IdSource, Policy
from detente.domain.state import RepoState
from detente.domain.validation import text_field, ttl_field
from detente.errors import NotFoundError, ValidationError

#: What a session id may look like: it names a stream (``agent/<sessionId>``).
SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}$")


def check_session_id(session_id: str, fld: str = "sessionId") -> str:
    """The session id, or ``validation_error`` naming ``fld``."""
    if not isinstance(session_id, str) or not SESSION_ID_PATTERN.match(session_id):
        raise ValidationError(
            f"{fld} must be 1-128 characters of letters, digits and . _ : @ + - "
            "(starting with a letter or digit)",
            field=fld,
        )
    return session_id


def _optional_text(value: str | None, fld: str, policy: Policy) -> str | None:
    if value is None:
        return None
    return text_field(value, fld, policy, required=False, identifier=True) or None


def decide_register(
    state: RepoState,
    cmd: RegisterAgent,
    now: datetime,
    ids: IdSource,
    policy: Policy = DEFAULT_POLICY,
) -> list[ev.Event]:
    """One ``agent.registered`` event: the whole record with ``expiresAt = now + ttl``.

    Registering an existing session renews it (and replaces its name, intent, branch and
    worktree); a departed session comes back ``active``.

    Raises:
        ValidationError: ``validation_error`` naming ``sessionId``, ``agentName``,
            ``intent``, ``branch``, ``worktree`` or ``ttlSeconds``.
    """
    session_id = check_session_id(cmd.session_id)
    name = text_field(cmd.agent_name, "agentName", policy, identifier=True)
    if len(name) > 200:
        raise ValidationError("agentName is longer than 200 characters", field="agentName")
    ttl = ttl_field(cmd.ttl_seconds, "ttlSeconds", policy)
    # A new session's notices start after what the log holds now (a renewal keeps its).
    start = {} if session_id in state.agents else {"noticesFrom": state.last_seq}
    return [
        ev.stream_event(
            ids,
            agent_subject(session_id),
            ev.AGENT_REGISTERED,
            sessionId=session_id,
            agentName=name,
            intent=text_field(cmd.intent, "intent", policy, required=False),
            branch=_optional_text(cmd.branch, "branch", policy),
            worktree=_optional_text(cmd.worktree, "worktree", policy),
            ttlSeconds=ttl,
            expiresAt=format_time(now + timedelta(seconds=ttl)),
            **start,
        )
    ]


#: The receipts a session records of its notices.
RECEIPTS = ("delivered", "seen")


def decide_notices(state: RepoState, cmd: RecordNotices, ids: IdSource) -> list[ev.Event]:
    """One ``agent.notices_received`` event, or none when the receipt records nothing new
    (a repeated or older receipt changes nothing).

    Raises:
        NotFoundError: ``not_found``: the session was never registered here.
        ValidationError: ``validation_error`` naming ``receipt`` (not ``delivered`` or
            ``seen``) or ``upTo`` (not a position of the log; ``seen`` past what was
            delivered).
    """
    session = state.agents.get(cmd.session_id)
    if session is None:
        raise NotFoundError(f"no agent session {cmd.session_id!r}", sessionId=cmd.session_id)
    if cmd.receipt not in RECEIPTS:
        raise ValidationError("receipt must be 'delivered' or 'seen'", field="receipt")
    if type(cmd.up_to) is not int or not 0 <= cmd.up_to <= state.last_seq:
        raise ValidationError(
            f"upTo must be a position of the log (0..{state.last_seq})", field="upTo"
        )
    if cmd.receipt == "seen" and cmd.up_to > session.delivered_up_to:
        raise ValidationError(
            f"upTo {cmd.up_to} was never delivered (delivered up to {session.delivered_up_to})",
            field="upTo",
        )
    done = session.seen_up_to if cmd.receipt == "seen" else session.delivered_up_to
    if cmd.up_to <= done:
        return []
    return [
        ev.stream_event(
            ids,
            agent_subject(cmd.session_id),
            ev.AGENT_NOTICES_RECEIVED,
            sessionId=cmd.session_id,
            receipt=cmd.receipt,
            upTo=cmd.up_to,
        )
    ]
