"""``/docs``: the API reference as one plain HTML page, built from ``/openapi.json``.

FastAPI's own ``/docs`` (Swagger UI) and ``/redoc`` load their scripts and styles from a
public CDN, so opening them makes the browser ask another server (which learns who reads
which detente, and could serve a changed script to a page of the server's origin). This
page needs nothing outside the server: no script, no remote asset; each operation is
listed with its method, path, ``operationId`` and summary, and the full schema is a link
to ``/openapi.json``. ``/redoc`` redirects here.
"""

from __future__ import annotations

import html
from typing import Any

from fastapi import FastAPI
from fastapi.responses import HTMLResponse, RedirectResponse

__all__ = ["install", "render"]

_METHODS = ("get", "post", "put", "patch", "delete")


def render(document: dict[str, Any]) -> str:
    """The reference page of an OpenAPI ``document`` (every value HTML-escaped)."""
    info = document.get("info", {})
    title = html.escape(f"{info.get('title', 'API')} {info.get('version', '')}".strip())
    rows = []
    for path, operations in sorted(document.get("paths", {}).items()):
        for method in _METHODS:
            op = operations.get(method)
            if op is None:
                continue
            summary = op.get("summary") or (op.get("description") or "").split("\n")[0]
            rows.append(
                "<tr><td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>".format(
                    method.upper(),
                    html.escape(path),
                    html.escape(str(op.get("operationId", ""))),
                    html.escape(str(summary)),
                )
            )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title></head><body><h1>{title}</h1>"
        '<p>The full schema: <a href="/openapi.json">/openapi.json</a>. Errors are '
        "<code>application/problem+json</code> with a stable <code>code</code>.</p>"
        "<table><thead><tr><th>method</th><th>path</th><th>operation</th><th>summary</th>"
        "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></body></html>\n"
    )


def install(app: FastAPI) -> None:
    """Serve :func:`render` of ``app.openapi()`` at ``/docs`` and redirect ``/redoc``.

    The app must be made with ``docs_url=None, redoc_url=None``."""

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(render(app.openapi()))

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> RedirectResponse:
        return RedirectResponse("/docs", status_code=307)
