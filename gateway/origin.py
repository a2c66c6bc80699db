"""Which web pages may open /ws: the gateway's own origin, localhost on any port, and the
configured ones. A browser always sends `Origin` on a WebSocket; other clients (bots, Locust,
tests) send none, and a missing Origin is allowed, since only browsers carry a victim's
cookies or network position across sites."""

from __future__ import annotations

from urllib.parse import urlsplit

LOCAL = frozenset({"localhost", "127.0.0.1", "::1"})


def origin_allowed(origin: str | None, host: str | None, allowed: frozenset[str]) -> bool:
    if origin is None:
        return True
    origin = origin.strip().lower().rstrip("/")
    if origin in allowed:
        return True
    try:
        parts = urlsplit(origin)
        hostname = parts.hostname
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or hostname is None:
        return False
    if hostname in LOCAL:
        return True
    return host is not None and parts.netloc == host.strip().lower()
