"""A hook's answer before it is worded for one harness, and the words of a refusal."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

__all__ = ["MAX_REASON", "Verdict", "held_reason", "short"]

#: Longest reason or context, in characters (about 300 tokens).
MAX_REASON = 1200


class Verdict(NamedTuple):
    """What the hook answers.

    Attributes:
        decision: ``allow`` or ``deny``.
        reason: why (a refusal), shown to the agent.
        context: advice or a summary for the agent with an ``allow`` (may be empty).
        notice: a line for the person (``systemMessage``), e.g. "detente unreachable".
        resume: at stop, tell the agent to continue (``context`` says why): the turn of
            the claim it waited for came.
    """

    decision: Literal["allow", "deny"]
    reason: str = ""
    context: str = ""
    notice: str = ""
    resume: bool = False

    @property
    def denied(self) -> bool:
        return self.decision == "deny"


def short(text: str, limit: int = MAX_REASON) -> str:
    """``text`` cut to ``limit`` characters (ending with an ellipsis when cut)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def held_reason(
    paths: Sequence[str],
    holders: Sequence[Mapping[str, Any]],
    mine: Mapping[str, Any] | None,
    problems: Sequence[str],
    room: str | None = None,
) -> str:
    """The refusal of an edit of files other live claims hold: who holds them, why, until
    when, and the commands to run (wait, ask for a split or a handoff, work elsewhere).

    Args:
        paths: the refused paths.
        holders: the holders' claim records (``id, objective, agent, lease, meetingIds``).
        mine: the session's claim record, or None.
        problems: sentences about the session's own claim (not active, ...).
        room: an open meeting both the session's claim and a holder are in.
    """
    if not holders and mine is not None:  # the session's own claim may not write now
        lines = [f"detente: your claim {mine['id']} may not write now."]
        lines += [f"- {p}" for p in problems[:2]]
        lines.append(
            f"Settle it first: detente claim status {mine['id']} (its meeting rooms: "
            "detente meeting list), then retry."
        )
        return short("\n".join(lines))
    from detente.clock import whole_seconds  # a refusal's only (an allowed edit never)

    more = " ..." if len(paths) > 4 else ""
    lines = [f"detente: {', '.join(paths[:4])}{more} is not yours to edit now."]
    for holder in holders[:2]:
        agent = (holder.get("agent") or {}).get("name", "?")
        expires = whole_seconds(str((holder.get("lease") or {}).get("expiresAt", "?")))
        lines.append(
            f"Held by claim {holder['id']} ({agent}): "
            f'"{short(str(holder.get("objective", "")), 120)}", lease until {expires}.'
        )
    lines += [f"Your claim: {p}" for p in problems[:2]]
    lines.append("Options:")
    first = holders[0]["id"] if holders else None
    if first:
        lines.append(f"- wait for it: detente claim status {first} (its lease ends unless renewed)")
    shared = room
    target = ",".join(paths[:4])
    if mine is not None and shared:
        lines.append(
            f"- ask for a split: detente meeting propose {shared} --as {mine['id']} "
            f"--split {mine['id']}={target}"
        )
        if first:
            lines.append(
                f"- or a handoff: detente meeting propose {shared} --as {mine['id']} "
                f"--handoff --from {first} --to {mine['id']}"
            )
    elif mine is not None:
        lines.append(
            f"- ask for it (opens a meeting room with the holder): detente claim scope add "
            f"{mine['id']} -p {paths[0]}"
        )
    else:
        lines.append(
            f'- claim it (opens a meeting room with the holder): detente claim open -o "..." '
            f"-p {paths[0]}"
        )
    lines.append("- or work on files no other claim holds.")
    return short("\n".join(lines))
