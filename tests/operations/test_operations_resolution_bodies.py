"""The resolution body: a discriminated union parsed once at the edge into the domain's
typed resolutions, with the same wire JSON on both sides."""

from __future__ import annotations

from typing import Any

import pytest

from detente.domain.meetings.resolution_types import RESOLUTION_TYPES
from detente.errors import ValidationError
from detente.operations.bodies import ProposalIn, ResolveIn
from detente.operations.body import parse

SUBMITTED: list[dict[str, Any]] = [
    {
        "type": "split_ownership",
        "assignments": [
            {"claimId": "clm_a", "targets": ["src/a/y.py", "AGENTS.md#build"]},
            {"claimId": "clm_b", "targets": []},
        ],
    },
    {"type": "serialize", "first": "clm_a", "then": "clm_b"},
    {"type": "handoff", "fromClaimId": "clm_a", "toClaimId": "clm_b"},
    {"type": "joint", "claimIds": ["clm_a", "clm_b"]},
    {"type": "human_arbitration"},
]


def test_the_body_samples_cover_every_resolution_type() -> None:
    assert sorted(r["type"] for r in SUBMITTED) == sorted(RESOLUTION_TYPES)


@pytest.mark.parametrize("wire", SUBMITTED, ids=lambda r: r["type"])
def test_every_resolution_type_parses_at_the_edge_and_writes_back_the_same_json(
    wire: dict[str, Any],
) -> None:
    body = parse(ProposalIn, {"expectedMeetingRevision": 1, "claimId": "clm_a", "resolution": wire})
    command = body.to_command("mtg_1")
    assert command.resolution.to_wire() == wire
    resolve = parse(ResolveIn, {"expectedMeetingRevision": 1, "resolution": wire})
    assert resolve.to_command("mtg_1").resolution == command.resolution


@pytest.mark.parametrize(
    ("resolution", "field"),
    [
        ({"type": "coin_toss"}, "resolution.type"),
        ({"first": "a", "then": "b"}, "resolution.type"),
        ({"type": "serialize", "first": "a"}, "resolution.then"),
        (
            {"type": "handoff", "fromClaimId": "a", "toClaimId": "b", "targets": []},
            "resolution.targets",
        ),
        ({"type": "joint", "claimIds": "a,b"}, "resolution.claimIds"),
        (
            {"type": "split_ownership", "assignments": [{"claimId": "a", "targets": [1]}]},
            "resolution.assignments[0].targets[0]",
        ),
    ],
    ids=["unknown-type", "no-type", "missing-field", "derived-field", "not-a-list", "not-text"],
)
def test_a_malformed_resolution_is_refused_naming_its_field(
    resolution: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        parse(ResolveIn, {"expectedMeetingRevision": 1, "resolution": resolution})
    assert refused.value.field == field
