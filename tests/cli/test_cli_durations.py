"""One duration format for lease timers, meeting deadlines and agent sessions."""

from __future__ import annotations

from detente.cli.render import duration


def test_a_duration_names_hours_minutes_and_seconds_down_to_the_largest_unit() -> None:
    assert duration(3723) == "1h02m03s"
    assert duration(123) == "2m03s"
    assert duration(7) == "7s"


def test_an_agent_session_duration_of_an_hour_or_more_drops_the_seconds() -> None:
    assert duration(3723, with_seconds=False) == "1h02m"
    assert duration(123, with_seconds=False) == "2m03s"
