"""The ``etcd://`` store URL: endpoints, key prefix and the cluster's transaction limit."""

from __future__ import annotations

from urllib.parse import parse_qs

from detente.errors import ValidationError

__all__ = ["MAX_TXN_OPS", "parse_etcd_url", "parse_max_txn_ops"]

#: etcd's default ``--max-txn-ops``: the most operations one Txn may hold.
MAX_TXN_OPS = 128


def parse_etcd_url(url: str) -> tuple[list[tuple[str, int]], str]:
    """``etcd://h1:p1,h2:p2/prefix[?max_txn_ops=N]`` -> ``([(h1, p1), (h2, p2)], "prefix")``.

    Raises:
        ValidationError: ``validation_error`` when no endpoint or a bad port is given.
    """
    rest = url.removeprefix("etcd://").partition("?")[0]
    hosts, _, prefix = rest.partition("/")
    endpoints: list[tuple[str, int]] = []
    for item in filter(None, hosts.split(",")):
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValidationError(f"etcd endpoint {item!r} must be host:port", field="store")
        endpoints.append((host, int(port)))
    if not endpoints:
        raise ValidationError("etcd URL needs endpoints: etcd://host:port,...", field="store")
    return endpoints, prefix.strip("/") or "detente"


def parse_max_txn_ops(url: str) -> int:
    """The ``max_txn_ops`` query option of an etcd URL (the cluster's ``--max-txn-ops``;
    default :data:`MAX_TXN_OPS`, etcd's own default).

    Raises:
        ValidationError: ``validation_error`` when it is not a number from 8 up.
    """
    options = parse_qs(url.partition("?")[2])
    raw = options.get("max_txn_ops", [str(MAX_TXN_OPS)])[-1]
    if not raw.isdigit() or int(raw) < 8:
        raise ValidationError(f"max_txn_ops must be a number >= 8, not {raw!r}", field="store")
    return int(raw)
