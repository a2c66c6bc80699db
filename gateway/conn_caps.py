"""WebSocket connection caps of one gateway process, in memory: per client IP and in all. A
socket over a cap is closed 1013 (try again later) with a reason, right after it is accepted."""

from __future__ import annotations

from collections import Counter


class ConnectionCaps:
    def __init__(self, per_ip: int, total: int) -> None:
        self.per_ip = per_ip
        self.total = total
        self.by_ip: Counter[str] = Counter()
        self.count = 0

    def admit(self, ip: str) -> str | None:
        """Count the connection in and return None, or return why it is refused."""
        if self.by_ip[ip] >= self.per_ip:
            return "too many connections from your address"
        if self.count >= self.total:
            return "this gateway is full, retry later"
        self.by_ip[ip] += 1
        self.count += 1
        return None

    def release(self, ip: str) -> None:
        self.count -= 1
        self.by_ip[ip] -= 1
        if self.by_ip[ip] <= 0:
            del self.by_ip[ip]
