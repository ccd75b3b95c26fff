"""The words of a refusal, and a verdict in each harness's own contract."""

from __future__ import annotations

import json

import pytest

from detente.harness.answers import answer
from detente.harness.verdicts import MAX_REASON, Verdict, held_reason

HOLDER = {
    "id": "clm_B",
    "objective": "rework the settlement retries " * 20,
    "agent": {"name": "bob"},
    "lease": {"expiresAt": "2026-12-01T21:00:00.123456Z"},
}
MINE = {"id": "clm_A"}


def test_a_refusal_names_the_holder_its_lease_to_the_second_and_the_commands_of_the_room() -> None:
    reason = held_reason(["src/a.py"], [HOLDER], MINE, [], room="mtg_1")

    assert "clm_B (bob)" in reason and "lease until 2026-12-01T21:00:00Z" in reason
    assert "detente claim status clm_B" in reason
    assert "detente meeting propose mtg_1 --as clm_A --split clm_A=src/a.py" in reason
    assert "--handoff --from clm_B --to clm_A" in reason
    assert len(reason) <= MAX_REASON


def test_a_session_without_a_claim_is_told_to_claim_the_file() -> None:
    reason = held_reason(["src/a.py"], [HOLDER], None, [])

    assert 'detente claim open -o "..." -p src/a.py' in reason


def test_a_claim_that_may_not_write_now_is_told_to_settle_its_own_state() -> None:
    reason = held_reason(["src/a.py"], [], MINE, ["claim clm_A is negotiating"])

    assert reason.startswith("detente: your claim clm_A may not write now.")
    assert "claim clm_A is negotiating" in reason and "held by" not in reason


@pytest.mark.parametrize(
    ("harness", "code", "deny"),
    [
        (
            "claude",
            0,
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no",
                }
            },
        ),
        (
            "codex",
            0,
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no",
                }
            },
        ),
        ("cursor", 2, {"permission": "deny", "user_message": "no", "agent_message": "no"}),
        ("gemini", 0, {"decision": "deny", "reason": "no"}),
    ],
)
def test_a_denial_is_each_harnesss_own_refusal(
    harness: str, code: int, deny: dict[str, object]
) -> None:
    got_code, out, _ = answer(harness, "pre-tool", Verdict("deny", "no"))

    assert (got_code, json.loads(out)) == (code, deny)


def test_an_allow_never_grants_a_permission_a_person_would_be_asked_for() -> None:
    assert answer("claude", "pre-tool", Verdict("allow")) == (0, "", "")
    _, out, _ = answer("codex", "pre-tool", Verdict("allow", context="claim it"))
    assert json.loads(out) == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "claim it"}
    }
