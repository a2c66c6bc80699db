"""Room for new tables, judged before Ray is asked, so that a crashed table never waits behind one.

Ray keeps an actor it cannot place waiting (PENDING_CREATION), and when a `table_slot` frees it
may give it to that waiting newcomer before an actor restarting after a crash: on a full
cluster, a table whose process died would then wait for some other table to end
(`tests/cluster/test_full.py` shows it). So gateways start a new table actor only while the
cluster has more free slots than a reserve, and the directory kills a new actor that is not
placed in time rather than leave it in Ray's queue. Restarts never pass through here.

A cluster that can still grow (Kubernetes, with Ray's autoscaler: `max_slots` above what it
offers now) is the exception: there, new tables waiting in Ray are the demand that adds a
worker, so they are let through, and a crashed table waits at most for that worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import ray

SLOTS_FRESH_S = 1.0  # how old a reading of the free slots may be


def table_slots() -> tuple[float, float]:
    """The cluster's free and total `table_slot`s, as Ray's control store last heard."""
    free: dict[str, float] = ray.available_resources()  # type: ignore[no-untyped-call]
    total: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    return free.get("table_slot", 0.0), total.get("table_slot", 0.0)


class Slots:
    """A gateway's view of the free slots: read at most every `fresh_s` seconds, and lowered
    by every actor it grants in between, so a burst of new tables cannot overshoot the reserve
    on one stale reading. Other gateways' grants show at the next reading, which the reserve
    covers."""

    def __init__(
        self,
        reserve: int,
        max_slots: int = 0,
        fresh_s: float = SLOTS_FRESH_S,
        read: Callable[[], tuple[float, float]] = table_slots,
    ) -> None:
        self.reserve = reserve
        self.max_slots = max_slots  # what the autoscaler may grow the cluster to (0: no growth)
        self.fresh_s = fresh_s
        self._read = read
        self._free = 0.0
        self._total = 0.0
        self._read_at = float("-inf")
        self._lock = asyncio.Lock()

    @property
    def can_grow(self) -> bool:
        """Whether the autoscaler may still add slots (as of the last reading)."""
        return self._total < self.max_slots

    async def room(self, wanted: int) -> int:
        """How many new table actors (at most `wanted`) may start now; they count as taken."""
        async with self._lock:
            loop = asyncio.get_running_loop()
            if loop.time() - self._read_at >= self.fresh_s:
                # A control-store call: off the event loop, which serves every player here.
                self._free, self._total = await asyncio.to_thread(self._read)
                self._read_at = loop.time()
            if self.can_grow:
                return wanted
            granted = max(0, min(wanted, int(self._free) - self.reserve))
            self._free -= granted
            return granted
