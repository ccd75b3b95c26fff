"""A room over a contract area offers only resolutions that can settle it (found by a fresh
tester: the CLI printed a handoff command the server then refused)."""

from __future__ import annotations

from detente.domain.meetings.commands import Propose
from detente.domain.meetings.resolution_types import Handoff
from detente.errors import DetenteError

from decisions import given, open_claim


def test_a_room_over_a_contract_area_offers_no_handoff_it_would_refuse() -> None:
    g = given(
        open_claim(
            "clm_a",
            expected_contract_changes=({"type": "http", "area": "users", "change": "add field"},),
            ttl=3600,
        ),
        open_claim("clm_b", expected_contract_changes=("users",), agent="bob", ttl=3600),
    )
    [room] = sorted(g.state.meetings.open_ids)
    meeting = g.state.meetings[room]
    handoff = Propose(room, meeting.revision, "clm_a", Handoff("clm_a", "clm_b"))
    outcome = g.when(handoff).outcome
    refused = isinstance(outcome, DetenteError)
    assert not (refused and "handoff" in meeting.options), (meeting.options, outcome)
