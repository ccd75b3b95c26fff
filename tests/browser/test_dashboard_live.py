"""The dashboard in a real browser against a real ``detente serve`` on a real repository.

Every wait is bounded (Playwright's ``expect`` with a timeout); nothing sleeps.
"""

from __future__ import annotations

import json
import re
from typing import Any

from browser_harness import Server
from playwright.sync_api import Page, expect
from typer.testing import CliRunner

from detente.cli.main import app


def _open_live(page: Page, server: Server, path: str = "/") -> list[str]:
    """Load the dashboard, wait until its stream is live; returns the list that collects
    every request leaving the server's origin."""
    external: list[str] = []
    page.on(
        "request",
        lambda req: None if req.url.startswith(server.url) else external.append(req.url),
    )
    page.goto(server.url + path)
    expect(page.locator("#live")).to_have_attribute("data-state", "live", timeout=10_000)
    # Going live schedules a catch-up refresh that swaps the panels: a form touched while
    # that swap lands would be touched in the replaced copy (a person is never that fast).
    expect(page.locator("body")).to_have_attribute("data-refreshed", re.compile(r"^\d+$"))
    page.evaluate("window.__sameDocument = true")
    return external


def _claim(page: Page, claim_id: str) -> Any:
    return page.locator(f'li.claim[data-claim-id="{claim_id}"]')


def _overlap(server: Server) -> tuple[str, str, dict[str, Any]]:
    """Claim A holds ``src/app/**``; B asks for ``src/app/api.py`` and negotiates."""
    a = server.open_claim("rework app retry behaviour", ["src/app/**"], "alpha")["claim"]["id"]
    opened = server.open_claim("fix api contract", ["src/app/api.py"], "beta")
    assert opened["claim"]["status"] == "negotiating"
    return a, opened["claim"]["id"], opened["meeting"]


def test_a_claim_opened_through_the_api_appears_without_a_reload_and_its_lease_timer_counts_down(
    page: Page, server: Server
) -> None:
    external = _open_live(page, server)
    expect(page.locator("#panel-claims")).to_contain_text("No live claims")

    claim = server.open_claim("retry settlement payments", ["src/app/**"], "alpha")["claim"]

    card = _claim(page, claim["id"])
    expect(card).to_be_visible(timeout=2_000)
    expect(card).to_contain_text("retry settlement payments")
    expect(card.locator(".badge")).to_have_attribute("data-status", "active")
    timer = card.locator(".lease")
    expect(timer).to_have_attribute("data-left", re.compile(r"^\d+$"))
    first = int(timer.get_attribute("data-left") or "0")
    assert 0 < first <= 600
    expect(timer).not_to_have_attribute("data-left", str(first), timeout=5_000)
    assert int(timer.get_attribute("data-left") or "0") < first
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"
    assert external == [], f"requests left the server: {external}"


def test_an_overlap_shows_a_meeting_with_the_contested_target_and_its_witness(
    page: Page, server: Server
) -> None:
    _open_live(page, server)

    a, b, meeting = _overlap(server)

    room = page.locator(f'article.meeting[data-meeting-id="{meeting["id"]}"]')
    expect(room).to_be_visible(timeout=5_000)
    expect(room.locator(".contested .target")).to_have_text("src/app/**")
    expect(room.locator(".contested .witness")).to_contain_text("src/app/api.py")
    expect(room.locator(f'[data-claim-ref="{a}"]')).to_contain_text("active")
    expect(room.locator(f'[data-claim-ref="{b}"]')).to_contain_text("negotiating")
    expect(_claim(page, b).locator(".badge")).to_have_attribute("data-status", "negotiating")


def test_an_arbitrator_resolves_an_escalated_meeting_from_the_page_and_both_claims_change_status(
    page: Page, server: Server
) -> None:
    a, b, meeting = _overlap(server)
    server.post(
        f"/v1/meetings/{meeting['id']}/proposals",
        {
            "expectedMeetingRevision": meeting["revision"],
            "claimId": b,
            "resolution": {"type": "human_arbitration"},
        },
    )
    _open_live(page, server)
    room = page.locator(f'article.meeting[data-meeting-id="{meeting["id"]}"]')
    expect(room).to_have_attribute("data-status", "escalated")
    expect(room.locator(".arbitrator")).to_have_text("@alice")
    expect(_claim(page, a).locator(".badge")).to_have_attribute("data-status", "blocked")

    form = room.locator("form.resolve")
    form.get_by_label("Your name").fill("@alice")
    form.get_by_label("serialize").check()
    form.get_by_label("first").select_option(b)
    form.get_by_label("then").select_option(a)
    form.get_by_role("button", name="Resolve meeting").click()

    expect(_claim(page, b).locator(".badge")).to_have_attribute("data-status", "active")
    expect(_claim(page, a).locator(".badge")).to_have_attribute("data-status", "suspended")
    expect(page.locator(f"#meeting-{meeting['id']}")).to_have_attribute("data-status", "resolved")
    resolved = server.get(f"/v1/meetings/{meeting['id']}")["meeting"]
    assert resolved["resolution"]["type"] == "serialize"
    assert resolved["resolution"]["resolvedBy"] == "@alice"


def test_a_resolution_against_a_meeting_someone_else_changed_shows_the_conflict_and_reloads(
    page: Page, server: Server
) -> None:
    a, b, meeting = _overlap(server)
    _open_live(page, server)
    room = page.locator(f'article.meeting[data-meeting-id="{meeting["id"]}"]')
    form = room.locator("form.resolve")
    form.get_by_label("Your name").fill("carol")  # the form is touched: the page keeps it
    expect(form).to_have_attribute("data-dirty", "1")  # the page saw the touch

    server.post(
        f"/v1/meetings/{meeting['id']}/proposals",
        {
            "expectedMeetingRevision": meeting["revision"],
            "claimId": b,
            "resolution": {"type": "joint", "claimIds": [a, b]},
        },
    )
    expect(room).to_have_class("meeting stale", timeout=5_000)
    form.get_by_role("button", name="Resolve meeting").click()

    outcome = form.locator(".outcome")
    expect(outcome).to_contain_text("someone else changed it: reload")
    outcome.get_by_role("button", name="Reload").click()
    fresh = page.locator(f'article.meeting[data-meeting-id="{meeting["id"]}"]')
    expect(fresh).to_have_attribute("data-version", str(meeting["revision"] + 1))
    expect(fresh).not_to_have_class("meeting stale")
    assert server.get(f"/v1/meetings/{meeting['id']}")["meeting"]["status"] == "open"


def test_a_lease_turns_amber_under_a_fifth_of_its_ttl_and_an_expired_claim_shows_as_frozen(
    page: Page, server: Server
) -> None:
    _open_live(page, server)

    claim = server.open_claim("short-lived probe", ["docs/guide.md"], "gamma", ttl=10)["claim"]

    card = _claim(page, claim["id"])
    expect(card).to_be_visible(timeout=5_000)
    expect(card.locator(".lease")).to_have_class("lease low", timeout=15_000)
    expect(card.locator(".badge")).to_have_attribute("data-status", "expired", timeout=15_000)
    expect(card.locator(".badge")).to_have_text("expired · frozen")
    expect(card.locator(".lease")).to_have_class("lease expired")


def test_the_page_survives_a_server_restart_and_resumes_the_stream(
    page: Page, server: Server
) -> None:
    _open_live(page, server)
    before = server.open_claim("before the restart", ["src/app/core.py"], "alpha")["claim"]
    expect(_claim(page, before["id"])).to_be_visible(timeout=5_000)

    server.stop()
    expect(page.locator("#live")).to_have_attribute("data-state", "reconnecting", timeout=10_000)
    server.start()
    expect(page.locator("#live")).to_have_attribute("data-state", "live", timeout=20_000)

    after = server.open_claim("after the restart", ["docs/guide.md"], "beta")["claim"]
    expect(_claim(page, after["id"])).to_be_visible(timeout=5_000)
    expect(_claim(page, before["id"])).to_be_visible()
    assert page.evaluate("window.__sameDocument") is True, "the page reloaded"


def test_claims_group_by_codeowners_owner_on_the_toggle(page: Page, server: Server) -> None:
    server.open_claim("app work", ["src/app/**"], "alpha")
    server.open_claim("docs work", ["docs/guide.md"], "beta")
    _open_live(page, server)
    titles = page.locator("#panel-claims h3.group")
    expect(titles).to_have_text(["docs/", "src/"])

    page.get_by_label("CODEOWNERS").check()

    expect(titles).to_have_text(["@alice", "@bob"])


def test_search_finds_claims_by_objective_with_their_symbolic_overlaps(
    page: Page, server: Server
) -> None:
    a, b, _ = _overlap(server)
    _open_live(page, server)

    page.get_by_label("Search claims, targets, contracts, memory").fill("retry")
    page.keyboard.press("Enter")

    hits = page.locator("#panel-search [data-hit-claim]")
    expect(hits).to_have_count(1)
    expect(hits.first).to_have_attribute("data-hit-claim", a)
    expect(hits.first.locator(".overlaps")).to_contain_text(b)


def test_the_page_fits_a_390_px_wide_screen(page: Page, server: Server) -> None:
    _overlap(server)
    page.set_viewport_size({"width": 390, "height": 844})
    _open_live(page, server)
    expect(page.locator("article.meeting")).to_be_visible()

    overflow = page.evaluate("document.documentElement.scrollWidth")

    assert overflow <= 390


def test_detente_dashboard_names_the_page_of_the_running_server(page: Page, server: Server) -> None:
    result = CliRunner().invoke(app, ["--server", server.url, "dashboard", "--no-open", "--json"])
    assert result.exit_code == 0, result.output
    url = json.loads(result.stdout)["url"]
    assert url == server.url + "/"

    page.goto(url)

    expect(page.get_by_role("heading", name="Claims")).to_be_visible()
    expect(page.locator("#live")).to_have_attribute("data-state", "live", timeout=10_000)


def test_the_resources_panel_shows_a_grant_and_the_waiter_it_hands_over_to_without_a_reload(
    page: Page, server: Server
) -> None:
    _open_live(page, server)
    panel = page.locator("#panel-resources")
    expect(panel).to_contain_text("No shared resource in use")

    held = server.post("/v1/resources/build/acquire", {"ttlSeconds": 600, "note": "nightly"})
    server.post("/v1/resources/build/acquire", {"ttlSeconds": 600, "wait": True})

    card = panel.locator('.resource[data-resource="build"]')
    expect(card.locator(".slots")).to_have_text("1 of 1 held", timeout=2_000)
    expect(card.locator(".waiter")).to_have_count(1)
    token = held["grant"]["fencingToken"]
    timer = card.locator(f'.holder[data-token="{token}"] .lease')
    expect(timer).to_have_attribute("data-left", re.compile(r"^\d+$"))
    assert 0 < int(timer.get_attribute("data-left") or "0") <= 600

    server.post("/v1/resources/build/release", {"fencingToken": token})

    expect(card.locator(".waiter")).to_have_count(0, timeout=2_000)
    expect(card.locator(f'.holder[data-token="{token}"]')).to_have_count(0)
    expect(card.locator(".holder")).to_have_count(1)
    assert page.evaluate("window.__sameDocument") is True
