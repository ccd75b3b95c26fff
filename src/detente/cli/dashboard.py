"""``detente dashboard``: open the running server's live dashboard in the default browser."""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from detente.cli.context import JsonFlag, Session, run

__all__ = ["dashboard_command"]

_PROBE_SECONDS = 2.0


def dashboard_command(
    ctx: typer.Context,
    no_open: Annotated[
        bool, typer.Option("--no-open", help="Only print the URL; do not start a browser.")
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Open the live dashboard of a running server (``detente serve``) in the browser.

    The server is ``--server URL`` / ``$DETENTE_URL``, else http://127.0.0.1:7420. It must be
    running: the dashboard is served by it at ``/``. Exit code 9 when nobody answers.
    """

    def body(session: Session) -> int:
        import httpx

        from detente.client.connect import DEFAULT_URL, URL_ENV
        from detente.errors import StoreError

        base = (session.settings.server or os.environ.get(URL_ENV) or DEFAULT_URL).rstrip("/")
        try:
            health = httpx.get(f"{base}/healthz", timeout=_PROBE_SECONDS).json()
        except (httpx.HTTPError, ValueError):
            health = None
        if not isinstance(health, dict) or health.get("ok") is not True:
            raise StoreError(
                f"no detente server answers at {base}: start one with `detente serve --repo .` "
                "(or name it with --server URL)"
            )
        url = f"{base}/"
        opened = False
        if not no_open:
            import webbrowser

            opened = webbrowser.open(url)
        data: dict[str, Any] = {"url": url, "opened": opened}

        def text(console: Any) -> None:
            verb = "opened" if opened else "open"
            console.print(f"dashboard: {verb} {url}", markup=False)

        session.out.emit(data, text)
        return 0

    run(ctx, json_flag, body)
