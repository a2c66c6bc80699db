"""A table's saves: the last two steps of its one change path, persist then publish.

One write at a time (a lock): it writes the table as it is *now*, so commands that changed it
meanwhile coalesce into one write, and only then are subscribers let see the events up to the
seq that write covered. A Redis outage must not stop the game: what is applied is published all
the same and a task writes again until Redis is back. A save refused because the table moved to
another cell (actors/cells.py) is the end of this incarnation: nothing of it is published.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, Protocol

from actors.feed import Feed
from actors.protocol import HandedOver
from actors.store import TableStore
from actors.tasks import Tasks
from engine import Table

log = logging.getLogger("quatro.table")

RETRY_FIRST_S = 0.2  # a failed save is tried again after this, then twice as long, up to
RETRY_MOST_S = 2.0


class Saved(Protocol):
    """What the saves need of the table."""

    code: str
    version: int  # bumps with every change
    feed: Feed
    replay_ttl_s: int
    table: Table | None
    tasks: Tasks

    def now(self) -> int: ...  # the table's time, in ms

    def snapshot(self) -> dict[str, Any]: ...

    def moved(self) -> NoReturn: ...


class Saves:
    def __init__(self, table: Saved, store: TableStore) -> None:
        self.table = table
        self.store = store
        self.saved = 0  # the version in Redis
        self.stored_seq = 0  # the last seq in Redis's log
        self._lock = asyncio.Lock()
        self._retry: asyncio.Task[None] | None = None

    async def persist(self) -> None:
        """Persist the table as it is now, then let subscribers see events up to that point."""
        t = self.table
        async with self._lock:
            if self.saved >= t.version:
                t.feed.publish(t.feed.seq)
                return
            seq = t.feed.seq
            if not await self._save_now():
                if self.store.fenced:
                    t.moved()  # never published, never answered: the new incarnation is the table
                if self._retry is None or self._retry.done():
                    self._retry = t.tasks.spawn(self._retry_save(), "retry-save")
            t.feed.publish(seq)

    async def hand_over(self) -> HandedOver:
        """Before this actor is stopped to restart on another node (its node is drained): make
        sure everything applied is in Redis, where the next incarnation reads it. Every answer
        already waits for its save, so this only matters while saves are failing; `saved`
        False says the move would lose the latest changes. With nothing to save, a beat asks
        Redis whether the table is still this incarnation's: one cut off while the table moved
        into another actor learns it here (`superseded`), not after its restart."""
        t = self.table
        if t.table is None:
            return HandedOver("", True)
        async with self._lock:
            if self.saved < t.version:
                await self._save_now()
            elif not self.store.fenced:
                await self.store.beat(t.code, t.now())
            fenced = self.store.fenced
            return HandedOver(t.code, fenced or self.saved >= t.version, fenced)

    async def last(self, then: Callable[[], Awaitable[bool]]) -> bool:
        """The table's last save in this actor (it parks: actors/parking.py): written now, and
        `then` run under the same lock, so that no other save comes between the two. False,
        without `then`, when Redis did not take the save or the table changed during it (the
        park is given up: the table goes on here)."""
        t = self.table
        async with self._lock:
            version = t.version
            if not await self._save_now() or t.version != version:
                return False
            return await then()

    async def _retry_save(self) -> None:
        delay = RETRY_FIRST_S
        while self.saved < self.table.version and not self.store.fenced:
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MOST_S)
            async with self._lock:
                await self._save_now()

    async def _save_now(self) -> bool:
        """Write the table as it is (under the lock); False when Redis refused or failed. A
        log or replay found short of what this incarnation wrote (its primary lost, with writes
        its replica never got) is given the missing events again at once, while the feed
        still holds them: the table heals itself at its next save."""
        t = self.table
        assert t.table is not None
        version, seq = t.version, t.feed.seq
        new = t.feed.since(self.stored_seq, seq)
        after = self.stored_seq if self.stored_seq > 0 else -1
        players = t.table.players
        written = await self.store.write(t.code, t.snapshot(), new, players, t.replay_ttl_s, after)
        if written.ok and written.heal_from is not None:
            log.warning(
                "table %s: Redis lost its events after seq %d (a primary lost with writes its "
                "replica never got): written again",
                t.code,
                written.heal_from,
            )
            missing = t.feed.since(written.heal_from, seq)
            written = await self.store.write(t.code, t.snapshot(), missing, players, t.replay_ttl_s)
        if not written.ok:
            return False
        self.saved, self.stored_seq = version, seq
        return True
