"""The tables the users of one Locust process form among themselves (a swap is timed at the
other seats of the same process, `swap→seen`), and the swaps in flight they time."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from gevent.event import AsyncResult, Event

GROUP_WAIT_S = 120.0  # a group that does not fill (or connect) within this is abandoned
SEEN_TTL_S = 30.0


@dataclass
class Group:
    """The users of one table. Seat i is the i-th member; member 0 creates and hosts."""

    players: int
    members: int = 0
    code: AsyncResult = field(default_factory=AsyncResult)
    connected: set[int] = field(default_factory=set)
    all_connected: Event = field(default_factory=Event)
    started: bool = False
    live_since: float | None = None  # epoch s: when its host started the match
    closed: bool = False


class Lobby:
    def __init__(self) -> None:
        self.forming: dict[int, Group] = {}
        self.groups: list[Group] = []
        self.connected = 0  # sockets past welcome in this process

    def join(self, players: int) -> tuple[Group, int]:
        g = self.forming.get(players)
        if g is None or g.members >= players or g.closed:
            g = self.forming[players] = Group(players)
            self.groups.append(g)
        seat = g.members
        g.members += 1
        return g, seat

    def live_tables(self) -> int:
        self.groups = [g for g in self.groups if not g.closed]
        return sum(1 for g in self.groups if g.started)


LOBBY = Lobby()


class SeenBoard:
    """Swaps sent by users of this process, so that the other seats' sockets can time when they
    see them: key (table, seat, card put down, slot, card taken) → when it was sent."""

    def __init__(self) -> None:
        self.sent: dict[tuple[str, int, str, int, str], float] = {}

    def put(self, key: tuple[str, int, str, int, str]) -> None:
        self.sent[key] = time.perf_counter()

    def drop(self, key: tuple[str, int, str, int, str]) -> None:
        self.sent.pop(key, None)

    def seen(self, key: tuple[str, int, str, int, str]) -> float | None:
        at = self.sent.get(key)
        return None if at is None else (time.perf_counter() - at) * 1000

    def expire(self) -> None:
        limit = time.perf_counter() - SEEN_TTL_S
        self.sent = {k: v for k, v in self.sent.items() if v >= limit}


SEEN = SeenBoard()
