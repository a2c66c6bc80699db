"""A table's records in Redis: its snapshot and recent log (read back by a restarted
incarnation), its replay (every event, kept after the table stops), and the directory's record.

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
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio as aioredis

from actors import keys
from actors.orders import is_order
from actors.protocol import Entry, entry_from_json
from cluster.redis_client import async_redis
from engine import Table, TableConfig

log = logging.getLogger("quatro.table")

STORED_LOG = 256  # events kept in Redis for resubscription after a restart
KEY_TTL_S = 24 * 3600  # refreshed at every save; a stopped table's keys go in minutes
STOPPED_TTL_S = 300
SAVE_TIMEOUT_S = 2.0
RESTORE_WAIT_S = 120.0
# The snapshot's layout. 1: before `format` existed; 2: adds it, and holders in the log.
SNAPSHOT_FORMAT = 2
LOST_TTL_S = 24 * 3600  # how long `hello` can still say why a lost table is gone
# over, lobby, abandoned: how long a table waits before it stops (see `Clock.idle_due`).
DEFAULT_IDLE = (600.0, 600.0, 1800.0)
# Replays: every event of the table, public and private, is appended to `keys.replay` (the REST
# endpoint filters by audience); the list is kept this long after the table's last event.
DEFAULT_REPLAY_TTL_S = 7 * 24 * 3600
# At most this many events per table are kept for its replay: a 4-seat match to 5 points makes
# from about 75 (quick calls: tests/cluster/test_replays.py) to a few hundred (rounds of swaps,
# every seat's deal and the watchers' copy), so this is a long evening of rematches. Past it
# the oldest are kept and the newest dropped, so every match stored stays whole from its start.
REPLAY_CAP = 20_000


# Whether a table record (raw JSON) says the table moved away from an incarnation of `cell`
# that found it after `moves` moves (actors/cells.py's MOVE sets the cell and counts one more).
FENCE = """
local function moved(raw, cell, moves)
  local ok, rec = pcall(cjson.decode, raw)
  if not ok or type(rec) ~= 'table' then return false end
  local named = rec['cell']
  if type(named) ~= 'string' then named = '' end
  return named ~= cell or (tonumber(rec['moves']) or 0) ~= tonumber(moves)
end
"""

# The save, as one script: SET the snapshot, append the new events to the log and the replay,
# renew the records. A write can be sent twice (its answer late: redis-py sends it again on a
# timeout, and so does the core's retry of a save it thinks failed): an event is appended only
# when its seq is past the last one its list holds, so no list ever holds one twice.
# The fence (cells, actors/cells.py): a save is refused (-1, nothing written) when the table
# record names another cell than this actor's, or counts more moves than it did when this
# incarnation found its table: the table was moved while this incarnation still ran (a
# partition), and the new one's saves are the table now. The count closes a -> b -> a, where a
# stale incarnation in a would see its own cell named again. No cells: '' and 0, as before.
# KEYS: snapshot, log, replay, replay meta, table record, actor record.
# ARGV: the snapshot, the records' ttl, the events the log keeps, the replay's cap, its ttl,
# its meta ('' when saved already: only renewed), the table record, the code, this actor's
# cell, the moves it knows of; then, for each new event: its seq, its JSON, and '1' when it
# belongs in the replay (orders do not).
SAVE = (
    """
"""
    + FENCE
    + """
local current = redis.call('GET', KEYS[5])
if current and moved(current, ARGV[9], ARGV[10]) then return -1 end
local function last_seq(key)
  local raw = redis.call('LINDEX', key, -1)
  if not raw then return -1 end
  return tonumber(cjson.decode(raw)[1])
end
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
local in_log, in_replay = last_seq(KEYS[2]), last_seq(KEYS[3])
local pushed_log, pushed_replay = 0, 0
for i = 11, #ARGV, 3 do
  local seq = tonumber(ARGV[i])
  if seq > in_log then
    redis.call('RPUSH', KEYS[2], ARGV[i + 1])
    pushed_log = pushed_log + 1
  end
  if ARGV[i + 2] == '1' and seq > in_replay then
    redis.call('RPUSH', KEYS[3], ARGV[i + 1])
    pushed_replay = pushed_replay + 1
  end
end
if pushed_log > 0 then redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1) end
redis.call('EXPIRE', KEYS[2], ttl)
if pushed_replay > 0 then redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[4]) - 1) end
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[5]))
if ARGV[6] == '' then
  redis.call('EXPIRE', KEYS[4], tonumber(ARGV[5]))
else
  redis.call('SET', KEYS[4], ARGV[6], 'EX', tonumber(ARGV[5]))
end
redis.call('SET', KEYS[5], ARGV[7], 'EX', ttl)
redis.call('SET', KEYS[6], ARGV[8], 'EX', ttl)
return pushed_log
"""
)

# The table stops: its records go and its snapshot and log expire, unless the table was moved
# (FENCE: those records are the new incarnation's now).
# KEYS: table record, actor record, snapshot, log, and with a cell its set of tables; ARGV: this
# actor's cell, the stopped TTL, the code, the moves it knows of.
RETIRE = (
    """
"""
    + FENCE
    + """
local current = redis.call('GET', KEYS[1])
if current and moved(current, ARGV[1], ARGV[4]) then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('EXPIRE', KEYS[3], tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[4], tonumber(ARGV[2]))
if ARGV[1] ~= '' then redis.call('SREM', KEYS[5], ARGV[3]) end
return 1
"""
)


class TableMoved(Exception):
    """This incarnation's save was refused: the table moved to another cell (SAVE's fence)."""


class SnapshotUnreadable(Exception):
    """The saved table cannot be read back (corrupt, or a format this code does not know)."""


@dataclass
class Saved:
    """A table as its snapshot and log had it."""

    table: Table
    seq: int
    entries: list[Entry]
    conns: dict[int, str]
    done: OrderedDict[str, dict[str, Any]]
    policy: str
    idle: tuple[float, ...]
    replay_ttl: int
    results: dict[str, Any]  # matches whose ratings are owed (actors/results.py)


def record_json(actor_name: str, players: int, cell: str = "", moves: int = 0) -> str:
    """The directory's record of a table: how gateways find its actor, and (with cells) which
    cell's Ray runs it and how many times it was moved there. No cell: the record is byte for
    byte what it was before cells."""
    record: dict[str, Any] = {"table_id": actor_name, "actor": actor_name, "players": players}
    if cell:
        record["cell"] = cell
    if moves:
        record["moves"] = moves
    return json.dumps(record)


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


def load(raw: str, raw_log: list[str]) -> Saved:
    """Rebuild the table from its snapshot and log; SnapshotUnreadable if they cannot be read.
    Older formats are migrated on the way in."""
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
        results = dict(snap.get("results") or {})  # saved before ratings existed: none owed
    except SnapshotUnreadable:
        raise
    except Exception as exc:  # whatever a damaged blob makes the parsers raise
        raise SnapshotUnreadable(f"{type(exc).__name__}: {exc}") from exc
    return Saved(table, seq, entries, conns, done, policy, idle, replay_ttl, results)


class TableStore:
    """The Redis side of one table actor (`name`) of `cell` and the table it holds (`code`)."""

    def __init__(self, name: str, redis_url: str, cell: str = "") -> None:
        self.name = name
        self.redis_url = redis_url
        self.cell = cell
        self.replay_meta_saved = False  # this incarnation wrote the replay's meta once
        # A save was refused: the table moved to another cell (SAVE's fence). For good.
        self.fenced = False
        # The moves the table's record counted when this incarnation found its table (FENCE):
        # 0 for a table it opened, the record's count for one it restored.
        self.moves = 0
        self._redis: aioredis.Redis | None = None
        self._script: Any = None
        self._retire_script: Any = None

    @property
    def redis(self) -> aioredis.Redis:
        """Made at the first use, on the actor's event loop (which __init__ does not run on)."""
        if self._redis is None:
            self._redis = async_redis(self.redis_url, SAVE_TIMEOUT_S)
        return self._redis

    @property
    def _save(self) -> Any:
        if self._script is None:
            self._script = self.redis.register_script(SAVE)
        return self._script

    def read(self) -> tuple[str, str, list[str]] | None:
        """The saved code, snapshot and log of this actor's table (plain blocking Redis: once,
        when an incarnation starts). Redis may be restarting too: wait for it rather than come
        back without the table (an exception here would end the actor for good: Ray does not
        restart a failed creation)."""
        deadline = time.monotonic() + RESTORE_WAIT_S
        delay = 0.1
        while True:
            try:
                return self._read()
            except (redis.ConnectionError, redis.TimeoutError):
                if time.monotonic() > deadline:
                    raise
                log.warning("table actor %s: Redis unreachable, retrying", self.name)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _read(self) -> tuple[str, str, list[str]] | None:
        r = redis.Redis.from_url(self.redis_url, decode_responses=True, socket_timeout=5)
        try:
            code = r.get(keys.actor(self.name))
            if not code:
                return None
            raw = r.get(keys.snapshot(str(code)))
            if raw is None:
                return None
            entries = [str(x) for x in r.lrange(keys.log(str(code)), 0, -1)]
            self.moves = moves_of(r.get(keys.table(str(code))))
        finally:
            r.close()
        return str(code), str(raw), entries

    def bury(self, code: str, why: str) -> None:
        """The table cannot come back: say so loudly, delete its records so that no gateway
        waits for it, and leave a tombstone that tells its players why (`table_lost`)."""
        log.error(
            "TABLE %s IS LOST: its saved state cannot be read (%s). Its records are deleted; "
            "its players are told `table_lost`.",
            code,
            why,
        )
        r = redis.Redis.from_url(self.redis_url, decode_responses=True, socket_timeout=5)
        try:
            pipe = r.pipeline(transaction=True)
            pipe.delete(keys.table(code), keys.actor(self.name))
            pipe.delete(keys.snapshot(code), keys.log(code))
            pipe.set(keys.lost(code), why[:200], ex=LOST_TTL_S)
            pipe.execute()
        finally:
            r.close()

    async def claim(self, code: str) -> None:
        """This actor holds `code` now: a restart finds the table through this key. What an
        earlier table of that code left (its log and snapshot expire minutes after it stopped,
        and the code may be given again) goes: a log is only appended past its last seq."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.delete(keys.snapshot(code), keys.log(code))
        pipe.set(keys.actor(self.name), code, ex=KEY_TTL_S)
        await pipe.execute()

    async def write(
        self, code: str, snapshot: dict[str, Any], new: list[Entry], players: int, replay_ttl: int
    ) -> bool:
        """Save the snapshot, append the events `new` since the last save to the log and the
        replay, and renew the records, at once (`SAVE`: sent twice, it appends nothing twice).
        The records are written anew, not only refreshed: after a loss of Redis data the table
        is found again by its code, and finds itself again after a restart. False (logged) when
        Redis failed, or when the table moved to another cell (`fenced` then says so)."""
        if self.fenced:
            return False
        blob = json.dumps(snapshot, separators=(",", ":"))
        meta = "" if self.replay_meta_saved else replay_meta(code, players)
        args: list[str | int] = [
            blob,
            KEY_TTL_S,
            STORED_LOG,
            REPLAY_CAP,
            replay_ttl,
            meta,
            record_json(self.name, players, self.cell, self.moves),
            code,
            self.cell,
            self.moves,
        ]
        for e in new:
            args += [e.seq, json.dumps(e), 0 if is_order(e.wire) else 1]
        replay = keys.replay(self.name)
        names = [keys.snapshot(code), keys.log(code), replay, keys.replay_meta(self.name)]
        try:
            async with asyncio.timeout(SAVE_TIMEOUT_S):
                pushed = await self._save(
                    keys=[*names, keys.table(code), keys.actor(self.name)], args=args
                )
        except (redis.RedisError, OSError, TimeoutError) as exc:
            log.warning("table %s: snapshot not saved (%s); will retry", code, exc)
            return False
        if int(pushed) < 0:
            self.fenced = True
            log.error(
                "table %s: the record names another cell than %r (the table was moved): this "
                "incarnation's save is refused and it ends",
                code,
                self.cell,
            )
            return False
        self.replay_meta_saved = True
        return True

    async def retire(self, code: str) -> None:
        """The table stops: nobody finds it any more, and its snapshot and log go in minutes
        (its replay does not: it outlives the table, and its last save set its ttl). Best
        effort: a Redis outage must not keep a stopped table alive."""
        if self._retire_script is None:
            self._retire_script = self.redis.register_script(RETIRE)
        names = [keys.table(code), keys.actor(self.name), keys.snapshot(code), keys.log(code)]
        if self.cell:
            names.append(keys.cell_tables(self.cell))
        with contextlib.suppress(redis.RedisError, OSError, TimeoutError):
            await self._retire_script(keys=names, args=[self.cell, STOPPED_TTL_S, code, self.moves])


def moves_of(raw: str | bytes | None) -> int:
    """The moves a table record counts (0: none, or no readable record)."""
    if raw is None:
        return 0
    try:
        record = json.loads(raw)
        return int(record.get("moves", 0)) if isinstance(record, dict) else 0
    except (ValueError, TypeError):
        return 0


def replay_meta(code: str, players: int) -> str:
    """What a replay starts from: the public view of this table before anyone sat (the
    engine's, so the client's reducer starts from the same shape as a live `welcome`)."""
    empty = Table(TableConfig(code=code, players=players, seed=0))
    meta = {"code": code, "players": players, "start": empty.view(None)}
    return json.dumps(meta, separators=(",", ":"))
