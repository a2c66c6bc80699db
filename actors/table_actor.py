"""The table actor: one Ray actor per table, owning the engine's state, its clock and its bots.

Every change follows one path: judge and apply (engine, synchronously: no `await` between
reading and changing the table, though Ray runs many calls of an async actor at once) → persist a
snapshot to Redis → publish to the gateways' subscriptions. A restarted incarnation (Ray restarts
it after a crash) reads the snapshot back: scores, hands, signs, clocks and the recent command
ids, so a command retried by a gateway is never applied twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import ray
import redis
import redis.asyncio as aioredis

from actors import keys
from actors.bots import BotDriver
from actors.feed import LEASE_S, Feed
from actors.link_server import LinkServer, port_range
from actors.protocol import (
    Act,
    Batch,
    Entry,
    ErrorBody,
    Join,
    Joined,
    Leave,
    Outcome,
    Reply,
    Request,
    Views,
    ViewSet,
    entry_from_json,
)
from cluster.link_secret import link_secret
from cluster.redis_client import async_redis
from engine import (
    CancelClaim,
    ClaimSeat,
    Command,
    Connect,
    Disconnect,
    Outbound,
    Refusal,
    Table,
    TableConfig,
    TakeSeat,
)
from engine.phase import Phase
from engine.seating import team_of
from engine.wire import command_from_frame

log = logging.getLogger("quatro.table")

REMEMBERED_COMMANDS = 256  # recent command ids (and their answers) kept for retries
SAVED_COMMANDS = 64  # of which the snapshot keeps the newest: a retry comes within seconds
STORED_LOG = 256  # events kept in Redis for resubscription after a restart
KEY_TTL_S = 24 * 3600  # refreshed at every save; a stopped table's keys go in minutes
STOPPED_TTL_S = 300
SAVE_TIMEOUT_S = 2.0
RESTORE_WAIT_S = 120.0
# Made-up codes the gateway maps like the engine's: the player holds no seat here.
NO_SEAT = ErrorBody("no_seat", "you hold no seat at this table")
NOT_OPEN = ErrorBody("unknown_table", "this table is not open")
EXPIRED = ErrorBody("expired", "this action arrived after its expiry and was not applied")
WATCHING_OFF = ErrorBody("watching_off", "the host does not let anyone watch this table")

# Close codes the actor asks a gateway to use on one connection (gateway/errors.py names them).
CLOSE_REPLACED = 4409  # a newer connection of the same player took the seat
CLOSE_SEAT_CHANGED = 4410  # the seat changed hands: this connection's player no longer holds it
CLOSE_SEAT_GIVEN = 4411  # a watcher's request for a bot's seat came true: hello again, seated
# Commands of someone who holds no seat here: taking one in the lobby, asking for a bot's during
# the match (engine.latejoin), and withdrawing that request.
SEATLESS_KINDS = ("take_seat", "claim_seat", "cancel_claim")
# The snapshot's layout. 1: before `format` existed; 2: adds it, and holders in the log.
SNAPSHOT_FORMAT = 2
LOST_TTL_S = 24 * 3600  # how long `hello` can still say why a lost table is gone
# over, lobby, abandoned: how long a table waits before it stops (see `_idle_due`).
DEFAULT_IDLE = (600.0, 600.0, 1800.0)
# The data plane: the ports table actors may listen on (outside Ray's worker ports, 10002-19999
# by default, and the kernel's ephemeral ones), and how long a silent gateway is kept.
PORTS_ENV = "QUATRO_TABLE_PORTS"
WATCHING = -1  # the seat (and team) of a connection that watches
# How long a request for a bot's seat outlives its claimant's last watching connection (scaled
# by the table's time_scale): a reload or a network change is back well within it.
CLAIM_GRACE_S = 20.0
# A restarted table calls itself to start its clock: this many tries, each waited this long.
KICK_TRIES = 30
KICK_WAIT_S = 10.0
# The count of watchers is announced to the table at most this often: a crowd arriving must not
# become an event per spectator for every player and spectator.
WATCHING_ANNOUNCE_S = float(os.environ.get("QUATRO_WATCHING_ANNOUNCE", "2"))
DEFAULT_PORTS = "20000-29999"
LINK_SILENCE_S = float(os.environ.get("QUATRO_LINK_SILENCE", "20"))
# Replays: every event of the table, public and private, is appended to `keys.replay` (the REST
# endpoint filters by audience); the list is kept this long after the table's last event.
DEFAULT_REPLAY_TTL_S = 7 * 24 * 3600
# At most this many events per table are kept for its replay: a 4-seat match to 5 points makes
# from about 75 (quick calls: tests/cluster/test_replays.py) to a few hundred (rounds of swaps,
# every seat's deal and the watchers' copy), so this is a long evening of rematches. Past it
# the oldest are kept and the newest dropped, so every match stored stays whole from its start.
REPLAY_CAP = 20_000


class SnapshotUnreadable(Exception):
    """The saved table cannot be read back (corrupt, or a format this code does not know)."""


def now_ms() -> int:
    return int(time.time() * 1000)


class TableActor:
    """One table. Created from the pool without a table; `open` gives it one."""

    def __init__(self, name: str, redis_url: str) -> None:
        self.name = name
        self.redis_url = redis_url
        # How long an over table, a lobby, and a table nobody is connected to wait before they
        # stop; set by `open`.
        self.over_idle_s, self.lobby_idle_s, self.abandoned_idle_s = DEFAULT_IDLE
        self.replay_ttl_s = DEFAULT_REPLAY_TTL_S
        self.replay_meta_saved = False  # this incarnation wrote the replay's meta once
        self.code = ""
        self.lost = False  # the snapshot could not be read: this incarnation only retires
        self.table: Table | None = None
        self.feed = Feed()
        self.conns: dict[int, str] = {}  # seat -> the connection id that holds it
        # Who watches: the connections a gateway of before spectators-by-gateway joined one by
        # one (connection id -> gateway; and -> player, so that joining late reaches them),
        # and each gateway's own count of the watchers it serves from a shared view.
        self.watchers: dict[str, str] = {}
        self.watcher_of: dict[str, str] = {}
        self.watching_at: dict[str, int] = {}
        self.watching_told = 0  # the count last announced to the table
        self._announcing: asyncio.Task[None] | None = None
        self.done: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.version = 0  # bumps with every change; `saved` is the version in Redis
        self.saved = 0
        self.stored_seq = 0
        self.last_activity = time.monotonic()
        self.bots: BotDriver | None = None
        self._redis: aioredis.Redis | None = None
        self._save_lock: asyncio.Lock | None = None
        self._wake: asyncio.Event | None = None
        self._clock: asyncio.Task[None] | None = None
        self._retry: asyncio.Task[None] | None = None
        # Which process this is: a gateway that reaches another (a port reused after a
        # restart) is refused and asks Ray again.
        self.incarnation = secrets.token_hex(8)
        self.link: LinkServer | None = None
        self._listening: asyncio.Task[tuple[str, int]] | None = None
        self._gone_checks: dict[str, asyncio.Task[None]] = {}
        self._claim_checks: dict[str, asyncio.Task[None]] = {}  # player -> their grace
        self._restore()
        if self.table is not None or self.lost:
            # Nobody may call a restarted table for a long time (everyone left): a call to
            # ourselves, run once __init__ returns, starts its clock at once, so bots, deadlines
            # and the idle stop go on (or a lost table retires) without waiting for a player.
            self._kick_clock()

    def _kick_clock(self) -> None:
        """Call `ping` on ourselves until it is answered, from a thread of its own. A single
        call sent from __init__ was not enough: a restarted table once stayed alive and silent
        on a loaded CI run (its answer was never awaited, so a failed call went unseen)."""
        me = ray.get_runtime_context().current_actor

        def kick() -> None:
            for _ in range(KICK_TRIES):
                try:
                    ray.get(me.ping.remote(), timeout=KICK_WAIT_S)
                    return
                except Exception as exc:  # restarting, unavailable, slow: try again
                    log.warning("table actor %s: self-call failed (%r), retrying", self.name, exc)
                    time.sleep(1.0)
            log.error("table actor %s: its clock could not be started", self.name)

        threading.Thread(target=kick, name="kick-clock", daemon=True).start()

    # -- restore ------------------------------------------------------------------------------
    def _restore(self) -> None:
        """A restarted incarnation finds its table again (plain blocking Redis: once, here).
        Redis may be restarting too: wait for it rather than come back without the table (an
        exception here would end the actor for good: Ray does not restart a failed creation)."""
        deadline = time.monotonic() + RESTORE_WAIT_S
        delay = 0.1
        while True:
            try:
                found = self._read_snapshot()
                break
            except (redis.ConnectionError, redis.TimeoutError):
                if time.monotonic() > deadline:
                    raise
                log.warning("table actor %s: Redis unreachable, retrying", self.name)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
        if found is None:
            return
        code, raw, raw_log = found
        self.code = code
        try:
            self._load(raw, raw_log)
        except SnapshotUnreadable as exc:
            self._bury(str(exc))
            return
        log.info("table %s restored at seq %d", self.code, self.feed.seq)

    def _load(self, raw: str, raw_log: list[str]) -> None:
        """Rebuild the table from its snapshot and log; SnapshotUnreadable if they cannot be
        read. Older formats are migrated on the way in."""
        try:
            snap = migrate(json.loads(raw))
            table = Table.from_snapshot(snap["table"])
            seq = int(snap["seq"])
            entries = [entry_from_json(json.loads(x)) for x in raw_log]
            conns = {int(k): str(v) for k, v in snap["conns"].items()}
            done = OrderedDict((str(k), dict(v)) for k, v in snap["done"])
            policy = str(snap.get("bot_policy", "smart"))
            idle = tuple(float(x) for x in snap.get("idle", DEFAULT_IDLE))
            replay_ttl = int(snap.get("replay_ttl", DEFAULT_REPLAY_TTL_S))
        except SnapshotUnreadable:
            raise
        except Exception as exc:  # whatever a damaged blob makes the parsers raise
            raise SnapshotUnreadable(f"{type(exc).__name__}: {exc}") from exc
        self.table = table
        self.feed = Feed(seq, [e for e in entries if e.seq <= seq])
        self.stored_seq = seq
        self.conns = conns
        self.done = done
        self.bots = BotDriver(table, policy)
        self.over_idle_s, self.lobby_idle_s, self.abandoned_idle_s = (*idle, *DEFAULT_IDLE[2:])[:3]
        self.replay_ttl_s = replay_ttl

    def _bury(self, why: str) -> None:
        """The table cannot come back: say so loudly, delete its records so that no gateway
        waits for it, and leave a tombstone that tells its players why (`table_lost`)."""
        log.error(
            "TABLE %s IS LOST: its saved state cannot be read (%s). Its records are deleted; "
            "its players are told `table_lost`.",
            self.code,
            why,
        )
        self.lost = True
        r = redis.Redis.from_url(self.redis_url, decode_responses=True, socket_timeout=5)
        try:
            pipe = r.pipeline(transaction=True)
            pipe.delete(keys.table(self.code), keys.actor(self.name))
            pipe.delete(keys.snapshot(self.code), keys.log(self.code))
            pipe.set(keys.lost(self.code), why[:200], ex=LOST_TTL_S)
            pipe.execute()
        finally:
            r.close()

    def _read_snapshot(self) -> tuple[str, str, list[str]] | None:
        r = redis.Redis.from_url(self.redis_url, decode_responses=True, socket_timeout=5)
        try:
            code = r.get(keys.actor(self.name))
            if not code:
                return None
            raw = r.get(keys.snapshot(str(code)))
            if raw is None:
                return None
            entries = [str(x) for x in r.lrange(keys.log(str(code)), 0, -1)]
        finally:
            r.close()
        return str(code), str(raw), entries

    def _snapshot(self) -> dict[str, Any]:
        assert self.table is not None
        done = list(self.done.items())[-SAVED_COMMANDS:]
        return {
            "format": SNAPSHOT_FORMAT,
            "table": self.table.to_snapshot(),
            "seq": self.feed.seq,
            "conns": {str(k): v for k, v in self.conns.items()},
            "done": done,
            "bot_policy": self.bots.policy if self.bots else "smart",
            "idle": [self.over_idle_s, self.lobby_idle_s, self.abandoned_idle_s],
            "replay_ttl": self.replay_ttl_s,
        }

    # -- plumbing -----------------------------------------------------------------------------
    def _start(self) -> None:
        """Tasks need the actor's event loop, which __init__ does not run on."""
        if self._redis is None:
            self._redis = async_redis(self.redis_url, SAVE_TIMEOUT_S)
            self._save_lock = asyncio.Lock()
            self._wake = asyncio.Event()
        if self.table is not None and (self._clock is None or self._clock.done()):
            self._clock = asyncio.get_running_loop().create_task(self._run_clock())
            self._clock.add_done_callback(self._clock_ended)

    def _clock_ended(self, clock: asyncio.Task[None]) -> None:
        """A clock that failed is logged and started again a second later: left dead, the table
        would wait silently for a player's call that may never come."""
        if clock.cancelled() or clock.exception() is None:
            return
        log.error(
            "table %s: its clock failed; starting it again", self.code, exc_info=clock.exception()
        )
        asyncio.get_running_loop().call_later(1.0, self._start)

    def _commit(self, outs: list[Outbound], origin: str) -> list[Entry]:
        """Give events their seq and log them. Synchronous: callers apply and commit together."""
        self.version += 1
        if self.bots is not None:
            self.bots.observe(outs)
        t = self.table
        assert t is not None
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

    def _close_conn(self, conn: str, code: int, now: int) -> Entry:
        """Ask every gateway to close one connection (only the one holding it acts)."""
        return self.feed.append("all", -1, {"type": "_close", "conn": conn, "code": code}, now, "")

    def _close_watchers(self, now: int) -> list[Entry]:
        """The host closed the table to watchers: every gateway closes its watching connections
        (4412), their requests for a bot's seat end with them, and the count starts again from
        nobody."""
        entries = []
        for conn in list(self.watchers):
            entries += self._stop_watching(conn, now, at_once=True)
        self.watching_at.clear()
        self._watching_changed()
        return [*entries, self.feed.append("all", -1, {"type": "_unwatch"}, now, "")]

    def _release_changed_seats(self, before: tuple[str | None, ...], now: int) -> list[Entry]:
        """R30: a seat that changed hands (freed, kicked, given to a bot or to someone else)
        loses the connection that held it, at once and before any later event."""
        assert self.table is not None
        after = self.table.owners()
        entries = []
        for seat, (was, now_owner) in enumerate(zip(before, after, strict=True)):
            if was != now_owner and seat in self.conns:
                entries.append(self._close_conn(self.conns.pop(seat), CLOSE_SEAT_CHANGED, now))
            if was == "bot" and now_owner not in (None, "bot"):
                entries += self._seat_given(str(now_owner), now)
        return entries

    def _seat_given(self, player_id: str, now: int) -> list[Entry]:
        """Joining late: a bot's seat became `player_id`'s. Their watching connections close
        (4411) so that they say hello again and take it; nothing of the seat reached them as
        watchers (R30), and only their new connection will get it."""
        entries = []
        for conn, player in list(self.watcher_of.items()):
            if player == player_id:
                del self.watcher_of[conn]
                self.watchers.pop(conn, None)
                entries.append(self._close_conn(conn, CLOSE_SEAT_GIVEN, now))
        return entries

    def _stop_watching(self, conn: str, now: int, at_once: bool = False) -> list[Entry]:
        """A watcher left. Their request for a bot's seat ends with their last watching
        connection (nobody would be there to take the seat): `at_once`, or once they have not
        come back within CLAIM_GRACE_S (a reload, a phone switching networks)."""
        self.watchers.pop(conn, None)
        player = self.watcher_of.pop(conn, None)
        self._watching_changed()
        t = self.table
        if player is None or t is None or player in self.watcher_of.values():
            return []
        if t.claim_of(player) is None:
            return []
        if not at_once:
            self._end_claim_later(player)
            return []
        return self._commit(t.apply(CancelClaim(seat=-1, player_id=player), now), "")

    def _end_claim_later(self, player: str) -> None:
        old = self._claim_checks.pop(player, None)
        if old is not None:
            old.cancel()
        task = asyncio.get_running_loop().create_task(self._end_claim_after_grace(player))
        self._claim_checks[player] = task

    async def _end_claim_after_grace(self, player: str) -> None:
        t = self.table
        assert t is not None
        await asyncio.sleep(CLAIM_GRACE_S * t.config.time_scale)
        if self._claim_checks.get(player) is not asyncio.current_task():
            return
        del self._claim_checks[player]
        if player in self.watcher_of.values() or t.claim_of(player) is None:
            return  # back in time, or the request ended otherwise (granted, withdrawn)
        self._commit(t.apply(CancelClaim(seat=-1, player_id=player), now_ms()), "")
        self._touch()
        await self._save_and_publish()

    async def _save_and_publish(self) -> None:
        """Persist the table as it is now, then let subscribers see events up to that point."""
        assert self._save_lock is not None
        async with self._save_lock:
            if self.saved >= self.version:
                self.feed.publish(self.feed.seq)
                return
            version, seq = self.version, self.feed.seq
            ok = await self._write()
            if ok:
                self.saved = version
            elif self._retry is None or self._retry.done():
                self._retry = asyncio.get_running_loop().create_task(self._retry_save())
            # A Redis outage must not stop the game: publish what is applied all the same.
            self.feed.publish(seq)

    async def _write(self) -> bool:
        assert self._redis is not None
        assert self.table is not None
        blob = json.dumps(self._snapshot(), separators=(",", ":"))
        new = self.feed.since(self.stored_seq, self.feed.seq)
        seq = self.feed.seq
        try:
            async with asyncio.timeout(SAVE_TIMEOUT_S):
                pipe = self._redis.pipeline(transaction=True)
                pipe.set(keys.snapshot(self.code), blob, ex=KEY_TTL_S)
                if new:
                    pipe.rpush(keys.log(self.code), *(json.dumps(e) for e in new))
                    pipe.ltrim(keys.log(self.code), -STORED_LOG, -1)
                pipe.expire(keys.log(self.code), KEY_TTL_S)
                self._write_replay(pipe, new)
                # Written anew, not only refreshed: after a loss of Redis data the table is
                # found again by its code, and finds itself again after a restart.
                pipe.set(keys.table(self.code), self._record(), ex=KEY_TTL_S)
                pipe.set(keys.actor(self.name), self.code, ex=KEY_TTL_S)
                await pipe.execute()
        except (redis.RedisError, OSError, TimeoutError) as exc:
            log.warning("table %s: snapshot not saved (%s); will retry", self.code, exc)
            return False
        self.stored_seq = seq
        self.replay_meta_saved = True
        return True

    def _write_replay(self, pipe: Any, new: list[Entry]) -> None:
        """Append the new events to the table's replay, in the snapshot's transaction: a
        restarted incarnation starts after the snapshot's seq, so nothing is appended twice.
        The replay is not expired when the table stops (`_stop`): it outlives the table."""
        replay = keys.replay(self.name)
        kept = [e for e in new if not str(e.wire.get("type", "")).startswith("_")]
        if kept:
            pipe.rpush(replay, *(json.dumps(e) for e in kept))
            pipe.ltrim(replay, 0, REPLAY_CAP - 1)
        pipe.expire(replay, self.replay_ttl_s)
        if self.replay_meta_saved:
            pipe.expire(keys.replay_meta(self.name), self.replay_ttl_s)
        else:
            pipe.set(keys.replay_meta(self.name), self._replay_meta(), ex=self.replay_ttl_s)

    def _replay_meta(self) -> str:
        """What a replay starts from: the public view of this table before anyone sat (the
        engine's, so the client's reducer starts from the same shape as a live `welcome`)."""
        assert self.table is not None
        empty = Table(TableConfig(code=self.code, players=self.table.players, seed=0))
        meta = {"code": self.code, "players": self.table.players, "start": empty.view(None)}
        return json.dumps(meta, separators=(",", ":"))

    async def _retry_save(self) -> None:
        assert self._save_lock is not None
        delay = 0.2
        while self.saved < self.version:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
            async with self._save_lock:
                version = self.version
                if await self._write():
                    self.saved = version

    def _record(self) -> str:
        """code -> actor: how any gateway finds this table (the directory writes it first)."""
        assert self.table is not None
        return record_json(self.name, self.table.players)

    def _remember(self, cmd_id: str, reply: Outcome) -> None:
        error = None if reply.error is None else reply.error.to_wire()
        self.done[cmd_id] = {"ok": reply.ok, "error": error, "seat": reply.seat}
        while len(self.done) > REMEMBERED_COMMANDS:
            self.done.popitem(last=False)

    def _touch(self) -> None:
        self.last_activity = time.monotonic()
        if self._wake is not None:
            self._wake.set()  # the next deadline may have moved

    # -- the clock ----------------------------------------------------------------------------
    def _next_due(self, now: int) -> int | None:
        assert self.table is not None
        assert self.bots is not None
        dues = [self.table.next_deadline(), self.bots.next_due(now), self._idle_due(now)]
        return min((d for d in dues if d is not None), default=None)

    def _idle_due(self, now: int) -> int | None:
        assert self.table is not None
        phase = self.table.phase
        if phase is Phase.OVER:
            limit = self.over_idle_s
        elif phase is Phase.LOBBY:
            limit = self.lobby_idle_s
        elif not self._anyone_connected():
            limit = self.abandoned_idle_s
        else:
            return None
        return now + int((self.last_activity + limit - time.monotonic()) * 1000)

    def _anyone_connected(self) -> bool:
        assert self.table is not None
        t = self.table
        return any(t.seat_kind(s) == "human" and t.is_connected(s) for s in range(t.players))

    async def _run_clock(self) -> None:
        """Sleep until the engine's next deadline (or a bot's turn), then let time pass. A
        command wakes it early, since it may have moved the deadline."""
        assert self._wake is not None
        assert self.table is not None
        assert self.bots is not None
        while True:
            due = self._next_due(now_ms())
            self._wake.clear()
            delay = None if due is None else max(0.0, (due - now_ms()) / 1000)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()
            now = now_ms()
            idle = self._idle_due(now)
            if idle is not None and idle <= now:
                await self._stop()
                return
            owners = self.table.owners()
            entries = self._commit(self.table.advance(now), "")
            # A bounded number of turns per tick: a policy that kept insisting could not spin.
            for _ in range(4 * self.table.players):
                turn = self.bots.next_turn(now)
                if turn is None:
                    break
                bot, command = turn
                bot.sent(command, now)
                try:
                    entries += self._commit(self.table.apply(command, now), "")
                except Refusal as refusal:
                    entries += self._commit(refusal.events, "")
                    bot.refused(command, refusal.to_wire(), now)
            entries += self._release_changed_seats(owners, now)  # a new round may seat a newcomer
            if entries:
                await self._save_and_publish()

    async def _stop(self) -> None:
        log.info("table %s idle: stopping", self.code)
        assert self._redis is not None
        with contextlib.suppress(redis.RedisError, OSError, TimeoutError):
            await self._redis.delete(keys.table(self.code), keys.actor(self.name))
            for key in (keys.snapshot(self.code), keys.log(self.code)):
                await self._redis.expire(key, STOPPED_TTL_S)
        for sub in self.feed.subs.values():
            sub.ended = True
            sub.wake.set()
        if self.link is not None:
            # Each link's pusher now says `Gone` to its gateway; let those lines leave.
            await self.link.close()
            await asyncio.sleep(0.2)
        ray.kill(ray.get_runtime_context().current_actor, no_restart=True)

    # -- calls from gateways ------------------------------------------------------------------
    async def ping(self) -> dict[str, Any]:
        if self.lost:
            ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
        self._start()
        node = ray.get_runtime_context().get_node_id()
        refused = self.link.refused if self.link is not None else 0
        return {
            "pid": os.getpid(),
            "node": node,
            "code": self.code,
            "seq": self.feed.seq,
            "incarnation": self.incarnation,
            "links_refused": refused,
        }

    async def hand_over(self) -> dict[str, Any]:
        """Before this actor is stopped to restart on another node (its node is drained): make
        sure everything applied is in Redis, where the next incarnation reads it. Every answer
        already waits for its save, so this only matters while saves are failing; `saved`
        False says the move would lose the latest changes."""
        self._start()
        if self.table is None:
            return {"code": "", "saved": True}
        assert self._save_lock is not None
        async with self._save_lock:
            if self.saved < self.version:
                version = self.version
                if await self._write():
                    self.saved = version
            return {"code": self.code, "saved": self.saved >= self.version}

    async def endpoint(self) -> dict[str, Any] | None:
        """Where this incarnation serves its data plane (None: no table here). Listening starts
        with the first ask, so pooled actors hold no port."""
        self._start()
        if self.table is None or self.lost:
            return None
        if self._listening is None:
            self._listening = asyncio.get_running_loop().create_task(self._listen())
        host, port = await asyncio.shield(self._listening)
        return {"host": host, "port": port, "incarnation": self.incarnation}

    async def _listen(self) -> tuple[str, int]:
        host = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
        secret = await asyncio.to_thread(link_secret, self.redis_url)
        self.link = LinkServer(self, secret, self.incarnation, LINK_SILENCE_S)
        port = await self.link.start(host, port_range(os.environ.get(PORTS_ENV, DEFAULT_PORTS)))
        log.info("table %s: data plane on %s:%d", self.code, host, port)
        return host, port

    async def open(
        self,
        code: str,
        config: dict[str, Any],
        host: str,
        name: str,
        idle: tuple[float, ...],
        replay_ttl: int = DEFAULT_REPLAY_TTL_S,
    ) -> dict[str, Any]:
        """Give this pooled actor its table; the creator takes seat 0 and hosts. `idle`: how
        long the table lives once over, in its lobby, and with nobody connected; `replay_ttl`:
        how long its replay is kept after its last event."""
        if self.table is not None:
            return {"ok": False, "error": {"code": "not_allowed", "message": "already open"}}
        config = dict(config)
        policy = str(config.pop("bot_policy", "smart"))
        table = Table(TableConfig(code=code, **config))
        outs = table.apply(TakeSeat(seat=0, player_id=host, name=name), now_ms())
        self.code, self.table, self.bots = code, table, BotDriver(table, policy)
        self.over_idle_s, self.lobby_idle_s, self.abandoned_idle_s = (*idle, *DEFAULT_IDLE[2:])[:3]
        self.replay_ttl_s = int(replay_ttl)
        # A pooled actor may have waited long: its table's idle clock starts now.
        self.last_activity = time.monotonic()
        self._start()
        assert self._redis is not None
        await self._redis.set(keys.actor(self.name), code, ex=KEY_TTL_S)
        self._commit(outs, "")
        await self._save_and_publish()
        self._touch()
        return {"ok": True, "summary": table.summary()}

    async def summary(self) -> dict[str, Any] | None:
        self._start()
        if self.table is None:
            return None
        return {**self.table.summary(), "watching": self.watching()}

    def watching(self) -> int:
        return len(self.watchers) + sum(self.watching_at.values())

    def _watching_changed(self) -> None:
        """Announce the new count later, once, whatever arrives meanwhile."""
        if self._announcing is None or self._announcing.done():
            self._announcing = asyncio.get_running_loop().create_task(self._announce_watching())

    async def _announce_watching(self) -> None:
        await asyncio.sleep(WATCHING_ANNOUNCE_S)
        count = self.watching()
        if self.table is None or count == self.watching_told:
            return
        self.watching_told = count
        self.version += 1
        self.feed.append("all", -1, {"type": "watching", "count": count}, now_ms(), "")
        await self._save_and_publish()

    def _view(self, seat: int | None) -> dict[str, Any]:
        """A `welcome` snapshot: the engine's view of a seat (None: the public one), with
        **(ext)** `table_id` (the name of this table's replay) and how many watch."""
        assert self.table is not None
        return {**self.table.view(seat), "table_id": self.name, "watching": self.watching()}

    async def seat_of(self, player_id: str) -> dict[str, Any] | None:
        """Where `player_id` sits here: `{"seat", "players", "phase"}`; None when they hold no
        seat (or the actor has no table)."""
        self._start()
        seat = None if self.table is None else self.table.seat_of(player_id)
        if self.table is None or seat is None:
            return None
        summary = self.table.summary()
        return {"seat": seat, "players": summary["players"], "phase": summary["phase"]}

    async def serve(self, request: Request) -> Reply:
        """One request of a gateway, from either plane (`LinkServer`, or a Ray call)."""
        self._start()
        if isinstance(request, Act):
            return await self._act(request)
        if isinstance(request, Join):
            return await self._join(request)
        if isinstance(request, Leave):
            return await self._leave(request)
        return self._views(request)

    async def _act(self, req: Act) -> Outcome:
        """Judge one command of a seated player. The answer: `ok`, the `error` (wire) when
        refused, and the events it caused (those go to its gateway here, not through its
        stream)."""
        if req.cmd_id in self.done:
            return _outcome(self.done[req.cmd_id], replayed=True)
        if self.table is None:
            return Outcome(False, NOT_OPEN)
        t = self.table
        now = now_ms()
        if req.expires is not None and now > req.expires:
            # Held in a dead link, delivered late: its player was told it did not happen.
            late = Outcome(False, EXPIRED, t.seat_of(req.player_id))
            self._remember(req.cmd_id, late)
            return late
        error: ErrorBody | None = None
        command: Command
        seat = t.seat_of(req.player_id)
        if req.kind not in SEATLESS_KINDS and seat is None:
            return Outcome(False, NO_SEAT)

        owners = t.owners()
        watchable = t.settings.watchers
        origin = req.origin
        args = req.args
        try:
            if req.kind == "take_seat":
                command = TakeSeat(seat=args["seat"], player_id=req.player_id, name=args["name"])
            elif req.kind == "claim_seat":
                # The seat is handed to a watching connection (4411), so one must be there,
                # known to this actor (a `claimant` hello), and leaving ends the request.
                command = ClaimSeat(
                    seat=args["seat"],
                    player_id=req.player_id,
                    name=args["name"],
                    watching=req.player_id in self.watcher_of.values(),
                )
            elif req.kind == "cancel_claim":
                command = CancelClaim(seat=-1, player_id=req.player_id)
            else:
                assert seat is not None
                command = command_from_frame(req.kind, seat, req.args)
            entries = self._commit(t.apply(command, now), origin)
        except Refusal as refusal:
            entries = self._commit(refusal.events, origin) if refusal.events else []
            error = ErrorBody.from_wire(refusal.to_wire())
        entries += self._release_changed_seats(owners, now)
        if watchable and not t.settings.watchers:
            entries += self._close_watchers(now)
        self._touch()
        # Remembered before saving, so the saved snapshot knows this id if we die right after.
        reply = Outcome(error is None, error, t.seat_of(req.player_id), tuple(entries))
        self._remember(req.cmd_id, reply)
        if entries or error is None:
            await self._save_and_publish()
        return reply

    async def _join(self, req: Join) -> Joined | Outcome:
        """A player's connection (re)takes their seat (R25): the answer is their snapshot and
        the seq it stands at. An older connection to the same seat is told to go (4409)."""
        if self.table is None:
            return Outcome(False, NOT_OPEN)
        t = self.table
        if req.watch:
            # Nothing changes at the table: a watcher is no seat's connection (R30: it gets the
            # public view, and the stream's public and watchers' events only). Gateways of today
            # ask with Views instead, once for many watchers.
            if not t.settings.watchers:
                return Outcome(False, WATCHING_OFF)
            self.watchers[req.conn] = req.origin
            self.watcher_of[req.conn] = req.player_id
            self._watching_changed()
            # Theirs only: which bot's seat they asked for (joining late), so a reload knows.
            view = {**self._view(None), "my_claim": t.claim_of(req.player_id)}
            return Joined(WATCHING, WATCHING, view, self.feed.seq)
        seat = t.seat_of(req.player_id)
        if seat is None:
            return Outcome(False, NO_SEAT)
        old = self.conns.get(seat)
        self.conns[seat] = req.conn
        now = now_ms()
        entries = self._commit(t.apply(Connect(seat=seat), now), req.origin)
        if old is not None and old != req.conn:
            entries.append(self._close_conn(old, CLOSE_REPLACED, now))
        self._touch()
        await self._save_and_publish()
        return Joined(
            seat, team_of(seat, t.players), self._view(seat), self.feed.seq, tuple(entries)
        )

    async def _leave(self, req: Leave) -> Outcome:
        if req.conn in self.watchers:
            entries = self._stop_watching(req.conn, now_ms())
            if entries:
                self._touch()
                await self._save_and_publish()
            return Outcome(True, events=tuple(entries))
        seat = next((s for s, c in self.conns.items() if c == req.conn), None)
        if seat is None or self.table is None:
            return Outcome(True)
        del self.conns[seat]
        origin = req.origin
        entries = self._commit(self.table.apply(Disconnect(seat=seat), now_ms()), origin)
        self._touch()
        await self._save_and_publish()
        return Outcome(True, events=tuple(entries))

    def _views(self, req: Views) -> ViewSet:
        """Fresh snapshots for a gateway that lost track, all at one seq: one per (seat,
        player) asked for, and only while that player still holds that seat (R30)."""
        if self.table is None:
            return ViewSet(self.feed.seq, now_ms())
        t = self.table
        if req.watching is not None and req.origin:
            self._count_watchers(req.origin, req.watching)
        seats = {s for s, player in req.wanted if t.seat_of(player) == s}
        owners = t.owners()
        seq = self.feed.seq
        joined = {s: Joined(s, team_of(s, t.players), self._view(s), seq) for s in seats}
        if t.settings.watchers and any(s == WATCHING for s, _ in req.wanted):
            joined[WATCHING] = Joined(WATCHING, WATCHING, self._view(None), seq)
        return ViewSet(seq, now_ms(), joined, {s: str(owners[s]) for s in seats})

    def _count_watchers(self, gateway: str, count: int) -> None:
        count = max(0, count) if self.table is not None and self.table.settings.watchers else 0
        if count:
            self.watching_at[gateway] = count
        else:
            self.watching_at.pop(gateway, None)
        self._watching_changed()

    # -- subscriptions -----------------------------------------------------------------------
    async def subscribe(self, gateway: str, after: int) -> AsyncIterator[Batch]:
        """The control plane's way to follow the table (a Ray streaming generator, renewed
        every few seconds): what gateways used before the data plane, kept for A/B runs
        (`QUATRO_DATA_PLANE=ray`). A lease that runs out means its gateway died."""
        self._start()
        async for batch in self.follow(gateway, after, True):
            yield batch

    async def follow(self, gateway: str, after: int, leased: bool) -> AsyncIterator[Batch]:
        """Batches of events for one gateway. The first replays everything after `after` (or
        says `resync` when the log no longer holds it); later ones leave out the events of
        this gateway's own commands, which reached it in their replies."""
        sub = self.feed.subscribe(gateway, after)
        self._gone_checks.pop(gateway, None)
        expired = False
        try:
            upto = self.feed.published
            if after < 0:  # a new follower: from now on
                yield Batch((), upto)
            elif self.feed.covers(after):
                yield Batch(tuple(self.feed.since(after, upto)), upto)
            else:
                yield Batch((), upto, resync=True)
            sub.sent = upto
            while not sub.ended:
                remaining = sub.lease_until - time.monotonic() if leased else None
                if remaining is not None and remaining <= 0:
                    expired = True
                    break
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await sub.wake.wait()
                sub.wake.clear()
                if sub.ended:
                    break
                upto = self.feed.published
                batch = self.feed.since(sub.sent, upto, skip_origin=gateway)
                sub.sent = upto
                if batch:
                    yield Batch(tuple(batch))
        finally:
            current = self.feed.drop(sub)
            if current and expired:
                await self._gateway_gone(gateway)

    async def renew(self, gateway: str) -> bool:
        sub = self.feed.subs.get(gateway)
        if sub is not None:
            sub.renew()
        return sub is not None

    async def unsubscribe(self, gateway: str) -> None:
        sub = self.feed.subs.get(gateway)
        if sub is not None:
            sub.ended = True
            sub.wake.set()

    def link_ended(self, gateway: str, orderly: bool) -> None:
        """A gateway's data-plane connection closed. Said goodbye: nothing to do. Otherwise it
        may be back in a moment (a blip, a restart of ours it is catching up with); if it is
        not back within the lease, its players are disconnected."""
        if gateway in self.feed.subs:
            return
        if orderly:
            # Its hub stopped: none of its watchers is left.
            if self.watching_at.pop(gateway, None) is not None:
                self._watching_changed()
            return
        task = asyncio.get_running_loop().create_task(self._gone_after_grace(gateway))
        self._gone_checks[gateway] = task

    async def _gone_after_grace(self, gateway: str) -> None:
        await asyncio.sleep(LEASE_S)
        if self._gone_checks.get(gateway) is asyncio.current_task():
            del self._gone_checks[gateway]
            if gateway not in self.feed.subs:
                await self._gateway_gone(gateway)

    async def _gateway_gone(self, gateway: str) -> None:
        """A gateway died without saying so. Its players are disconnected."""
        if self.table is None:
            return
        log.info("table %s: gateway %s gone (lease of %.0f s)", self.code, gateway, LEASE_S)
        now = now_ms()
        for conn, origin in list(self.watchers.items()):
            if origin == gateway:
                self._stop_watching(conn, now)
        if self.watching_at.pop(gateway, None) is not None:
            self._watching_changed()
        for seat, conn in list(self.conns.items()):
            if conn.startswith(gateway + "/"):
                del self.conns[seat]
                self._commit(self.table.apply(Disconnect(seat=seat), now), "")
        await self._save_and_publish()


def _outcome(saved: dict[str, Any], replayed: bool) -> Outcome:
    error = saved.get("error")
    return Outcome(
        bool(saved.get("ok")),
        None if error is None else ErrorBody.from_wire(error),
        saved.get("seat"),
        replayed=replayed,
    )


def record_json(actor_name: str, players: int) -> str:
    """The directory's record of a table: how gateways find its actor."""
    return json.dumps({"table_id": actor_name, "actor": actor_name, "players": players})


def migrate(snap: Any) -> dict[str, Any]:
    """A snapshot of any known format, in today's layout. Raises SnapshotUnreadable for one
    that is not a snapshot or comes from a newer (unknown) format."""
    if not isinstance(snap, dict):
        raise SnapshotUnreadable("not a JSON object")
    version = snap.get("format", 1)
    if version == 1:
        # Format 1 differs only by its missing version and its log entries without holders
        # (entry_from_json gives those none), and by a two-value idle.
        snap = {**snap, "format": SNAPSHOT_FORMAT}
        version = SNAPSHOT_FORMAT
    if version != SNAPSHOT_FORMAT:
        raise SnapshotUnreadable(f"unknown snapshot format {version!r}")
    return dict(snap)


def actor_class(max_concurrency: int = 1000) -> Any:
    """The Ray actor class: no CPU, one `table_slot`, restarted forever, commands never
    retried by Ray (the gateway retries with the same command id instead). Tables spread over
    the nodes that offer slots: Ray's default would fill the gateway's own node to half its
    slots first, leaving the others idle while it queues for CPU."""
    options: dict[str, Any] = {
        "num_cpus": 0,
        "resources": {"table_slot": 1},
        "scheduling_strategy": "SPREAD",
        "max_restarts": -1,
        "max_task_retries": 0,
        "max_concurrency": max_concurrency,
    }
    return ray.remote(**options)(TableActor)
