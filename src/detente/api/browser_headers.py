"""Response headers that keep a browser from misusing the server's pages.

Every HTTP answer carries a Content-Security-Policy that lets a page load scripts, styles,
images and connections from the server itself only (the dashboard's script and
stylesheet are files under ``/dashboard/static/``; ``/docs`` is plain HTML), and forbids
framing by any other page (``frame-ancestors 'none'`` and, for older browsers,
``X-Frame-Options: DENY``): a page on another site cannot overlay the dashboard and trick
a signed-in user into clicking (clickjacking). ``nosniff`` and ``no-referrer`` complete
the set. A header the app already set is kept.
"""

from __future__ import annotations

from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CONTENT_SECURITY_POLICY", "BrowserHeadersMiddleware"]

#: The policy of every answer (CSP level 3).
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)

_HEADERS: Final = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


class BrowserHeadersMiddleware:
    """Add :data:`CONTENT_SECURITY_POLICY` and the frame, sniffing and referrer headers.

    Args:
        app: the application.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(n, v) for n, v in _HEADERS if n not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
