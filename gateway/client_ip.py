"""The real client's IP address: the peer's, unless the peer is one of our trusted reverse
proxies, in which case `X-Forwarded-For` is read from the right, skipping our own proxies. The
leftmost entries are the client's to write, so they are never believed."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(c, strict=False) for c in cidrs)


def _trusted(address: str, proxies: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in proxies)


def client_ip(peer: str | None, forwarded_for: list[str], proxies: tuple[Network, ...]) -> str:
    """`forwarded_for`: every `X-Forwarded-For` header value, in order."""
    address = peer or "unknown"
    if not proxies or not _trusted(address, proxies):
        return address
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, proxies):
            return hop
        address = hop
    return address


def from_scope(scope: dict[str, object], proxies: tuple[Network, ...]) -> str:
    """The client IP of an ASGI http or websocket scope."""
    client = scope.get("client")
    peer = str(client[0]) if isinstance(client, tuple | list) and client else None
    headers = scope.get("headers") or []
    assert isinstance(headers, list)
    forwarded = [v.decode("latin-1") for k, v in headers if k == b"x-forwarded-for"]
    return client_ip(peer, forwarded, proxies)


def scheme_of(scope: dict[str, object], proxies: tuple[Network, ...]) -> str:
    """The scheme the browser used: `X-Forwarded-Proto` from a trusted proxy (TLS ended in
    front of us), else the request's own."""
    own = str(scope.get("scheme") or "http")
    client = scope.get("client")
    peer = str(client[0]) if isinstance(client, tuple | list) and client else ""
    if not proxies or not _trusted(peer, proxies):
        return own
    headers = scope.get("headers") or []
    assert isinstance(headers, list)
    for k, v in headers:
        if k == b"x-forwarded-proto":
            proto = v.decode("latin-1").split(",")[-1].strip().lower()
            return proto if proto in ("http", "https") else own
    return own
