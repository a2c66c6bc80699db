"""The table core: one table's engine state, its feed, its bots, and the one path every change
follows. Plain Python, no Ray: `actors.table_actor` wraps it in a Ray actor, and
tests/actors/test_table_core.py runs it against a real redis-server alone.

The path (`change`): judge and apply (`apply`: the engine, synchronously, no `await` between
reading and changing the table, though Ray runs many calls of an async actor at once) and
`commit` (the version bumps, the events get their seq in the feed) → persist a snapshot to
Redis → publish to the gateways' subscriptions. A restarted incarnation (Ray restarts it after
a crash) reads the snapshot back (`actors.store`), as does one that wakes a parked table.

Its rooms, each seeing of the core only what its Protocol names: `store` (Redis), `saves`
(persist, then publish), `requests` (what gateways ask), `watchers` (and their seat claims),
`leases` (the gateways that follow it), `clock`, `parking`, and `tasks`, which owns every task.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, NoReturn, TypeVar

from actors.answered import Answered
from actors.applied import Applied
from actors.bots import BotDriver
from actors.clock import Clock, now_ms
from actors.feed import Feed
from actors.idle import IdleLimits
from actors.leases import Leases
from actors.orders import CLOSE_REPLACED, CLOSE_SEAT_CHANGED, Close, Order, order_wire
from actors.parking import Parking
from actors.protocol import (
    Batch,
    Entry,
    ErrorBody,
    Outcome,
    Reply,
    Request,
)
from actors.ratings import RatingStore
from actors.requests import Requests
from actors.results import Results
from actors.saves import Saves
from actors.snapshot import (
    DEFAULT_REPLAY_TTL_S,
    SNAPSHOT_FORMAT,
    SnapshotUnreadable,
    load,
)
from actors.store import TableMoved, TableStore
from actors.tasks import Tasks
from actors.watchers import Watchers
from cluster.redis_client import RedisSettings
from engine import Command, Connect, Disconnect, Outbound, Refusal, Table, TableConfig, TakeSeat
from engine.errors import ErrorCode

log = logging.getLogger("quatro.table")

ALREADY_OPEN = Outcome(False, ErrorBody(ErrorCode.NOT_ALLOWED, "already open"))

R = TypeVar("R")


class TableCore:
    """One table, or none yet: a pooled actor's core is empty until `open` gives it one.
    `on_stop`: what the wrapper does once the table stopped by itself (the actor ends)."""

    def __init__(
        self,
        name: str,
        store: str | RedisSettings,
        on_stop: Callable[[], Awaitable[None]] | None = None,
        now: Callable[[], int] = now_ms,
        cell: str = "",
        on_moved: Callable[[], None] | None = None,
        on_park: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`cell`: the cell whose Ray runs this actor (actors/cells.py, "" without cells);
        `on_moved`: once a save is refused (the table moved away); `on_park`: once it parked."""
        self.name = name
        self.now = now
        self.idle = IdleLimits()  # how long it waits before it stops; set by `open`
        self.replay_ttl_s = DEFAULT_REPLAY_TTL_S
        self.code = ""
        self.lost = False  # the snapshot could not be read: this incarnation only retires
        self.opening = False
        self.table: Table | None = None
        self.feed = Feed()
        self.conns: dict[int, str] = {}  # seat -> the connection id that holds it
        self.answered = Answered()  # recent commands' answers, for their retries
        self.version = 0  # bumps with every change (`saves.saved`: the version in Redis)
        self.last_activity = time.monotonic()
        self.bots: BotDriver | None = None
        self.tasks = Tasks(f"table {name}")
        self.store = TableStore(name, store, cell)
        self.saves = Saves(self, self.store)
        self._on_moved = on_moved
        self.watchers = Watchers(self)
        self.leases = Leases(self)
        self.clock = Clock(self)
        self.requests = Requests(self)
        self.results = Results(self, lambda: RatingStore(self.store.redis, self.store.settings))
        self.parking = Parking(self, on_park)
        self._on_stop = on_stop
        self._restore()

    # -- restore ------------------------------------------------------------------------------
    def _restore(self) -> None:
        """A restarted incarnation finds its table again, and gives its players back the time
        it stood still (`Clock.give_back`)."""
        found = self.store.read()
        if found is None:
            return
        code, raw, raw_log = found
        self.code = code
        try:
            saved = load(raw, raw_log)
        except SnapshotUnreadable as exc:
            self.lost = True
            self.store.bury(code, str(exc))
            return
        self.table = saved.table
        self.feed = Feed(saved.seq, [e for e in saved.entries if e.seq <= saved.seq])
        self.saves.stored_seq = saved.seq
        self.conns = saved.conns
        self.answered = Answered(saved.done.items())
        self.bots = BotDriver(saved.table, saved.policy)
        self.results.restored(saved.results.get("owed", []), saved.results.get("last"))
        self._set_idle(saved.idle, saved.replay_ttl)
        log.info("table %s restored at seq %d", self.code, self.feed.seq)
        if saved.parked is not None:  # it slept: its clocks catch up (actors/parking.py)
            self.parking.woken(saved.parked, self.now())
        else:  # it stood still since its records last knew it alive (snapshot, or a beat)
            self.clock.give_back(max(saved.table.now, self.store.alive_at or 0))

    async def beat(self, now: int) -> bool:
        """The table is alive at `now` (actors/clock.py): Redis keeps it for the next
        incarnation. A beat refused because the table moved away ends this incarnation, as a
        refused save does: otherwise one cut off and idle would live on, holding a slot and a
        stale table, until a drain restarted it for nothing."""
        alive = await self.store.beat(self.code, now)
        if self.store.fenced and self._on_moved is not None:
            self._on_moved()
        return alive

    def _set_idle(self, idle: tuple[float, ...], replay_ttl: int) -> None:
        self.idle = IdleLimits.of(idle)
        self.replay_ttl_s = int(replay_ttl)

    def snapshot(self) -> dict[str, Any]:
        assert self.table is not None
        return {
            "format": SNAPSHOT_FORMAT,
            "table": self.table.to_snapshot(),
            "seq": self.feed.seq,
            "conns": {str(k): v for k, v in self.conns.items()},
            "done": self.answered.to_snapshot(),
            "bot_policy": self.bots.policy if self.bots else "smart",
            "idle": list(self.idle.values()),
            "replay_ttl": self.replay_ttl_s,
            "results": self.results.to_snapshot(),
        } | ({"parked": self.parking.marker} if self.parking.marker else {})

    def start(self) -> None:
        """Start the clock if it is not running yet (on the running loop: the actor calls this
        from its async constructor, `open` and every call)."""
        if self.table is not None:
            self.clock.start()
            self.results.kick()  # a restored table may owe a match's ratings

    # -- the one change path ------------------------------------------------------------------
    async def change(
        self, step: Callable[[], R], *, touch: bool, save: Callable[[R], bool] | None = None
    ) -> R:
        """Every change of the table: `step` judges, applies and commits, synchronously (no
        `await` between reading and changing the table); a change by someone (`touch`) moves
        the idle clock; then the table is persisted and its events published, unless `save`
        says nothing happened. A stall of this process is given back first (`Clock.catch_up`)."""
        resumed = self.clock.catch_up()
        result = step()
        if touch:
            self.touch()
        if resumed or save is None or save(result):
            await self.saves.persist()
            self.results.kick()
        return result

    def apply(self, command: Command, now: int, origin: str = "") -> Applied:
        """Judge and apply one command (in a `change`'s step) and commit what it caused; when
        the rules refuse it, only the clock's events that came with the refusal. Then what the
        change means for connections (`_released`)."""
        t = self.table
        assert t is not None
        owners, watchable = t.owners(), t.settings.watchers
        refused = None
        try:
            entries = self.commit(t.apply(command, now), origin)
        except Refusal as refusal:
            entries = self.commit(refusal.events, origin) if refusal.events else []
            refused = refusal.body
        return Applied(entries + self._released(owners, watchable, now), refused)

    def advance(self, now: int) -> list[Entry]:
        """Let the engine's deadlines pass up to `now` (in a `change`'s step): a new round may
        seat a newcomer."""
        t = self.table
        assert t is not None
        owners, watchable = t.owners(), t.settings.watchers
        return self.commit(t.advance(now), "") + self._released(owners, watchable, now)

    def _released(self, owners: tuple[str | None, ...], watchable: bool, now: int) -> list[Entry]:
        """R30: a seat that changed hands (freed, kicked, given to a bot or to someone else)
        loses the connection that held it, at once and before any later event; a table the
        host closed to watchers closes theirs."""
        t = self.table
        assert t is not None
        entries = []
        for seat, (was, now_owner) in enumerate(zip(owners, t.owners(), strict=True)):
            if was != now_owner and seat in self.conns:
                entries.append(self.close_conn(self.conns.pop(seat), CLOSE_SEAT_CHANGED, now))
            if was == "bot" and now_owner not in (None, "bot"):
                entries += self.watchers.seat_given(str(now_owner), now)
        if watchable and not t.settings.watchers:
            entries += self.watchers.close_all(now)
        return entries

    def commit(self, outs: list[Outbound], origin: str) -> list[Entry]:
        """Give events their seq and log them, and bump the version."""
        self.version += 1
        if self.bots is not None:
            self.bots.observe(outs)
        t = self.table
        assert t is not None
        if any(o.event.type == "over" for o in outs):
            self.results.ended(self.version)
        # Holders as the engine stamped them when the event happened, else as the seats are now
        # (nothing changed hands since: engine.table stamps every step that could).
        return [
            self.feed.append(
                o.to.scope,
                o.to.index,
                o.event.to_wire(),
                o.at,
                origin,
                t.holders(o.to) if o.holders is None else o.holders,
            )
            for o in outs
        ]

    def order(self, order: Order, now: int) -> Entry:
        """An order to every gateway (actors/orders.py), in the feed among the events; it
        changes nothing saved, so no version of its own (a commit always comes with it)."""
        return self.feed.append("all", -1, order_wire(order), now, "")

    def announce(self, wire: dict[str, Any], now: int) -> list[Entry]:
        """An event of the actor itself to everyone (the count of watchers): a change."""
        self.version += 1
        return [self.feed.append("all", -1, dict(wire), now, "")]

    def close_conn(self, conn: str, code: int, now: int) -> Entry:
        """Ask every gateway to close one connection (only the one holding it acts)."""
        return self.order(Close(conn, code), now)

    # -- the connections that hold seats (in a `change`'s step) -------------------------------
    def connect(self, seat: int, conn: str, origin: str, now: int) -> list[Entry]:
        """`conn` holds `seat` now (R25); an older connection to it is told to go (4409)."""
        old = self.conns.get(seat)
        self.conns[seat] = conn
        entries = self.apply(Connect(seat=seat), now, origin).entries
        if old is not None and old != conn:
            entries.append(self.close_conn(old, CLOSE_REPLACED, now))
        return entries

    def disconnect(self, seat: int, origin: str, now: int) -> list[Entry]:
        """The connection that held `seat` is gone (R24: the seat and the hand stay)."""
        del self.conns[seat]
        return self.apply(Disconnect(seat=seat), now, origin).entries

    def seat_held_by(self, conn: str) -> int | None:
        return next((s for s, c in self.conns.items() if c == conn), None)

    def touch(self) -> None:
        self.last_activity = time.monotonic()
        self.clock.wake.set()  # the next deadline may have moved

    def moved(self) -> NoReturn:
        """The table moved to another cell while this incarnation ran (SAVE's fence refused
        it): nothing more of it may reach anyone. Its followers see their links drop and find
        the table where its record now says."""
        if self._on_moved is not None and not self.parking.done:  # parked: the actor is not its
            self._on_moved()
        raise TableMoved(self.code)

    # -- open, hand over, stop ----------------------------------------------------------------
    async def open(
        self,
        code: str,
        config: dict[str, Any],
        host: str,
        name: str,
        idle: tuple[float, ...],
        replay_ttl: int = DEFAULT_REPLAY_TTL_S,
        table_id: str = "",
    ) -> Outcome:
        """Give this pooled actor its table; the creator takes seat 0 and hosts. `idle`: how
        long the table lives once over, in its lobby, and with nobody connected; `replay_ttl`:
        how long its replay is kept after its last event; `table_id`: its replay's name and its
        matches' ids ("" from an older gateway: the actor's name). Refused `not_allowed` when
        the actor has a table (another `open` may have won while this one claimed the code)."""
        if self.table is not None or self.opening:
            return ALREADY_OPEN
        self.opening = True  # a second `open` meanwhile must not claim a code of its own
        try:
            self.store.table_id = table_id or self.name
            config = dict(config)
            policy = str(config.pop("bot_policy", "smart"))
            table = Table(TableConfig(code=code, **config))
            # Claimed first, so that nothing is awaited between applying the creator's seat
            # and committing it: no other call sees the table before both are done.
            await self.store.claim(code)
        finally:
            self.opening = False

        def seat_the_host() -> Applied:
            self.code, self.table, self.bots = code, table, BotDriver(table, policy)
            self._set_idle(idle, replay_ttl)
            # A pooled actor may have waited long: its table's idle clock starts now.
            self.last_activity = time.monotonic()
            return self.apply(TakeSeat(seat=0, player_id=host, name=name), self.now())

        refused = (await self.change(seat_the_host, touch=True)).refused
        self.start()
        return Outcome(refused is None, refused, None if refused else 0)

    def adopt(self, code: str) -> Outcome:
        """This pooled actor takes over the table of `code`, moved here off a lost node
        (actors/rescue.py, which named this actor in the table's record and `code` in this
        actor's): restored from its snapshot as a restart would, with the record's count of
        moves as its fence. The read blocks the loop for a few milliseconds: a pooled actor has
        nobody else to serve."""
        if self.table is not None or self.opening:
            return Outcome(True) if self.code == code and not self.lost else ALREADY_OPEN
        self._restore()
        if self.table is None or self.code != code:
            return Outcome(False, ErrorBody(ErrorCode.NOT_ALLOWED, "nothing to take over"))
        self.last_activity = time.monotonic()
        self.start()
        return Outcome(True)

    async def stop(self) -> None:
        """The table stopped (idle): its tasks end first, so that none writes to Redis after
        its records went; every follower is told; then the wrapper ends the actor. (A moved
        table never stops here: its records are the new incarnation's.)"""
        log.info("table %s idle: stopping", self.code)
        await self.tasks.close()
        await self.store.retire(self.code)
        await self.store.close()
        self.leases.end_all()
        if self._on_stop is not None:
            await self._on_stop()

    # -- what gateways ask --------------------------------------------------------------------
    async def serve(self, request: Request) -> Reply:
        """One request of a gateway, from either plane (`LinkServer`, or a Ray call)."""
        self.start()
        return await self.requests.serve(request)

    def follow(self, gateway: str, after: int, leased: bool) -> AsyncIterator[Batch]:
        return self.leases.follow(gateway, after, leased)

    def link_ended(self, gateway: str, orderly: bool) -> None:
        self.leases.link_ended(gateway, orderly)

    def gateway_left(self, gateway: str) -> None:
        """Its hub stopped: none of its watchers is left."""
        self.watchers.gateway_left(gateway)

    async def gateway_gone(self, gateway: str) -> None:
        """A gateway died without saying so (`Leases`): its players are disconnected."""
        if self.table is None:
            return
        log.info("table %s: gateway %s gone (its lease ran out)", self.code, gateway)
        now = self.now()

        def disconnect() -> list[Entry]:
            entries = self.watchers.gateway_gone(gateway, now)
            for seat, conn in list(self.conns.items()):
                if conn.startswith(gateway + "/"):
                    entries += self.disconnect(seat, "", now)
            return entries

        await self.change(disconnect, touch=False)

    def saved_version(self) -> int:
        return self.saves.saved

    @property
    def table_id(self) -> str:
        """The table's id (its replay, its matches): the name of the actor that opened it."""
        return self.store.table_id
