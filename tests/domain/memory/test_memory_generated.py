"""Generated regions rendered from the state; user edits kept; folding memory events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from detente.domain.claims.model import MemoryImpact
from detente.domain.claims.opening import decide_open
from detente.domain.events import Event
from detente.domain.memory.commands import Register
from detente.domain.memory.decide import decide_register
from detente.domain.memory.generated import added_lines, plan_overlay, plan_render, render_region
from detente.domain.memory.markdown import MarkupError, digest, parse
from detente.domain.state import RepoState

from support import counting_ids, seed

NOW = datetime(2026, 11, 1, tzinfo=UTC)
AGENTS = (
    b"# Agents\n\nManual intro, kept.\n\n"
    b"<!-- detente:begin generated claims -->\n(stale)\n<!-- detente:end generated claims -->\n"
    b"\nManual middle.\n\n"
    b"<!-- detente:begin generated ownership -->\n<!-- detente:end generated ownership -->\n"
    b"Manual tail.\n"
)


def fold(state: RepoState, events: list[Event]) -> None:
    for e in events:
        state.apply(e.type, e.data, at=NOW, event_id=e.id, subject=e.subject)


@pytest.fixture
def state() -> RepoState:
    s = RepoState("demo")
    ids = counting_ids()
    fold(s, decide_open(s, seed("src/**", agent="alice"), NOW, ids))
    impact = MemoryImpact("CLAUDE.md", sections=("build",))
    fold(s, decide_open(s, seed(agent="bob", memory_impacts=(impact,)), NOW, ids))
    claude = b"# C\n## Build\nx\n## Style\ny\n"
    fold(s, decide_register(s, Register("demo", "CLAUDE.md", "section_owned"), claude, ids).events)
    fold(s, decide_register(s, Register("demo", "AGENTS.md", "generated"), AGENTS, ids).events)
    return s


def test_rendering_fills_regions_from_the_state_and_keeps_manual_text(state: RepoState) -> None:
    doc = state.memory.get("AGENTS.md")
    assert doc is not None

    plan = plan_render(state, doc, AGENTS)

    assert plan.rendered == ["ownership", "claims"]
    claims = parse(plan.data).region("claims")
    assert claims is not None
    body = claims.body(plan.data).decode()
    assert "alice (active)" in body and "`src/**`" in body
    assert "bob (active)" in body and "`CLAUDE.md#build`" in body
    assert "`CLAUDE.md#build`: `clm_" in render_region(state, "ownership").decode()
    for manual in (
        b"# Agents\n\nManual intro, kept.\n\n",
        b"\nManual middle.\n\n",
        b"Manual tail.\n",
    ):
        assert manual in plan.data
    rest_before = AGENTS.split(b"<!-- detente:end generated ownership -->")[1]
    assert plan.data.endswith(rest_before)


def test_rendering_twice_with_an_unchanged_state_is_a_fixed_point(state: RepoState) -> None:
    doc = state.memory.get("AGENTS.md")
    assert doc is not None
    first = plan_render(state, doc, AGENTS)
    fold(
        state,
        [
            Event(
                "evt_r",
                "memory.rendered",
                f"memory/{doc.id}",
                {"documentId": doc.id, **first.content},
            )
        ],
    )

    second = plan_render(state, state.memory.get("AGENTS.md"), first.data)  # type: ignore[arg-type]

    assert second.data == first.data and second.rendered == [] and second.edited == []


def test_a_user_edit_inside_a_region_is_kept_and_reported(state: RepoState) -> None:
    doc = state.memory.get("AGENTS.md")
    assert doc is not None
    edited = AGENTS.replace(b"(stale)\n", b"(stale)\nUSER NOTE\n")

    plan = plan_render(state, doc, edited)

    assert plan.kept == ["claims"] and plan.rendered == ["ownership"]
    [(key, recorded, disk, body)] = plan.edited
    assert key == "claims" and body == b"(stale)\nUSER NOTE\n"
    assert recorded == digest(b"(stale)\n") and disk == digest(body)
    assert b"(stale)\nUSER NOTE\n" in plan.data
    regions = {r["key"]: r["hash"] for r in plan.content["regions"]}
    assert regions["claims"] == recorded  # the edit is not silently adopted as rendered


def test_an_overlay_moves_the_users_text_after_the_region_and_re_renders(
    state: RepoState,
) -> None:
    doc = state.memory.get("AGENTS.md")
    assert doc is not None
    edited = AGENTS.replace(b"(stale)\n", b"USER NOTE\n")

    new, user, _ = plan_overlay(state, doc, edited, "claims", "overlay")

    assert user == b"USER NOTE\n"
    assert b"<!-- detente:end generated claims -->\n\nUSER NOTE\n\nManual middle." in new
    assert b"alice (active)" in new


def test_an_overlay_copies_only_the_lines_the_user_changed_after_a_blank_line(
    state: RepoState,
) -> None:
    doc = state.memory.get("AGENTS.md")
    assert doc is not None
    body = b"".join(f"- rendered line {i}\n".encode() for i in range(7))
    edited = AGENTS.replace(b"(stale)\n", body.replace(b"line 3", b"line 3 (ask bob)"))
    diff = "--- a\n+++ b\n@@ -4 +4 @@\n-- rendered line 3\n+- rendered line 3 (ask bob)\n"

    new, _, _ = plan_overlay(state, doc, edited, "claims", "overlay", added_lines(diff))

    end = b"<!-- detente:end generated claims -->\n"
    assert end + b"\n- rendered line 3 (ask bob)\n\nManual middle." in new
    assert new.count(b"rendered line") == 1


@pytest.mark.parametrize(
    "broken",
    [
        AGENTS.replace(b"<!-- detente:end generated claims -->\n", b""),
        AGENTS.replace(b"<!-- detente:begin generated ownership -->\n", b"").replace(
            b"Manual tail.\n", b"Manual tail.\n<!-- detente:begin generated ownership -->\n"
        ),
        AGENTS.replace(b"(stale)\n", b"<!-- detente:begin generated claims -->\n"),
    ],
    ids=["missing-end", "reversed", "two-begins"],
)
def test_a_render_of_a_file_with_bad_markers_is_refused(state: RepoState, broken: bytes) -> None:
    doc = state.memory.get("AGENTS.md")
    assert doc is not None

    with pytest.raises(MarkupError):
        plan_render(state, doc, broken)


def test_section_revisions_count_hash_changes_and_writers(state: RepoState) -> None:
    doc = state.memory.get("CLAUDE.md")
    assert doc is not None
    data = b"# C\n## Build\nz\n## Style\ny\n"
    outline = parse(data)
    content = {
        "fileHash": digest(data),
        "size": len(data),
        "sections": [
            {
                "key": s.key,
                "title": s.title,
                "kind": s.kind,
                "level": s.level,
                "parent": s.parent,
                "hash": digest(s.text(data)),
            }
            for s in outline.sections
        ],
    }
    data_fields = {"documentId": doc.id, "claimId": "clm_x", "fencingToken": 7}
    fold(
        state,
        [
            Event(
                "evt_p",
                "memory.section_patched",
                f"memory/{doc.id}",
                {**data_fields, "writtenSections": ["build"], **content},
            )
        ],
    )

    after = state.memory.get("CLAUDE.md")
    assert after is not None and after.revision == doc.revision + 1
    revisions = {s.key: (s.revision, s.fencing_token, s.last_writer) for s in after.sections}
    assert revisions == {"c": (2, 0, None), "build": (2, 7, "clm_x"), "style": (1, 0, None)}


def test_the_claims_region_shows_modules_symbols_and_contracts_of_claims_holding_only_those() -> (
    None
):
    s = RepoState("demo")
    ids = counting_ids()
    fold(s, decide_open(s, seed(agent="carol", modules=("pkg.test",)), NOW, ids))
    fold(s, decide_open(s, seed(agent="dave", symbols=("f.py::K.a",)), NOW, ids))
    fold(
        s, decide_open(s, seed(agent="erin", expected_contract_changes=("billing api",)), NOW, ids)
    )

    region = render_region(s, "claims").decode()

    assert "modules `pkg.test`" in region
    assert "symbols `f.py::K.a`" in region
    assert "contracts `billing api`" in region
