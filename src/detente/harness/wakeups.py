"""Waking an idle agent: the notices a hook call brings, and their receipts.

An agent waiting for its turn reads no event stream. Its next hook call does: the edit
check (``check_edit``) and the stop hook (``GET /v1/agents/{sessionId}/notices``) answer
what woke the session since its notices were last delivered (its claim's turn came, a
meeting room of its claims changed: :mod:`detente.domain.agents.notices`). The hook puts
them before the agent (context of the tool use; at stop, a "continue" when its turn
came) and records the receipts through the ``record_notices`` operation:

- ``delivered`` up to the log position read, once notices went out (or once the read
  went 100 events past the last receipt, so later calls read less);
- ``seen`` up to what was delivered, at the session's next hook call after a delivery
  (the agent acted after reading them).

A receipt that cannot be recorded never changes the hook's answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from detente.harness.context import HookContext

__all__ = ["AMORTIZE", "deliver", "turn_came"]

#: Events read past the last ``delivered`` receipt before one is recorded with no notice.
AMORTIZE = 100


def deliver(ctx: HookContext, key: str | None, answer: Mapping[str, Any]) -> str:
    """Record the receipts ``answer`` calls for and return the notices' text (empty:
    none). ``answer`` carries ``notices[]``, ``scannedUpTo`` and ``receipts``."""
    receipts = answer.get("receipts")
    if key is None or not isinstance(receipts, Mapping):
        return ""
    notices = list(answer.get("notices") or [])
    delivered, seen = int(receipts["deliveredUpTo"]), int(receipts["seenUpTo"])
    scanned = int(answer.get("scannedUpTo") or 0)
    if delivered > seen:
        _record(ctx, key, "seen", delivered)
    if notices or scanned - delivered >= AMORTIZE:
        _record(ctx, key, "delivered", max([scanned, *(int(n["seq"]) for n in notices)]))
    return "\n".join(dict.fromkeys(str(n["text"]) for n in notices))


def turn_came(answer: Mapping[str, Any]) -> bool:
    """Whether one of the notices says the session's claim may write now."""
    return any(bool(n.get("turn")) for n in answer.get("notices") or [])


def _record(ctx: HookContext, key: str, receipt: str, up_to: int) -> None:
    from detente.errors import DetenteError

    typed = getattr(ctx.client, "record_notices_typed", None)
    try:
        if typed is not None:
            typed(key, receipt, up_to)
        else:
            ctx.client.record_notices(key, receipt, up_to)
    except DetenteError as exc:  # a receipt never changes the answer
        import logging

        logging.getLogger("detente.harness").warning(
            "detente: could not record the %s receipt of %s: %s", receipt, key, exc
        )
