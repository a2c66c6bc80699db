"""Who watches a table, and the watchers' requests for a bot's seat (joining late).

Watchers are counted two ways: the connections a gateway of before spectators-by-gateway joined
one by one (connection id -> gateway; and -> player, so that joining late reaches them), and
each gateway's own count of the watchers it serves from a shared view. The count is announced
to the table at most every WATCHING_ANNOUNCE_S: a crowd arriving must not become an event per
spectator for every player and spectator.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from actors.applied import Applied
from actors.orders import CLOSE_SEAT_GIVEN, Order, Unwatch
from actors.protocol import Entry
from actors.tasks import Tasks
from engine import CancelClaim, Command, Table

# How long a request for a bot's seat outlives its claimant's last watching connection (scaled
# by the table's time_scale): a reload or a network change is back well within it.
CLAIM_GRACE_S = 20.0
WATCHING_ANNOUNCE_S = float(os.environ.get("QUATRO_WATCHING_ANNOUNCE", "2"))

R = TypeVar("R")


class Watched(Protocol):
    """What the watchers need of their table."""

    table: Table | None
    tasks: Tasks

    def now(self) -> int: ...

    def apply(self, command: Command, now: int, origin: str = "") -> Applied: ...

    def announce(self, wire: dict[str, Any], now: int) -> list[Entry]: ...

    def close_conn(self, conn: str, code: int, now: int) -> Entry: ...

    def order(self, order: Order, now: int) -> Entry: ...

    async def change(
        self, step: Callable[[], R], *, touch: bool, save: Callable[[R], bool] | None = None
    ) -> R: ...


class Watchers:
    def __init__(self, core: Watched) -> None:
        self.core = core
        self.conns: dict[str, str] = {}  # watching connection id -> its gateway
        self.player_of: dict[str, str] = {}  # watching connection id -> its player
        self.at: dict[str, int] = {}  # gateway -> how many it serves from a shared view
        self.told = 0  # the count last announced to the table
        self._announcing: asyncio.Task[None] | None = None
        self._claim_checks: dict[str, asyncio.Task[None]] = {}  # player -> their grace

    def count(self) -> int:
        return len(self.conns) + sum(self.at.values())

    def watches(self, player_id: str) -> bool:
        return player_id in self.player_of.values()

    def join(self, conn: str, gateway: str, player_id: str) -> None:
        self.conns[conn] = gateway
        self.player_of[conn] = player_id
        self.changed()

    def changed(self) -> None:
        """Announce the new count later, once, whatever arrives meanwhile."""
        if self._announcing is None or self._announcing.done():
            self._announcing = self.core.tasks.spawn(self._announce(), "announce-watching")

    async def _announce(self) -> None:
        await asyncio.sleep(WATCHING_ANNOUNCE_S)
        core = self.core
        count = self.count()
        if core.table is None or count == self.told:
            return
        self.told = count
        wire = {"type": "watching", "count": count}
        await core.change(lambda: core.announce(wire, core.now()), touch=False)

    def counted(self, gateway: str, count: int) -> None:
        """A gateway's own count of the watchers it serves (asked with Views)."""
        t = self.core.table
        count = max(0, count) if t is not None and t.settings.watchers else 0
        if count:
            self.at[gateway] = count
        else:
            self.at.pop(gateway, None)
        self.changed()

    def gateway_left(self, gateway: str) -> None:
        """Its hub stopped (or it is gone): none of its watchers is left."""
        if self.at.pop(gateway, None) is not None:
            self.changed()

    def gateway_gone(self, gateway: str, now: int) -> list[Entry]:
        """It died without saying so: each connection that watched through it left."""
        entries = []
        for conn, origin in list(self.conns.items()):
            if origin == gateway:
                entries += self.stop_watching(conn, now)
        self.gateway_left(gateway)
        return entries

    def seat_given(self, player_id: str, now: int) -> list[Entry]:
        """Joining late: a bot's seat became `player_id`'s. Their watching connections close
        (4411) so that they say hello again and take it; nothing of the seat reached them as
        watchers (R30), and only their new connection will get it."""
        entries = []
        for conn, player in list(self.player_of.items()):
            if player == player_id:
                del self.player_of[conn]
                self.conns.pop(conn, None)
                entries.append(self.core.close_conn(conn, CLOSE_SEAT_GIVEN, now))
        return entries

    def stop_watching(self, conn: str, now: int, at_once: bool = False) -> list[Entry]:
        """A watcher left. Their request for a bot's seat ends with their last watching
        connection (nobody would be there to take the seat): `at_once`, or once they have not
        come back within CLAIM_GRACE_S (a reload, a phone switching networks)."""
        self.conns.pop(conn, None)
        player = self.player_of.pop(conn, None)
        self.changed()
        t = self.core.table
        if player is None or t is None or self.watches(player):
            return []
        if t.claim_of(player) is None:
            return []
        if not at_once:
            self._end_claim_later(player)
            return []
        return self.core.apply(CancelClaim(seat=-1, player_id=player), now).entries

    def close_all(self, now: int) -> list[Entry]:
        """The host closed the table to watchers: every gateway closes its watching connections
        (4412), their requests for a bot's seat end with them, and the count starts again from
        nobody."""
        entries = []
        for conn in list(self.conns):
            entries += self.stop_watching(conn, now, at_once=True)
        self.at.clear()
        self.changed()
        return [*entries, self.core.order(Unwatch(), now)]

    def _end_claim_later(self, player: str) -> None:
        old = self._claim_checks.pop(player, None)
        if old is not None:
            old.cancel()
        self._claim_checks[player] = self.core.tasks.spawn(
            self._end_claim_after_grace(player), "claim-grace"
        )

    async def _end_claim_after_grace(self, player: str) -> None:
        core = self.core
        t = core.table
        assert t is not None
        await asyncio.sleep(CLAIM_GRACE_S * t.config.time_scale)
        if self._claim_checks.get(player) is not asyncio.current_task():
            return
        del self._claim_checks[player]
        if self.watches(player) or t.claim_of(player) is None:
            return  # back in time, or the request ended otherwise (granted, withdrawn)
        cancel = CancelClaim(seat=-1, player_id=player)
        await core.change(lambda: core.apply(cancel, core.now()).entries, touch=True)
