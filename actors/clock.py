"""A table's own clock: it sleeps until the engine's next deadline, a bot's turn or the idle
stop, then lets time pass. A command wakes it early, since it may have moved the deadline.

The idle stop: an over table, a lobby, and a table nobody is connected to each wait their own
while (`over_idle_s` and the others, set by `TableCore.open`) after the last command, then stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from actors.applied import Applied
from actors.bots import BotDriver
from actors.protocol import Entry
from actors.tasks import Tasks
from engine import Command, Table
from engine.phase import Phase

log = logging.getLogger("quatro.table")

RESTART_AFTER_S = 1.0  # a clock that failed starts again this long after

R = TypeVar("R")


class Ticking(Protocol):
    """What the clock needs of its table."""

    code: str
    table: Table | None
    bots: BotDriver | None
    tasks: Tasks
    over_idle_s: float
    lobby_idle_s: float
    abandoned_idle_s: float
    last_activity: float  # monotonic: the last change by someone

    def now(self) -> int: ...

    def advance(self, now: int) -> list[Entry]: ...

    def apply(self, command: Command, now: int, origin: str = "") -> Applied: ...

    async def change(
        self, step: Callable[[], R], *, touch: bool, save: Callable[[R], bool] | None = None
    ) -> R: ...

    async def stop(self) -> None: ...


class Clock:
    def __init__(self, core: Ticking) -> None:
        self.core = core
        self.wake = asyncio.Event()  # set by every command: the next deadline may have moved
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = self.core.tasks.spawn(self._run(), "clock")

    async def _run(self) -> None:
        """A clock that failed is logged and started again a second later: left dead, the table
        would wait silently for a player's call that may never come."""
        while True:
            try:
                await self._loop()
                return
            except Exception:
                log.error(
                    "table %s: its clock failed; starting it again", self.core.code, exc_info=True
                )
                await asyncio.sleep(RESTART_AFTER_S)

    async def _loop(self) -> None:
        core = self.core
        while True:
            due = self.next_due(core.now())
            self.wake.clear()
            delay = None if due is None else max(0.0, (due - core.now()) / 1000)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self.wake.wait()
            now = core.now()
            idle = self.idle_due(now)
            if idle is not None and idle <= now:
                await core.stop()
                return
            await self.tick(now)

    async def tick(self, now: int) -> list[Entry]:
        """Let time pass up to `now` (the engine's deadlines, then the bots' turns), through the
        table's one change path; saved only when something happened."""
        return await self.core.change(lambda: self._advance(now), touch=False, save=bool)

    def _advance(self, now: int) -> list[Entry]:
        core = self.core
        t, bots = core.table, core.bots
        assert t is not None
        assert bots is not None
        entries = core.advance(now)
        # A bounded number of turns per tick: a policy that kept insisting could not spin.
        for _ in range(4 * t.players):
            turn = bots.next_turn(now)
            if turn is None:
                break
            bot, command = turn
            bot.sent(command, now)
            applied = core.apply(command, now)
            entries += applied.entries
            if applied.refused is not None:
                bot.refused(command, applied.refused.to_wire(), now)
        return entries

    def next_due(self, now: int) -> int | None:
        core = self.core
        assert core.table is not None
        assert core.bots is not None
        dues = [core.table.next_deadline(), core.bots.next_due(now), self.idle_due(now)]
        return min((d for d in dues if d is not None), default=None)

    def idle_due(self, now: int) -> int | None:
        core = self.core
        assert core.table is not None
        phase = core.table.phase
        if phase is Phase.OVER:
            limit = core.over_idle_s
        elif phase is Phase.LOBBY:
            limit = core.lobby_idle_s
        elif not self._anyone_connected():
            limit = core.abandoned_idle_s
        else:
            return None
        return now + int((core.last_activity + limit - time.monotonic()) * 1000)

    def _anyone_connected(self) -> bool:
        t = self.core.table
        assert t is not None
        return any(t.seat_kind(s) == "human" and t.is_connected(s) for s in range(t.players))
