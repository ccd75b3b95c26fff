"""The dashboard's HTTP routes (the page, its panels as fragments, the static files).

| path | result |
|---|---|
| ``GET /`` | the page (``?group=dir|owner``, ``?q=`` search) |
| ``GET /dashboard`` | redirect to ``/`` |
| ``GET /dashboard/panels?names=&group=&q=`` | ``{seq, now, panels{name: html}, search}`` |
| ``GET /dashboard/config`` | ``{auth: {required: bool}}`` (what the page needs before reading) |
| ``GET /dashboard/static/*`` | ``dashboard.css``, ``dashboard.js`` |

Every action the page takes (resolving a meeting) goes through the public ``/v1`` API, the
same one the CLI uses. Reads go through the application layer's read operations
(:mod:`detente.operations.page_reads`), never the service.
"""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, FastAPI, Query
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from detente.dashboard import render
from detente.dashboard.search import search
from detente.dashboard.source import Snapshot, claim_overlaps, now, read_snapshot
from detente.errors import ValidationError

if TYPE_CHECKING:
    from detente.operations.door import Operations

__all__ = ["mount", "router"]

GROUPS = ("dir", "owner")


def _group(value: str) -> str:
    if value not in GROUPS:
        raise ValidationError(f"group must be one of {', '.join(GROUPS)}", field="group")
    return value


def _overlaps(ops: Operations, snap: Snapshot, query: str) -> dict[str, list[dict[str, Any]]]:
    """Live overlap reports of meeting participants and of the search hits."""
    wanted: list[str] = []
    for meeting in snap.meetings:
        if meeting["status"] != "resolved":
            wanted += meeting["participants"]
    if query.strip():
        wanted += [h["claim"]["id"] for h in search(query, snap.claims, [])["claims"]]
    return {cid: claim_overlaps(ops, cid) for cid in dict.fromkeys(wanted)}


def router(ops: Operations, *, auth_required: bool = False) -> APIRouter:
    """The dashboard's routes, reading through ``ops``.

    Args:
        ops: the application layer (its read operations).
        auth_required: whether the server asks for credentials (the page then asks the
            user for a token before reading; see ``dashboard.js``).
    """
    r = APIRouter(include_in_schema=False)

    def ctx(group: str, q: str) -> dict[str, Any]:
        snap = read_snapshot(ops)
        return render.context(snap, _overlaps(ops, snap, q), group=_group(group), query=q)

    @r.get("/", response_class=HTMLResponse)
    def page(group: str = "dir", q: Annotated[str, Query(max_length=500)] = "") -> HTMLResponse:
        if auth_required:
            # Served to anyone (a browser cannot send a token with a navigation): the shell
            # holds no record; the page asks for a token, then reads /dashboard/panels.
            empty = Snapshot(now=now(ops), seq=0, repos=[], claims=[], meetings=[])
            return HTMLResponse(
                render.render_page(render.context(empty, {}, group=_group(group), query=q))
            )
        return HTMLResponse(render.render_page(ctx(group, q)))

    @r.get("/dashboard")
    def dashboard() -> RedirectResponse:
        return RedirectResponse("/", status_code=307)

    @r.get("/dashboard/config")
    def config() -> dict[str, Any]:
        return {"auth": {"required": auth_required}}

    @r.get("/dashboard/panels")
    def panels(
        names: str = ",".join(render.PANELS),
        group: str = "dir",
        q: Annotated[str, Query(max_length=500)] = "",
    ) -> dict[str, Any]:
        context = ctx(group, q)
        wanted = [n for n in names.split(",") if n]
        unknown = [n for n in wanted if n not in render.PANELS]
        if unknown:
            raise ValidationError(
                f"unknown panel {unknown[0]!r} (panels: {', '.join(render.PANELS)})",
                field="names",
            )
        return {
            "seq": context["seq"],
            "now": context["now"],
            "panels": render.render_panels(context, wanted),
            "search": render.render_search(context) if q.strip() else None,
        }

    return r


def mount(app: FastAPI, ops: Operations, *, auth_required: bool = False) -> None:
    """Serve the dashboard from ``app`` at ``/`` (routes and static files).

    Args:
        app: the HTTP app (its ``/v1`` API is what the page calls for actions).
        ops: the application layer the page reads through.
        auth_required: see :func:`router`.
    """
    app.include_router(router(ops, auth_required=auth_required))
    static = files("detente.dashboard").joinpath("static")
    app.mount(render.STATIC_PREFIX, StaticFiles(directory=str(static)), name="dashboard-static")
