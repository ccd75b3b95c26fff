"""A :class:`~detente.harness.verdicts.Verdict` in each harness's own contract.

- Claude Code and Codex (the same hook output schema): ``PreToolUse`` answers
  ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
  "permissionDecisionReason": R}}`` with exit 0 to refuse; an allow leaves the decision to
  the harness's own permission rules (no ``permissionDecision``: detente never grants
  what a person would be asked), with ``additionalContext`` when there is advice.
  ``SessionStart`` answers ``additionalContext``; ``Stop`` a ``systemMessage``, or
  ``{"decision": "block", "reason": R}`` when the agent should go on (its claim's turn
  came: the harness feeds ``R`` back to the model instead of stopping).
- Cursor: ``{"permission": "allow" | "deny", "user_message": ..., "agent_message": ...}``;
  a refusal also exits 2 with the reason on stderr (Cursor blocks on exit 2); at
  ``stop``, ``{"followup_message": R}`` submits ``R`` as the next message (go on).
- Gemini CLI: ``{"decision": "deny", "reason": R}`` to refuse (exit 0; stdout holds only
  the JSON), ``{}`` or ``hookSpecificOutput.additionalContext`` otherwise.
"""

from __future__ import annotations

import json
from typing import Any

from detente.harness.verdicts import Verdict

__all__ = ["Answer", "answer"]

#: ``(exit code, stdout, stderr)``.
Answer = tuple[int, str, str]

_CLAUDE_EVENTS = {"pre-tool": "PreToolUse", "session-start": "SessionStart"}
_GEMINI_EVENTS = {"pre-tool": "BeforeTool", "session-start": "SessionStart"}


def _dump(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False) + "\n"


def answer(harness: str, event: str, verdict: Verdict) -> Answer:
    """The exit code and output for ``harness``'s ``event`` (see the module docstring)."""
    if harness == "cursor":
        return _cursor(event, verdict)
    if harness == "gemini":
        return _gemini(event, verdict)
    return _claude(event, verdict)


def _claude(event: str, verdict: Verdict) -> Answer:
    doc: dict[str, Any] = {}
    name = _CLAUDE_EVENTS.get(event)
    if verdict.resume and event == "stop":
        return 0, _dump({"decision": "block", "reason": verdict.context}), ""
    if verdict.denied and event == "pre-tool":
        doc["hookSpecificOutput"] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": verdict.reason,
        }
    elif verdict.context and name is not None:
        doc["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": verdict.context}
    elif verdict.context:
        doc["systemMessage"] = verdict.context
    if verdict.notice:
        doc["systemMessage"] = verdict.notice
    return 0, _dump(doc) if doc else "", ""


def _cursor(event: str, verdict: Verdict) -> Answer:
    if event == "pre-tool":
        if verdict.denied:
            doc = {
                "permission": "deny",
                "user_message": verdict.reason,
                "agent_message": verdict.reason,
            }
            return 2, _dump(doc), verdict.reason + "\n"
        doc = {"permission": "allow"}
        said = "\n".join(t for t in (verdict.context, verdict.notice) if t)
        if said:
            doc["agent_message"] = said
        return 0, _dump(doc), ""
    if event == "session-start" and verdict.context:
        return 0, _dump({"additional_context": verdict.context}), ""
    if event == "stop" and verdict.resume:
        return 0, _dump({"followup_message": verdict.context}), ""
    return 0, _dump({}), (verdict.context + "\n") if verdict.context else ""


def _gemini(event: str, verdict: Verdict) -> Answer:
    doc: dict[str, Any] = {}
    name = _GEMINI_EVENTS.get(event)
    if verdict.denied and event == "pre-tool":
        doc = {"decision": "deny", "reason": verdict.reason}
    elif verdict.context and name is not None:
        doc["hookSpecificOutput"] = {"hookEventName": name, "additionalContext": verdict.context}
    elif verdict.context:
        doc["systemMessage"] = verdict.context
    if verdict.notice:
        doc["systemMessage"] = verdict.notice
    return 0, _dump(doc), ""
