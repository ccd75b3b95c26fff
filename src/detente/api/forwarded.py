"""``X-Forwarded-Host`` from a trusted reverse proxy (``detente serve --behind-proxy``).

uvicorn's ``--proxy-headers`` applies ``X-Forwarded-Proto`` (the scheme) and
``X-Forwarded-For`` (the client address) but not the host: a proxy that rewrites
``Host`` to its upstream's address (nginx's default) would leave the server believing it
is ``127.0.0.1:7420``. Then a signed request's ``@target-uri`` (RFC 9421), which the agent
computed from the public URL, would not verify, the browser-origin check would refuse the
server's own pages, and the protected-resource metadata would name the wrong resource.
:class:`ForwardedHostMiddleware` puts the proxy's ``X-Forwarded-Host`` (the first, i.e.
the client-facing, value) into ``Host``. It is installed only behind a proxy: a server
reached directly never trusts the header.
"""

from __future__ import annotations

import re
from typing import Final

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["ForwardedHostMiddleware"]

_HEADER: Final = b"x-forwarded-host"
#: A host with an optional port (RFC 3986 reg-name / IPv4 / bracketed IPv6): anything
#: else in the header is ignored rather than trusted.
_HOST: Final = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-_~]+)(:[0-9]{1,5})?")


class ForwardedHostMiddleware:
    """Replace ``Host`` with the first ``X-Forwarded-Host`` value of each HTTP request.

    Args:
        app: the application.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = list(scope.get("headers", []))
            forwarded = next((v for k, v in headers if k.lower() == _HEADER), None)
            if forwarded is not None:
                first = forwarded.decode("latin-1").split(",")[0].strip()
                if _HOST.fullmatch(first):
                    headers = [(k, v) for k, v in headers if k.lower() != b"host"]
                    headers.append((b"host", first.encode("latin-1")))
                    scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)
