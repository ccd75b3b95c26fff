"""Render the page and its panels from a snapshot with the Jinja2 templates.

Autoescaping is on for every template: objectives, paths and reasons are user text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from detente.clock import parse_time
from detente.dashboard import views
from detente.dashboard.search import search
from detente.dashboard.source import Snapshot

__all__ = ["PANELS", "context", "render_page", "render_panels", "render_search"]

#: Panel name -> template; the page's sections are ``panel-<name>``.
PANELS = {
    "claims": "claims.html",
    "meetings": "meetings.html",
    "patches": "patches.html",
    "memory": "memory.html",
    "deployments": "deployments.html",
    "resources": "resources.html",
    "agents": "agents.html",
}

#: Where the stylesheet and script are served.
STATIC_PREFIX = "/dashboard/static"


def duration(seconds: float) -> str:
    """``75`` -> ``1:15``, ``3725`` -> ``1:02:05`` (negative values count as 0)."""
    total = max(0, int(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def remaining(deadline: str, now: str) -> str:
    """Time left until ``deadline`` at ``now`` (both RFC 3339), or ``expired``."""
    left = (parse_time(deadline) - parse_time(now)).total_seconds()
    return duration(left) if left > 0 else "expired"


def short(oid: str | None) -> str:
    """A commit id shortened to 10 characters (``—`` for none)."""
    return oid[:10] if oid else "—"


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("detente.dashboard", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(duration=duration, remaining=remaining, short=short)
    env.globals.update(evidence_needed=views.evidence_needed, leased=views.LEASED)
    return env


_ENV = _environment()


def context(
    snap: Snapshot,
    overlaps: dict[str, list[dict[str, Any]]],
    *,
    group: str = "dir",
    query: str = "",
) -> dict[str, Any]:
    """The template variables of every panel.

    Args:
        snap: the records.
        overlaps: claim id -> live overlap report, for meeting participants and search hits.
        group: ``dir`` or ``owner`` (claims panel grouping).
        query: the search box's text ('' for no search).
    """
    claims = {c["id"]: c for c in snap.claims}
    groups, finished = views.claim_groups(snap.claims, snap.owners, group)
    live_meetings, resolved_meetings = views.meetings_view(snap.meetings, claims, overlaps)
    results = search(query, snap.claims, snap.documents) if query.strip() else None
    rooms: dict[str, list[str]] = {}
    for meeting in snap.meetings:
        if meeting["status"] != "resolved":
            for participant in meeting["participants"]:
                rooms.setdefault(participant, []).append(meeting["id"])
    return {
        "now": snap.now,
        "seq": snap.seq,
        "repos": snap.repos,
        "group": group,
        "query": query,
        "groups": groups,
        "finished": finished,
        "live_count": sum(len(g.claims) for g in groups),
        "owners": snap.owners,
        "rooms": rooms,
        "checks": snap.checks,
        "live_meetings": live_meetings,
        "resolved_meetings": resolved_meetings,
        "patches": snap.patches,
        "memory": views.memory_at_risk(snap.documents, claims),
        "deployments": views.deployments_view(snap.deployments, snap.claims),
        "resources": snap.resources,
        "agents": views.agents_view(snap.agents, claims, snap.now),
        "results": results,
        "hit_overlaps": overlaps,
        "static": STATIC_PREFIX,
    }


def render_page(ctx: dict[str, Any]) -> str:
    """The whole page (``GET /``)."""
    return _ENV.get_template("page.html").render(ctx)


def render_panels(ctx: dict[str, Any], names: Sequence[str]) -> dict[str, str]:
    """Inner HTML of the named panels (unknown names are skipped)."""
    return {n: _ENV.get_template(PANELS[n]).render(ctx) for n in names if n in PANELS}


def render_search(ctx: dict[str, Any]) -> str:
    """Inner HTML of the search panel."""
    return _ENV.get_template("search.html").render(ctx)
