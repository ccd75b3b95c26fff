"""Time formatting (:mod:`detente.clock`): one spelling for every stored and answered time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from detente.clock import format_time, parse_time, whole_seconds


def _strftime(when: datetime) -> str:
    """The spelling before the fast path (what stored logs and snapshots hold)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


NOW = datetime(2026, 12, 2, 5, 30, 1, 250, tzinfo=UTC)


@pytest.mark.parametrize(
    "when",
    [
        NOW,
        NOW.replace(microsecond=0),
        NOW.astimezone(timezone(timedelta(hours=5, minutes=30))),
        NOW.astimezone(ZoneInfo("America/New_York")),
        NOW.astimezone(ZoneInfo("UTC")),
        datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(999, 1, 2, tzinfo=UTC),  # strftime leaves a year before 1000 unpadded
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime(2026, 1, 1, 12, 0),  # naive: local time, as astimezone takes it
    ],
)
def test_a_time_is_spelled_as_strftime_spelled_it_on_first_and_repeated_use(
    when: datetime,
) -> None:
    first, again = format_time(when), format_time(when)
    assert first == again == _strftime(when)


def test_a_formatted_time_parses_back_to_the_same_instant() -> None:
    assert parse_time(format_time(NOW)) == NOW
    shifted = NOW.astimezone(timezone(timedelta(hours=-3)))
    assert parse_time(format_time(shifted)) == NOW


def test_equal_instants_in_other_zones_share_one_spelling_and_never_another_instants() -> None:
    later = NOW + timedelta(microseconds=1)
    assert format_time(NOW.astimezone(timezone(timedelta(hours=2)))) == format_time(NOW)
    assert format_time(later) != format_time(NOW)
    assert format_time(later).endswith(".000251Z")


def test_a_time_for_people_is_cut_to_the_second_and_other_text_is_left_alone() -> None:
    assert whole_seconds("2026-12-01T21:00:00.123456Z") == "2026-12-01T21:00:00Z"
    assert whole_seconds(format_time(datetime(2026, 1, 1, tzinfo=UTC))) == "2026-01-01T00:00:00Z"
    for other in ("2026-12-01T21:00:00Z", "?", "None", "2026-12-01T21:00:00.1+01:00"):
        assert whole_seconds(other) == other
