"""Event versions: a payload recorded at an old version replays in the current shape."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from detente.clock import FakeClock
from detente.domain.state import RepoState
from detente.errors import StoreError
from detente.eventlog.projections import apply_stored, verify
from detente.eventlog.upcasting import UPCASTERS, Upcasters
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids, seed


def _objective_renamed_to_goal(data: dict[str, Any]) -> dict[str, Any]:
    goal = data.pop("objective")
    return {**data, "goal": goal}


#: The table of a release in which ``claim.announced`` v2 renamed ``objective`` to ``goal``.
_RENAMED = Upcasters({("claim.announced", 1): _objective_renamed_to_goal})


class _Recording(RepoState):
    """A fold that keeps what replay hands it (the payload after upcasting)."""

    def __init__(self) -> None:
        super().__init__("demo")
        self.folded: list[tuple[str, dict[str, Any]]] = []

    def apply(
        self,
        event_type: str,
        data: dict[str, Any],
        *,
        at: datetime,
        event_id: str,
        seq: int = 0,
        subject: str | None = None,
    ) -> None:
        self.folded.append((event_type, data))


def test_a_v1_event_recorded_today_replays_in_the_v2_shape_after_a_field_is_renamed(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "d.db")
    service = Service(store, FakeClock(), [RepoConfig("demo")], ids=counting_ids())
    service.claims.open_claim(seed("src/a.py", objective="retry settlement"))
    [recorded] = [e for e in store.read() if e.type == "claim.announced"]
    assert recorded.version == 1 and recorded.data["objective"] == "retry settlement"

    fold = _Recording()
    for event in store.read():
        apply_stored(fold, event, _RENAMED)

    folded = dict(fold.folded)["claim.announced"]
    assert folded["goal"] == "retry settlement" and "objective" not in folded
    assert {k: v for k, v in folded.items() if k != "goal"} == {
        k: v for k, v in recorded.data.items() if k != "objective"
    }
    # The stored event is untouched: same payload, same version, the chain still verifies.
    assert store.read()[0] == recorded and verify(store).ok


def test_an_event_at_the_current_version_passes_through_unchanged(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d.db")
    Service(store, FakeClock(), [RepoConfig("demo")]).claims.open_claim(seed("src/a.py"))
    for event in store.read():
        assert UPCASTERS.upcast(event) is event
        assert _RENAMED.upcast(event).version == _RENAMED.current(event.type)


def test_an_event_newer_than_this_release_is_refused_with_the_version_named(
    tmp_path: Path,
) -> None:
    store = SqliteStore(tmp_path / "d.db")
    Service(store, FakeClock(), [RepoConfig("demo")]).claims.open_claim(seed("src/a.py"))
    future = dataclasses.replace(store.read()[0], version=3)
    with pytest.raises(StoreError, match=r"version 3.*versions 1 to 2"):
        apply_stored(RepoState("demo"), future, _RENAMED)


def test_a_table_with_a_gap_between_versions_is_refused() -> None:
    with pytest.raises(ValueError, match="from version 1 to 2"):
        Upcasters({("claim.announced", 2): _objective_renamed_to_goal})
