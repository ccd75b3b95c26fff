"""Stream filters decide on keys computed once per event, shared by every subscriber."""

from __future__ import annotations

import json
from typing import Any

import pytest

from detente.api.sse_filter import EventKeys, StreamFilter, parse_filter
from detente.errors import ValidationError
from detente.eventlog.envelope import StoredEvent


def _event(type_: str, subject: str, data: dict[str, Any], repo: str = "web") -> StoredEvent:
    return StoredEvent(
        seq=7,
        id="evt_1",
        type=type_,
        version=1,
        repo=repo,
        subject=subject,
        subject_revision=1,
        data=data,
        at="2026-11-30T12:00:00Z",
        prev_hash="0" * 64,
        hash="1" * 64,
    )


def test_every_subscriber_gets_the_same_encoded_message_object() -> None:
    keys = EventKeys(_event("claim.renewed", "claim/clm_a", {"ttlSeconds": 60}))

    first, second = keys.message, keys.message

    assert first is second
    head, _, data = first.decode().partition("data: ")
    assert head == "id: 7\nevent: claim.renewed\n"
    assert json.loads(data)["seq"] == 7


def test_the_payload_is_walked_once_however_many_filters_ask() -> None:
    keys = EventKeys(_event("meeting.opened", "meeting/mtg_1", {"claims": ["clm_a", "clm_b"]}))
    filters = [StreamFilter(claim=f"clm_{c}") for c in "abcz" * 25]

    wanted = [f.wants(keys) for f in filters]
    strings = keys.strings

    assert wanted == [True, True, False, False] * 25
    assert keys.strings is strings  # cached, not recomputed per subscriber


def test_type_families_and_exact_types_combine() -> None:
    wanted = StreamFilter(types=("claim.*", "meeting.resolved"))

    assert wanted.wants(EventKeys(_event("claim.renewed", "claim/clm_a", {})))
    assert wanted.wants(EventKeys(_event("meeting.resolved", "meeting/m", {})))
    assert not wanted.wants(EventKeys(_event("meeting.opened", "meeting/m", {})))


def test_a_path_filter_sees_the_claims_known_scope_when_the_event_names_no_path() -> None:
    renewal = _event("claim.renewed", "claim/clm_a", {"ttlSeconds": 60})
    scopes = {"claim/clm_a": ("src/api/**",)}

    assert StreamFilter(path="src/api/routes").wants(EventKeys(renewal, scopes))
    assert not StreamFilter(path="docs").wants(EventKeys(renewal, scopes))
    assert not StreamFilter(path="src/api", repo="other").wants(EventKeys(renewal, scopes))


@pytest.mark.parametrize(
    ("query", "field"), [({"type": " , "}, "type"), ({"path": "../x"}, "path")]
)
def test_a_malformed_filter_is_refused_naming_its_field(query: dict[str, str], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_filter(None, query)

    assert caught.value.field == field
