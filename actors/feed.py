"""A table's published events and the gateways that follow them.

Every event the engine produces gets the table's next `seq` and is kept in a bounded log. Each
gateway follows a table through one subscription (a Ray streaming generator): it is woken when
events are published, takes everything past what it was last sent, and yields one batch. Events
that a gateway's own command caused travel back in that command's reply instead, so they are left
out of its stream (`origin`); a fresh subscription replays everything after the seq it names.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.events import Scope

LOG_LENGTH = 1024
LEASE_S = 30.0  # a subscription not renewed for this long ends: its gateway is gone

# (seq, scope, index, wire event, at, origin, holders): tuples pickle small and fast through
# Ray. `holders` are the players a private event (scope seat or team) may reach: those who held
# its seats when it happened; () for public events (R30).
Entry = tuple[int, Scope, int, dict[str, Any], int, str, tuple[str, ...]]


def entry_seq(e: Entry) -> int:
    return e[0]


def entry_from_json(raw: list[Any]) -> Entry:
    """An entry read back from Redis (JSON turns tuples into lists). Entries saved before
    holders existed get none: their private events then reach nobody rather than anybody."""
    seq, scope, index, wire, at, origin = raw[:6]
    holders = tuple(str(p) for p in raw[6]) if len(raw) > 6 else ()
    return (int(seq), scope, int(index), dict(wire), int(at), str(origin), holders)


@dataclass
class Subscriber:
    gateway: str
    sent: int
    lease_until: float = field(default_factory=lambda: time.monotonic() + LEASE_S)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    ended: bool = False  # replaced by a newer subscription, or cancelled

    def renew(self) -> None:
        self.lease_until = time.monotonic() + LEASE_S


class Feed:
    def __init__(self, seq: int = 0, log: Iterable[Entry] = ()) -> None:
        self.seq = seq  # last seq assigned
        self.published = seq  # last seq whose state is persisted (or given up on) and visible
        self.log: deque[Entry] = deque(log, maxlen=LOG_LENGTH)
        self.subs: dict[str, Subscriber] = {}

    def append(
        self,
        scope: Scope,
        index: int,
        wire: dict[str, Any],
        at: int,
        origin: str,
        holders: tuple[str, ...] = (),
    ) -> Entry:
        self.seq += 1
        entry: Entry = (self.seq, scope, index, wire, at, origin, holders)
        self.log.append(entry)
        return entry

    def publish(self, upto: int) -> None:
        if upto <= self.published:
            return
        self.published = upto
        for sub in self.subs.values():
            sub.wake.set()

    def since(self, after: int, upto: int, skip_origin: str | None = None) -> list[Entry]:
        out: list[Entry] = []
        for e in reversed(self.log):
            if e[0] <= after:
                break
            if e[0] <= upto and (skip_origin is None or e[5] != skip_origin):
                out.append(e)
        out.reverse()
        return out

    def covers(self, after: int) -> bool:
        """Whether the log still holds every event after `after`."""
        return after >= self.seq or (bool(self.log) and self.log[0][0] <= after + 1)

    def subscribe(self, gateway: str, after: int) -> Subscriber:
        old = self.subs.get(gateway)
        if old is not None:
            old.ended = True
            old.wake.set()
        sub = Subscriber(gateway=gateway, sent=after)
        self.subs[gateway] = sub
        return sub

    def drop(self, sub: Subscriber) -> bool:
        """Forget `sub`; True when it was still the gateway's current subscription."""
        if self.subs.get(sub.gateway) is sub:
            del self.subs[sub.gateway]
            return True
        return False
