"""A table's records in Redis: its snapshot and recent log (read back by a restarted
incarnation), its replay (every event, kept after the table stops), and the directory's record.
The snapshot's layout is actors/snapshot.py's, the scripts actors/store_scripts.py's, the read
of a new incarnation (and the burial of a table that cannot come back) actors/store_restore.py's.

The snapshot holds scores, hands, signs, clocks and the recent command ids, so a command retried
by a gateway is never applied twice. Older snapshot formats are migrated on the way in; one that
cannot be read buries the table: its records go and a tombstone says why (`table_lost`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import redis

from actors import keys, legacy_keys, store_restore
from actors.orders import is_order
from actors.protocol import Entry
from actors.snapshot import DEFAULT_REPLAY_TTL_S, record_json
from actors.store_scripts import (
    BEAT,
    DELETE_IF_SAME,
    DURABLE_SAVE,
    RETIRE,
    SAVE,
)
from cluster.redis_client import (
    AsyncRedis,
    RedisSettings,
    async_redis,
    settings_of,
)
from cluster.redis_ops import run_waited
from engine import Table, TableConfig
from engine.events import MatchOver, Reveal

log = logging.getLogger("quatro.table")

STORED_LOG = 256  # events kept in Redis for resubscription after a restart
KEY_TTL_S = 24 * 3600  # refreshed at every save; a stopped table's keys go in minutes
STOPPED_TTL_S = 300
SAVE_TIMEOUT_S = 2.0
# At most this many events per table are kept for its replay: a 4-seat match to 5 points makes
# from about 75 (quick calls: tests/cluster/test_replays.py) to a few hundred (rounds of swaps,
# every seat's deal and the watchers' copy), so this is a long evening of rematches. Past it
# the oldest are kept and the newest dropped, so every match stored stays whole from its start.
REPLAY_CAP = 20_000


# Events scored or a match ended: their save waits for a replica before they are published.
DURABLE = frozenset({Reveal.type, MatchOver.type})
# A table whose replica did not answer a WAIT does not wait for one again for this long.
NO_REPLICA_BACKOFF_S = 30.0
# The actor's own record (`keys.actor`) is written again at least this often; it lives as long
# as the replay it names the code of, since a replay is found through it.
ACTOR_RECORD_EVERY_S = 3600.0


class TableMoved(Exception):
    """This incarnation's save was refused: the table moved, to another cell or off a lost node
    (SAVE's fence)."""


@dataclass(frozen=True)
class Written:
    """What a save did: `ok` (False: Redis failed, or the table moved: `fenced`), and
    `heal_from`, the seq after which Redis lost events this incarnation had written (a primary
    lost with writes its replica never got): write them again."""

    ok: bool
    heal_from: int | None = None
    replicated: bool = True  # a durable save: a replica has it (or none was waited for)


class TableStore:
    """The Redis side of one table actor (`name`) of `cell` and the table it holds (`code`)."""

    def __init__(self, name: str, store: str | RedisSettings, cell: str = "") -> None:
        self.name = name
        # The table's id (its replay's name, its matches' ids): given by `open` (the actor's
        # name when an older gateway opened it), read back by a restore, kept by an actor that
        # took it over off a lost node (actors/rescue.py).
        self.table_id = name
        # The table's record names another actor: this incarnation's table was moved into a
        # pooled actor while it was cut off or dead. It serves nothing, and ends.
        self.superseded = False
        self.settings = settings_of(store)
        self.cell = cell
        self.replay_meta_saved = False  # this incarnation wrote the replay's meta once
        # A save was refused: the table moved to another cell (SAVE's fence). For good.
        self.fenced = False
        # The moves the table's record counted when this incarnation found its table (FENCE):
        # 0 for a table it opened, the record's count for one it restored.
        self.moves = 0
        # Found under the names before hash tags (actors/legacy_keys.py): those go once this
        # incarnation's first save has written the table under the new ones.
        self.legacy = False
        self.replay_seq = -1  # the last seq this incarnation appended to the replay
        self.unreplicated = 0  # durable saves no replica confirmed in time
        self.writes = 0  # saves written
        self._actor_written = -float("inf")  # loop time the actor's record was last written
        self._no_replica_until = 0.0
        self._replay_ttl = DEFAULT_REPLAY_TTL_S
        self._redis: AsyncRedis | None = None
        # The table time its last incarnation last knew itself alive (`keys.alive`), as the
        # restore read it: None when none was written (actors/clock.py, the stall's start).
        self.alive_at: int | None = None

    @property
    def redis(self) -> AsyncRedis:
        """Made at the first use, on the actor's event loop (which __init__ does not run on)."""
        if self._redis is None:
            self._redis = async_redis(self.settings, self._save_timeout)
        return self._redis

    async def close(self) -> None:
        """The stopped table's connections go with it: a process that outlives the table (a
        test's) would otherwise keep a cluster client's connection to every node open."""
        client, self._redis = self._redis, None
        if client is not None:
            with contextlib.suppress(redis.RedisError, OSError):
                await client.aclose()

    @property
    def _save_timeout(self) -> float:
        """A save's time, with a scoring save's wait for its replica (a blocking WAIT)."""
        return SAVE_TIMEOUT_S + self.settings.wait_ms / 1000

    def read(self) -> tuple[str, str, list[str]] | None:
        """The saved code, snapshot and log of this actor's table, read once when an
        incarnation starts (blocking, waiting for Redis: actors/store_restore.py)."""
        found = store_restore.read(self.name, self.settings)
        self.alive_at, self.legacy, self.moves = found.alive_at, found.legacy, found.moves
        self.superseded = self.superseded or found.superseded
        if found.saved is not None:
            self.table_id = found.table_id
        return found.saved

    def bury(self, code: str, why: str) -> None:
        """The table cannot come back (its snapshot is unreadable): its records go, and a
        tombstone says why (actors/store_restore.py)."""
        store_restore.bury(self.name, self.settings, code, why, self.legacy)

    async def claim(self, code: str) -> None:
        """This actor holds `code` now: a restart finds the table through this key. What an
        earlier table of that code left (its log and snapshot expire minutes after it stopped,
        and the code may be given again) goes first: a log is only appended past its last seq,
        and a restart must never find another table's snapshot under its code."""
        await self.redis.delete(keys.snapshot(code), keys.log(code), keys.alive(code))
        for key in (legacy_keys.snapshot(code), legacy_keys.log(code)):
            await self.redis.delete(key)
        await self._write_actor(code)

    async def _write_actor(self, code: str) -> None:
        ttl = max(KEY_TTL_S, self._replay_ttl) + int(ACTOR_RECORD_EVERY_S) * 2
        await self.redis.set(keys.actor(self.name), code, ex=ttl)
        if self.table_id != self.name:  # the replay is found by its table id
            await self.redis.set(keys.actor(self.table_id), code, ex=ttl)
        self._actor_written = time.monotonic()

    async def write(
        self,
        code: str,
        snapshot: dict[str, Any],
        new: list[Entry],
        players: int,
        replay_ttl: int,
        after: int = -1,
    ) -> Written:
        """Save the snapshot, append the events `new` to the log and the replay, and renew the
        records, at once (`SAVE`: sent twice, it appends nothing twice). `after`: the last seq
        this incarnation knows it wrote to the log (-1: none, or do not check); a log or a
        replay that ends before what was written to it lost writes, and `heal_from` then says
        after which seq to write the events again (with `after=-1`). The records are written
        anew, not only refreshed: after a loss of Redis data the table is found again by its
        code, and finds itself again after a restart. A save with a point scored or a match
        ended waits for a replica (`WAIT`) before it returns, so that what it publishes
        outlives its primary. Not ok (logged) when Redis failed, or when the table moved to
        another cell (`fenced` then says so)."""
        if self.fenced:
            return Written(False)
        self._replay_ttl = replay_ttl
        blob = json.dumps(snapshot, separators=(",", ":"))
        meta = "" if self.replay_meta_saved else replay_meta(code, players)
        replay_after = self.replay_seq if after >= 0 else -1
        args: list[str | int] = [
            blob,
            KEY_TTL_S,
            STORED_LOG,
            REPLAY_CAP,
            replay_ttl,
            meta,
            record_json(self.name, players, self.cell, self.moves, self.table_id),
            self.cell,
            self.moves,
            after,
            replay_after,
        ]
        replayed = self.replay_seq
        for e in new:
            replayable = not is_order(e.wire)
            args += [e.seq, json.dumps(e), 1 if replayable else 0]
            if replayable:
                replayed = max(replayed, e.seq)
        names = [
            keys.snapshot(code),
            keys.log(code),
            keys.replay(code, self.table_id),
            keys.replay_meta(code, self.table_id),
            keys.table(code),
        ]
        durable = any(e.wire.get("type") in DURABLE for e in new)
        replicated = True
        try:
            async with asyncio.timeout(self._save_timeout if durable else SAVE_TIMEOUT_S):
                answer: list[Any]
                if durable and self._waits():
                    answer, replicated = await self._durable(names, args)
                else:
                    answer = await SAVE.run(self.redis, names, args)
                status, in_log, in_replay, had_record = (int(x) for x in answer)
                if status >= 0 and (not had_record or self._actor_stale()):
                    await self._write_actor(code)
        except (redis.RedisError, OSError, TimeoutError) as exc:
            log.warning("table %s: snapshot not saved (%s); will retry", code, exc)
            return Written(False)
        if status < 0:
            self.fenced = True
            log.error(
                "table %s: the record names another cell than %r (the table was moved): this "
                "incarnation's save is refused and it ends",
                code,
                self.cell,
            )
            return Written(False)
        self.replay_meta_saved = True
        self.writes += 1
        if status == 0:
            short = [
                seq for seq, wrote in ((in_log, after), (in_replay, replay_after)) if seq < wrote
            ]
            return Written(True, min(short, default=-1), replicated)
        self.replay_seq = replayed
        if self.legacy:
            await self._drop_legacy(code)
        return Written(True, None, replicated)

    async def beat(self, code: str, now: int) -> bool:
        """The table is alive at table time `now` (actors/clock.py): one write on its slot, so
        that a restored incarnation knows when the stall began; refused (and this incarnation
        fenced, as by a save) once the table moved away. Best effort, never waited for long: a
        beat lost only gives the players more time back."""
        if self.fenced:
            return False
        names = [keys.table(code), keys.alive(code)]
        try:
            async with asyncio.timeout(SAVE_TIMEOUT_S):
                done = int(
                    await BEAT.run(self.redis, names, [self.cell, self.moves, now, KEY_TTL_S])
                )
        except (redis.RedisError, OSError, TimeoutError):
            return False
        if done < 0:
            self.fenced = True
            log.error("table %s: moved away from this incarnation (its beat refused)", code)
        return done > 0

    def _actor_stale(self) -> bool:
        return time.monotonic() - self._actor_written > ACTOR_RECORD_EVERY_S

    def _waits(self) -> bool:
        """Whether a durable save waits for a replica: the store says how many (a cluster's
        primaries have one each by default), unless one recently did not answer."""
        return self.settings.replicas_to_wait() > 0 and time.monotonic() >= self._no_replica_until

    async def _durable(self, names: list[str], args: list[str | int]) -> tuple[list[Any], bool]:
        """SAVE then WAIT on the same connection (`run_waited`)."""
        wanted = self.settings.replicas_to_wait()
        waited = await run_waited(
            DURABLE_SAVE, SAVE, self.redis, names, args, wanted, self.settings.wait_ms
        )
        if not waited.replicated:
            self.unreplicated += 1
            self._no_replica_until = time.monotonic() + NO_REPLICA_BACKOFF_S
            log.warning(
                "table %s: no replica confirmed a scoring save within %d ms (%s); published "
                "anyway, and not waited for again for %.0f s",
                self.name,
                self.settings.wait_ms,
                waited.why(),
                NO_REPLICA_BACKOFF_S,
            )
        return list(waited.answer), waited.replicated

    async def _drop_legacy(self, code: str) -> None:
        """The table is saved under its new names: its old snapshot and log go, so that an
        incarnation of the older release never restores the stale copy. The old record stays
        until the table stops: gateways of the older release still find the actor by it."""
        with contextlib.suppress(redis.RedisError, OSError):
            await self.redis.delete(legacy_keys.snapshot(code))
            await self.redis.delete(legacy_keys.log(code))
            self.legacy = False
            log.info("table %s: moved to its new key names (hash tag)", code)

    async def retire(self, code: str) -> None:
        """The table stops: nobody finds it any more, and its snapshot and log go in minutes
        (its replay does not: it outlives the table, and its last save set its ttl, as the
        actor's record that names its code). Best effort: a Redis outage must not keep a
        stopped table alive."""
        names = [keys.table(code), keys.snapshot(code), keys.log(code), keys.alive(code)]
        with contextlib.suppress(redis.RedisError, OSError, TimeoutError):
            if not await RETIRE.run(self.redis, names, [self.cell, STOPPED_TTL_S, self.moves]):
                return
            if self.cell:
                await self.redis.srem(keys.cell_tables(self.cell), code)
            old = await self.redis.get(legacy_keys.table(code))
            if old is not None and f'"{self.name}"' in str(old):
                await self.redis.delete(legacy_keys.table(code))

    async def release(self, code: str) -> bool:
        """The stopped table `code` is not this actor's any more (it serves another next,
        actors/reuse.py): its record naming `code` goes, so that a restart finds no table, and
        this store's connections close. Only for a table whose id is not the actor's name: the
        replay is found by that record then. False when Redis did not answer."""
        assert self.table_id != self.name
        try:
            await DELETE_IF_SAME.run(self.redis, [keys.actor(self.name)], [code])
            return True
        except (redis.RedisError, OSError, TimeoutError) as exc:
            log.warning("table actor %s: its record of %s not released (%s)", self.name, code, exc)
            return False
        finally:
            await self.close()

    async def listed(self) -> bool | None:
        """Whether this table-less actor's name is on its cell's pool list (None: Redis did not
        answer, so it cannot tell)."""
        try:
            return await self.redis.lpos(keys.pool(self.cell), self.name) is not None
        except (redis.RedisError, OSError, TimeoutError):
            return None

    async def pooled(self) -> bool:
        """This table-less actor joins its cell's pool again (at the far end, as a new one
        does: `actors/pool_list.py`). False when Redis did not answer."""
        try:
            await self.redis.rpush(keys.pool(self.cell), self.name)
            return True
        except (redis.RedisError, OSError, TimeoutError) as exc:
            log.warning("table actor %s: not back in the pool (%s)", self.name, exc)
            return False


def replay_meta(code: str, players: int) -> str:
    """What a replay starts from: the public view of this table before anyone sat (the
    engine's, so the client's reducer starts from the same shape as a live `welcome`)."""
    empty = Table(TableConfig(code=code, players=players, seed=0))
    meta = {"code": code, "players": players, "start": empty.view(None)}
    return json.dumps(meta, separators=(",", ":"))
