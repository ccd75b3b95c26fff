"""Which host names a server answers to, and the origin signed requests are checked against.

A browser page served from ``attacker.example`` whose name an attacker makes resolve to
127.0.0.1 (DNS rebinding) reaches a loopback server with ``Host: attacker.example``; the
browser treats the answers as same-origin to the attacker's page. A server that answers
only to its own names refuses such a request before any route runs. The names come
from configuration, never from the request: the loopback names by default
(:data:`LOOPBACK_NAMES`, plus any 127.0.0.0/8 or ``::1`` literal), and the host of
``detente serve --public-url`` when given.

The same configuration is the origin a signed request (RFC 9421 ``@target-uri``) must
name: the public URL's origin for a request addressed to the public name, and for a
loopback name the scheme and the *listening* port of the server (not the port the
client's ``Host`` claims), so a request signed for another server verifies nowhere else.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from detente.errors import ValidationError

__all__ = ["LOOPBACK_NAMES", "HostPolicy", "host_name", "is_loopback_name"]

#: Host names every server answers to (lower case, IPv6 without brackets).
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def host_name(host: str) -> str:
    """The name part of a ``Host`` value, lower case: ``[::1]:7420`` -> ``::1``,
    ``Example.org:443`` -> ``example.org``, ``localhost.`` -> ``localhost``."""
    value = host.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def _port(host: str) -> int | None:
    value = host.strip()
    tail = value.rpartition("]")[2] if value.startswith("[") else value
    if tail.count(":") != 1:
        return None
    digits = tail.partition(":")[2]
    return int(digits) if digits.isdigit() else None


def is_loopback_name(name: str) -> bool:
    """Whether ``name`` (see :func:`host_name`) is ``localhost`` or a loopback address."""
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HostPolicy:
    """The host names a server answers to and its public origin.

    Attributes:
        public_origin: ``scheme://host[:port]`` of ``--public-url`` (lower case, no path),
            or None for a server reached on loopback names only.
        extra_names: further host names answered to (a non-loopback ``--host`` address).
    """

    public_origin: str | None = None
    extra_names: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_public_url(cls, url: str | None, *, bound: str | None = None) -> HostPolicy:
        """The policy of ``--public-url URL`` (and of a non-loopback ``--host`` address).

        Raises:
            ValidationError: ``validation_error`` (field ``public-url``) for a URL that is
                not ``http(s)://host[:port]`` with an optional ``/`` path.
        """
        extra = set()
        if bound is not None and host_name(bound) not in ("0.0.0.0", "::", ""):
            extra.add(host_name(bound))
        if url is None:
            return cls(None, frozenset(extra))
        parts = urlsplit(url.strip())
        if (
            parts.scheme not in ("http", "https")
            or not parts.hostname
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
            or parts.username is not None
        ):
            raise ValidationError(
                f"--public-url must be http(s)://host[:port], got {url!r}", field="public-url"
            )
        return cls(f"{parts.scheme}://{parts.netloc}".lower(), frozenset(extra))

    @property
    def public_name(self) -> str | None:
        """The host name of the public origin, if any."""
        if self.public_origin is None:
            return None
        return host_name(self.public_origin.partition("://")[2])

    def allows(self, host: str | None) -> bool:
        """Whether a request with this ``Host`` value is addressed to this server. A
        request without one (HTTP/1.0) is: a browser always sends the page's host."""
        if host is None:
            return True
        name = host_name(host)
        return is_loopback_name(name) or name == self.public_name or name in self.extra_names

    def origin(self, host: str, *, scheme: str, port: int | None) -> str:
        """The origin a request with ``Host: host`` (already :meth:`allowed <allows>`) is
        addressed to: the public origin for the public name; otherwise ``scheme`` with
        the host's name and the server's listening ``port`` (the ``Host``'s own port
        when the server's is unknown).

        Returns:
            ``scheme://host[:port]``, lower case.
        """
        name = host_name(host)
        if self.public_origin is not None and name == self.public_name:
            return self.public_origin
        shown = f"[{name}]" if ":" in name else name
        used = port if port is not None else _port(host)
        default = 443 if scheme == "https" else 80
        return f"{scheme}://{shown}" + (f":{used}" if used not in (None, default) else "")
