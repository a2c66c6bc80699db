"""A table's own clock: it sleeps until the engine's next deadline, a bot's turn or the idle
stop, then lets time pass. A command wakes it early, since it may have moved the deadline.

Parking (actors/parking.py): a table nobody has been connected to for its `park_s` parks, and
the loop ends; a woken one's first tick fires, in order, every deadline that fell due while it
slept.

The idle stop: an over table, a lobby, and a table nobody is connected to each wait their own
while (actors/idle.py, set by `TableCore.open`) after the last command, then stop. An over or
started table whose people have all gone from it for good (actors/departures.py: not
connected, and their records say they left it or sit at another table now) waits only its
`left_s` from the first look that found them gone: its actor serves the next table.

Fair to the players (docs/rules.md, R22's decision; docs/reliability.md, "A stall is given
back"): the time a fault held the table still is given back to its clocks (`Table.resume`).
Two faults, two measures, both erring in the players' favour by at most a pulse or a beat:
- a process frozen (SIGSTOP, a paused VM, a stuck loop): the clock wakes at least every
  `PULSE_MS`, and every change is a sign of life too; a gap
  between two signs of life longer than `STALL_AFTER_MS` is a stall, given back whole before
  anything else is judged (`stalled`, called first by `TableCore.change`);
- an incarnation lost (killed, its node gone, the table moved): while a clock runs, the table
  writes the time it is alive to Redis (`keys.alive`) every `BEAT_MS` in which no save wrote
  it already (a snapshot carries the table's time); the next incarnation gives back the time
  from the later of the two to its own start (`give_back`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from actors import departures
from actors.applied import Applied
from actors.bots import BotDriver
from actors.departures import LOOK_EVERY_S
from actors.idle import IdleLimits
from actors.protocol import Entry
from actors.tasks import Tasks
from cluster.redis_client import AsyncRedis
from engine import Command, Outbound, Table
from engine.phase import Phase

log = logging.getLogger("quatro.table")

RESTART_AFTER_S = 1.0  # a clock that failed starts again this long after
# The loop wakes at least this often: a sign of life (a stall is given back only to a table
# whose clocks run, but a lobby's end must not look like one).
PULSE_MS = 1_000
# A longer gap between two signs of life is a stall (the process did not run): given back.
# Above a pulse and the event loop's ordinary lag under load; a shorter stall is not told.
STALL_AFTER_MS = 2_000
# While a clock runs, the table's time alive reaches Redis at least this often (`keys.alive`).
BEAT_MS = 1_000

R = TypeVar("R")

BOOTTIME: int | None = getattr(time, "CLOCK_BOOTTIME", None)


def now_ms() -> int:
    """The table's time (ms) in play: the wall clock, since a restored table's deadlines were
    saved by another process, perhaps on another host. Tests inject their own."""
    return int(time.time() * 1000)


def steady_clock() -> float:
    """Seconds on a clock that never jumps and counts a suspended host (Linux's boot time)."""
    return time.clock_gettime(BOOTTIME) if BOOTTIME is not None else time.monotonic()


class Ticking(Protocol):
    """What the clock needs of its table."""

    code: str
    table: Table | None
    bots: BotDriver | None
    tasks: Tasks
    idle: IdleLimits
    last_activity: float  # monotonic: the last change by someone
    version: int  # bumps with every change

    def saved_version(self) -> int: ...

    async def beat(self, now: int) -> bool: ...

    def now(self) -> int: ...

    def advance(self, now: int) -> list[Entry]: ...

    def apply(self, command: Command, now: int, origin: str = "") -> Applied: ...

    def commit(self, outs: list[Outbound], origin: str) -> list[Entry]: ...

    async def change(
        self, step: Callable[[], R], *, touch: bool, save: Callable[[R], bool] | None = None
    ) -> R: ...

    async def stop(self) -> None: ...

    @property
    def store(self) -> Stored: ...

    @property
    def results(self) -> Owing: ...

    @property
    def parking(self) -> Parks: ...


class Parks(Protocol):
    """When the table parks, and its parking (actors/parking.py)."""

    def due(self, now: int) -> float | None: ...

    async def park(self) -> bool: ...


class Owing(Protocol):
    """The table's finished matches whose ratings are not settled yet (actors/results.py)."""

    @property
    def owed(self) -> list[dict[str, Any]]: ...


class Stored(Protocol):
    """Where the table is saved: the Redis its people's records are read from too."""

    @property
    def redis(self) -> AsyncRedis: ...


class Clock:
    def __init__(self, core: Ticking) -> None:
        self.core = core
        self.wake = asyncio.Event()  # set by every command: the next deadline may have moved
        self._task: asyncio.Task[None] | None = None
        # The last sign of life of this incarnation (`steady` s): a wake of the loop or a
        # change. None until the first: a restored table's own stall is `give_back`'s.
        self.steady: Callable[[], float] = steady_clock
        self._alive: float | None = None
        self.given_back = 0  # ms given back to the players by this incarnation (stalls)
        self._beat_at = -BEAT_MS  # when the last beat (or a save that did as much) was
        self._beat_saved = -1  # the saved version at that beat
        self._beating: asyncio.Task[None] | None = None
        # Since when (monotonic) every person of the table has been gone for good, as the last
        # look found them (None: someone is here, may come back, or nobody looked yet).
        self.left_since: float | None = None
        self._looked_at = -LOOK_EVERY_S
        self._looking: asyncio.Task[None] | None = None
        self._one_look = asyncio.Lock()  # the latest look's answer is the one that counts
        self.look_every_s = LOOK_EVERY_S  # a test looks more often

    def stalled(self) -> int:
        """How long this incarnation stood still until now (0 unless a stall), in ms: the gap
        since its last sign of life, when longer than `STALL_AFTER_MS`. Each stall is counted
        once: every call is a sign of life.

        Measured on the machine's own steady clock, not the table's: a test that moves the
        table's injected time is no stall, and a host suspended counts (CLOCK_BOOTTIME)."""
        t = self.steady()
        last = self._alive
        self._alive = t if last is None else max(last, t)
        if last is None:
            return 0
        gap = round((t - last) * 1000)
        return gap if gap > STALL_AFTER_MS else 0

    def catch_up(self) -> bool:
        """Before anything else is judged (`TableCore.change`): a stall of this very process
        (frozen, or its loop stuck: `stalled`) is given back. Whether anything was."""
        if self.core.table is None:
            return False
        stall = self.stalled()
        return stall > 0 and bool(self.resume(stall, self.core.now()))

    def give_back(self, alive: int) -> None:
        """A restored table stood still from `alive` (the table time its records last knew it
        alive) until now: its clocks get that back, saved and told once the clock starts."""
        now = self.core.now()
        if self._running() and now > alive:
            self.resume(now - alive, now)

    def resume(self, stalled: int, now: int) -> list[Entry]:
        """The table stood still `stalled` ms until `now`: every clock of it moves on by as
        much (`Table.resume`), and everyone is told (in a `change`'s step, or before the clock
        starts). Nothing when no clock of the table runs (a lobby, a match over)."""
        t = self.core.table
        assert t is not None
        if not t.running:
            return []
        self.given_back += stalled
        log.warning(
            "table %s stood still %.1f s (a fault): its clocks get that time back",
            self.core.code,
            stalled / 1000,
        )
        return self.core.commit(t.resume(stalled, now), "")

    def _overdue(self) -> bool:
        """Whether the last sign of life is older than a stall (the loop woke late)."""
        last = self._alive
        return last is not None and (self.steady() - last) * 1000 > STALL_AFTER_MS

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
        if core.version > core.saved_version():
            # Restored with its stall given back (`give_back`): saved and told now,
            # not at the next deadline.
            await core.change(list, touch=False)
        while True:
            now = core.now()
            due = self.next_due(now)
            self.wake.clear()
            # A sign of life at least every pulse (see the module), whatever is due.
            wake_at = now + PULSE_MS if due is None else min(due, now + PULSE_MS)
            woken = False
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, (wake_at - now) / 1000)):
                    await self.wake.wait()
                    woken = True
            now = core.now()
            self._look_soon()
            idle = self.idle_due(now)
            if idle is not None and idle <= now:
                await core.stop()
                return
            park = core.parking.due(now)
            if park is not None and park <= time.monotonic() and await core.parking.park():
                return  # its actor serves on without it; a gateway wakes it elsewhere
            if self._overdue():
                await core.change(list, touch=False)  # the stall is given back first there
            if woken or (due is not None and due <= now):
                await self.tick(now)
            else:
                # Only the pulse: nothing to change (an empty tick would bump the version and
                # make a hand-over wait for a save of nothing).
                self.stalled()
            self._beat(now)

    def _running(self) -> bool:
        t = self.core.table
        return t is not None and t.running

    def _beat(self, now: int) -> None:
        """Tell Redis the table is alive, at most every `BEAT_MS` while a clock runs, and not
        when a save since the last beat told it already (a snapshot carries the table's time)
        or a beat is still on its way."""
        core = self.core
        # A pulse may wake a few ms early on the table's clock: such a pulse still beats.
        if not self._running() or now - self._beat_at < BEAT_MS - PULSE_MS // 10:
            return
        saved = core.saved_version()
        self._beat_at = now
        if saved != self._beat_saved:
            self._beat_saved = saved
            return
        if self._beating is None or self._beating.done():
            self._beating = core.tasks.spawn(self._send_beat(now), "beat")

    async def _send_beat(self, now: int) -> None:
        await self.core.beat(now)

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
        park = core.parking.due(now)
        if park is not None:
            dues.append(now + int((park - time.monotonic()) * 1000))
        return min((d for d in dues if d is not None), default=None)

    def idle_due(self, now: int) -> int | None:
        core = self.core
        assert core.table is not None
        phase = core.table.phase
        since = core.last_activity
        if phase is Phase.LOBBY:
            limit = core.idle.lobby_s
        elif phase is Phase.OVER or not self._anyone_connected():
            limit = core.idle.over_s if phase is Phase.OVER else core.idle.abandoned_s
            # Not while a match's ratings are owed: they are settled for as long as the table
            # lives (a Redis failing over may take longer than the short wait).
            gone = None if core.results.owed else self.left_since
            if gone is not None and core.idle.left_s < limit and not self._anyone_connected():
                limit, since = core.idle.left_s, max(since, gone)
        else:
            return None
        return now + int((since + limit - time.monotonic()) * 1000)

    def _anyone_connected(self) -> bool:
        t = self.core.table
        assert t is not None
        return any(t.seat_kind(s) == "human" and t.is_connected(s) for s in range(t.players))

    def _people(self) -> list[str]:
        t = self.core.table
        assert t is not None
        return [
            str(owner)
            for s, owner in enumerate(t.owners())
            if owner is not None and t.seat_kind(s) == "human"
        ]

    def _look_soon(self) -> None:
        """While nobody is connected to a started or finished table, look now and then whether
        its people have gone for good (`look`), off the loop's path: a slow Redis must not hold
        the bots' turns. Someone connected, or a lobby: nobody has gone."""
        t = self.core.table
        assert t is not None
        if t.phase is Phase.LOBBY or self._anyone_connected():
            self.left_since = None
            return
        running = self._looking is not None and not self._looking.done()
        if running or time.monotonic() - self._looked_at < self.look_every_s:
            return
        self._looking = self.core.tasks.spawn(self.look(), "departures")

    async def look(self) -> None:
        """Look once whether every person of the table has gone for good (actors/departures.py)
        and note since when; the loop then judges the idle stop again. One look at a time, so
        that an older answer never overrides a newer one; no answer from Redis changes
        nothing."""
        async with self._one_look:
            self._looked_at = time.monotonic()
            people = self._people()
            gone = await departures.all_gone(self.core.store.redis, self.core.code, people)
            if gone is None:
                return
            was = self.left_since
            if not gone or self._anyone_connected():
                self.left_since = None
            elif was is None:
                self.left_since = time.monotonic()
            if self.left_since != was:
                self.wake.set()  # the idle stop moved
