"""A table nobody is connected to parks: its state stays in Redis and its actor serves the next
table, until someone asks for it again (issue 48). An abandoned match otherwise held a worker
process (~52 MB) for its whole `QUATRO_ABANDONED_IDLE` (30 min), waiting for a player who
dropped and may never come back (R24 keeps their seat).

Parking (here, in the table's actor, on its clock): once no person (seated or watching) has
been connected for `park_s` (`QUATRO_PARK_AFTER`), the table is saved one last time with a
marker (when it parked, when someone last changed it), then `PARK` marks its record parked and
counts one more move, which fences this incarnation as a move would (SAVE's fence,
actors/store_scripts.py): a command that slipped in meanwhile is never saved nor answered, and
its gateway asks again. The record, snapshot and log then expire when the table's own wait
would have stopped it (`QUATRO_LOBBY_IDLE`, `QUATRO_OVER_IDLE`, `QUATRO_ABANDONED_IDLE`, from its
last change by someone): nothing has to run for a parked table to end, and one that ended
answers what any stopped table answers (`unknown_table`). Its replay, its players' records and
the actor's record of its id stay as after a stop. The actor goes back to the pool as after a
stop (actors/table_actor.py).

It does not park while it owes a match's ratings (actors/results.py settles them while the
table lives), nor while bots play (a match in play with bots, or a bot with something to do:
bots play on the table's clock, a parked table's would not, and its time must pass as if it
had never slept), nor a table opened by a gateway of the release before this one (one whose
id is its actor's name).

Waking is the gateway's (actors/waking.py): a ready actor takes the table over from its
snapshot as after a lost node (`Adopt`), and its clock then lets every deadline that fell due
while it slept fire in order, each at its own time (`Table.advance`): nothing is given back, as
after a fault, since nobody was kept from playing (`woken`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import redis

from actors import keys
from actors.bots import IDLE, BotDriver
from actors.clock import now_ms
from actors.idle import IdleLimits
from actors.leases import Leases
from actors.results import Results
from actors.saves import Saves
from actors.store import TableStore
from actors.store_scripts import FENCE
from actors.tasks import Tasks
from actors.watchers import Watchers
from cluster.redis_ops import Script
from engine import Table
from engine.phase import Phase

log = logging.getLogger("quatro.table")

# A table whose own wait ends it sooner than this after it would park stops instead: a park
# and an expiry a moment later would only churn.
STOP_RATHER_S = 5.0

# KEYS: the table's record, snapshot, log, alive (its slot). ARGV: this actor's cell, the moves
# it knows of, its name, when the table parks (ms, as text), when its records expire (ms). The
# record says `parked` and counts one more move (this incarnation fenced), and every key of the
# table expires when its own wait would have stopped it. The new count, or -1 when the record
# moved away from this incarnation (or is taken over: `moving`), 0 when it is gone.
PARK = Script(
    "table.park",
    FENCE
    + """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
if moved(raw, ARGV[1], ARGV[2]) then return -1 end
local rec = cjson.decode(raw)
if rec['actor'] ~= ARGV[3] or rec['moving'] then return -1 end
rec['moves'] = (tonumber(rec['moves']) or 0) + 1
rec['parked'] = ARGV[4]
redis.call('SET', KEYS[1], cjson.encode(rec))
for i = 1, 4 do redis.call('PEXPIREAT', KEYS[i], ARGV[5]) end
return rec['moves']
""",
)


class Parked(Protocol):
    """What parking needs of the table (actors/table_core.py)."""

    name: str
    code: str
    table: Table | None
    bots: BotDriver | None
    idle: IdleLimits
    last_activity: float  # monotonic: the last change by someone
    conns: dict[int, str]
    version: int
    store: TableStore
    saves: Saves
    results: Results
    watchers: Watchers
    tasks: Tasks
    leases: Leases


class Parking:
    def __init__(self, core: Parked, on_park: Callable[[], Awaitable[None]] | None) -> None:
        """`on_park`: what the actor does once the table parked (back to the pool)."""
        self.core = core
        self._on_park = on_park
        # Since when (monotonic) nobody has been connected, as the clock last saw it.
        self.alone_since: float | None = None
        self.marker: dict[str, int] | None = None  # in the snapshot while it parks
        self.done = False  # parked: whatever this incarnation still does is fenced

    def due(self, now: int) -> float | None:
        """When (monotonic) the table parks if nothing changes; None: not while it is as now
        (someone connected, ratings owed, a bot with something to do, parking off)."""
        core = self.core
        t = core.table
        if t is None or core.idle.park_s <= 0 or core.store.table_id == core.name:
            return None
        people = any(t.seat_kind(s) == "human" and t.is_connected(s) for s in range(t.players))
        if people or core.conns or core.watchers.count():
            self.alone_since = None
            return None
        if self.alone_since is None:
            self.alone_since = time.monotonic()
        if core.results.owed or self._bots_play(now):
            return None
        return self.alone_since + core.idle.park_s

    def _bots_play(self, now: int) -> bool:
        """Whether bots would act on this table before anyone comes back: one has something to
        do now, or the match runs with bots that play (a bot waiting for the next deal acts as
        soon as it comes). A parked table's time passes without them."""
        bots, t = self.core.bots, self.core.table
        if bots is None or t is None:
            return False
        if bots.next_due(now) is not None:
            return True
        running = t.phase not in (Phase.LOBBY, Phase.OVER)
        return running and bool(t.bot_seats()) and bots.policy != IDLE

    def _ends_at(self, wall: int) -> int:
        """When (wall ms) the table's own wait ends it if nobody comes (actors/clock.py's idle
        stop, less the early stop of a table its people all left: that needs a look)."""
        core = self.core
        assert core.table is not None
        phase = core.table.phase
        if phase is Phase.LOBBY:
            limit = core.idle.lobby_s
        elif phase is Phase.OVER:
            limit = core.idle.over_s
        else:
            limit = core.idle.abandoned_s
        return wall + int((core.last_activity + limit - time.monotonic()) * 1000)

    async def park(self) -> bool:
        """Park the table (the module says how); False when it did not (Redis failed, the table
        changed meanwhile, or its own wait ends it within `STOP_RATHER_S`): it goes on here."""
        core = self.core
        wall = now_ms()
        until = self._ends_at(wall)
        self.alone_since = time.monotonic()  # not parked: tried again only after a while
        if until - wall < STOP_RATHER_S * 1000:
            return False
        active = wall - int((time.monotonic() - core.last_activity) * 1000)
        self.marker = {"at": wall, "active": active}
        core.version += 1  # the marker is saved with the table

        async def mark() -> bool:
            return await self._mark(wall, until)

        if not await core.saves.last(mark):
            self.marker = None
            return False
        log.info("table %s: nobody connected for %.0f s: parked", core.code, core.idle.park_s)
        # As after a stop (`TableCore.stop`), but its records stay: they are the table now.
        await core.tasks.close()
        core.leases.end_all()
        if self._on_park is not None:
            await self._on_park()
        return True

    async def _mark(self, wall: int, until: int) -> bool:
        """`PARK` (under the saves' lock): from here on, this incarnation is fenced."""
        core, store = self.core, self.core.store
        names = [keys.table(core.code), keys.snapshot(core.code), keys.log(core.code)]
        names.append(keys.alive(core.code))
        args = [store.cell, store.moves, core.name, str(wall), until]
        try:
            moves = int(await PARK.run(store.redis, names, args))
        except (redis.RedisError, OSError, TimeoutError) as exc:
            log.warning("table %s: not parked (%s); it goes on here", core.code, exc)
            return False
        if moves <= 0:
            log.warning("table %s: not parked: its record moved on or is gone", core.code)
            return False
        self.done = True
        with contextlib.suppress(redis.RedisError, OSError, TimeoutError):
            await store.redis.zadd(keys.parked(store.cell), {core.code: until})
        return True

    def woken(self, marker: dict[str, int], now: int) -> None:
        """A table restored from its parked snapshot: its idle clock goes on from its last
        change by someone (its long waits apply to it as a whole), and nothing is given back:
        the clock's first tick fires what fell due while it slept, in order."""
        core = self.core
        since = max(0, now_ms() - int(marker.get("active", now)))
        core.last_activity = time.monotonic() - since / 1000
        core.version += 1  # saved at once: the records lose the park's expiry
        log.info(
            "table %s: woken after %.1f s parked", core.code, (now - marker.get("at", now)) / 1000
        )
