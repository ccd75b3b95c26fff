"""The templates render every panel from a snapshot; user text is escaped."""

from __future__ import annotations

import dataclasses

from dashboard_records import claim

from detente.dashboard import render
from detente.dashboard.source import Snapshot


def _snapshot(*claims: dict[str, object]) -> Snapshot:
    return Snapshot(
        now="2026-11-30T12:05:00Z",
        seq=7,
        repos=[{"name": "project", "path": None, "defaultBranch": "main"}],
        claims=list(claims),
        meetings=[],
    )


def test_the_page_escapes_user_text_and_shows_the_lease_left_at_read_time() -> None:
    hostile = claim("a", ["src/**"], objective='<script>alert("x")</script>')

    html = render.render_page(render.context(_snapshot(hostile), {}))

    assert "<script>alert" not in html
    assert "&lt;script&gt;alert" in html
    assert 'data-expires="2026-11-30T12:10:00Z"' in html
    assert ">5:00<" in html


def test_every_panel_renders_on_its_own_for_the_live_refresh() -> None:
    panels = render.render_panels(
        render.context(_snapshot(claim("a", ["x"])), {}), list(render.PANELS)
    )

    assert set(panels) == set(render.PANELS)
    assert 'data-claim-id="a"' in panels["claims"]


def test_an_expired_claim_is_labelled_frozen() -> None:
    lease = {"id": "lse_a", "revision": 1, "ttlSeconds": 60, "expiresAt": "2026-11-30T12:04:00Z"}
    frozen = claim("a", ["x"], status="expired", lease=lease)

    html = render.render_panels(render.context(_snapshot(frozen), {}), ["claims"])["claims"]

    assert "expired · frozen" in html
    assert ">expired<" in html


def test_durations_read_as_minutes_and_hours() -> None:
    assert render.duration(75) == "1:15"
    assert render.duration(3725) == "1:02:05"
    assert render.remaining("2026-11-30T12:00:00Z", "2026-11-30T12:00:01Z") == "expired"


def test_the_page_renders_a_claim_with_a_typed_contract_change() -> None:
    typed = claim(
        "a",
        ["web/**"],
        expectedContractChanges=[{"type": "http", "area": "payments-api", "change": "add-retry"}],
    )

    html = render.render_page(render.context(_snapshot(typed), {}))

    assert "API changes: http:payments-api:add-retry" in html


def test_the_resolve_form_offers_only_live_claims_and_defaults_to_none_that_left() -> None:
    live_a = claim("a", ["src/**"])
    left_b = claim("b", ["src/app.py"], status="taken_over")
    live_c = claim("c", ["src/app.py"], status="negotiating")
    meeting = {
        "id": "mtg_1",
        "repo": "project",
        "status": "open",
        "revision": 3,
        "participants": ["a", "c", "b"],
        "contestedTargets": [{"target": "src/**", "claimIds": ["a", "c"], "reason": "x"}],
        "proposals": [],
        "deadline": "2026-11-30T12:15:00Z",
        "resolution": None,
        "options": ["serialize"],
        "arbitrators": [],
        "escalation": None,
        "notices": [],
        "createdAt": "2026-11-30T12:00:00Z",
        "updatedAt": "2026-11-30T12:00:00Z",
    }
    snapshot = Snapshot(
        now="2026-11-30T12:05:00Z",
        seq=7,
        repos=[{"name": "project", "path": None, "defaultBranch": "main"}],
        claims=[live_a, left_b, live_c],
        meetings=[meeting],
    )

    html = render.render_panels(render.context(snapshot, {}), ["meetings"])["meetings"]

    form = html[html.index('<form class="resolve"') :]
    assert 'value="b"' not in form  # no option, default or checkbox names the departed claim
    assert 'value="c" selected' in form and 'value="a" selected' in form


def test_the_resources_panel_shows_slots_holders_with_their_lease_timer_and_the_line() -> None:
    build = {
        "id": "project:build",
        "name": "build",
        "capacity": 2,
        "lastNumber": 0,
        "holders": [
            {
                "fencingToken": 7,
                "principal": "alice",
                "ttlSeconds": 600,
                "expiresAt": "2026-11-30T12:10:00Z",
                "leaseRevision": 1,
                "claimId": None,
                "sessionId": "ses_a",
                "note": "<b>nightly</b>",
            }
        ],
        "waiters": [{"ticket": "tkt_1", "principal": "bob", "queuedAt": "2026-11-30T12:04:00Z"}],
    }
    snap = dataclasses.replace(_snapshot(), resources=[build])

    html = render.render_panels(render.context(snap, {}), ["resources"])["resources"]

    assert '<span class="slots" data-held="1" data-capacity="2">1 of 2 held</span>' in html
    assert 'data-token="7"' in html and 'data-expires="2026-11-30T12:10:00Z"' in html
    assert ">5:00<" in html and "&lt;b&gt;nightly" in html
    assert 'data-ticket="tkt_1"' in html and "bob waits" in html


def test_a_claims_drift_and_predicted_conflicts_show_on_its_card_and_in_its_room() -> None:
    a, c = claim("a", ["src/calc.py"]), claim("c", ["src/other.py"])
    hunk = {"path": "src/calc.py", "line": 2, "text": "<<<<<<< a\n<b>x</b>\n>>>>>>> c"}
    conflict = {"against": "c", "files": ["src/calc.py"], "symbols": [], "hunks": [hunk]}
    meeting = {
        "id": "mtg_1",
        "repo": "project",
        "status": "open",
        "revision": 1,
        "participants": ["c", "a"],
        "contestedTargets": [{"target": "src/calc.py", "claimIds": ["a", "c"], "reason": "x"}],
        "proposals": [],
        "deadline": "2026-11-30T12:15:00Z",
        "resolution": None,
        "options": ["serialize"],
        "arbitrators": [],
        "escalation": None,
        "notices": [],
        "mergeConflicts": [{**conflict, "claimIds": ["a", "c"]}],
        "createdAt": "2026-11-30T12:00:00Z",
        "updatedAt": "2026-11-30T12:00:00Z",
    }
    checks = {
        "a": {
            "mergeCheck": {"head": "f" * 40, "conflicts": [conflict], "checked": ["c"]},
            "drifted": ["docs/notes.md"],
        }
    }
    snapshot = Snapshot(
        now="2026-11-30T12:05:00Z",
        seq=7,
        repos=[{"name": "project", "path": None, "defaultBranch": "main"}],
        claims=[a, c],
        meetings=[meeting],
        checks=checks,
    )

    panels = render.render_panels(render.context(snapshot, {}), ["claims", "meetings"])

    card = panels["claims"][panels["claims"].index('id="claim-a"') :]
    card = card[: card.index("</li>")]
    assert "<code>docs/notes.md</code>" in card
    assert "conflicts with <code>c</code> in src/calc.py" in card
    assert "Predicted merge conflicts" in panels["meetings"]
    assert "&lt;b&gt;x&lt;/b&gt;" in panels["meetings"]  # the hunk is escaped text


def test_the_agents_panel_shows_how_far_a_sessions_notices_went() -> None:
    agent = {
        "sessionId": "claude-S1",
        "agentName": "claude",
        "status": "active",
        "intent": "",
        "branch": None,
        "updatedAt": "2026-11-30T12:04:00Z",
        "claimIds": ["a"],
        "notices": {"deliveredUpTo": 42, "seenUpTo": 40},
    }
    snapshot = _snapshot(claim("a", ["x"]))
    snapshot.agents.append(agent)

    html = render.render_panels(render.context(snapshot, {}), ["agents"])["agents"]

    assert "notices delivered to #42, seen to #40" in html
