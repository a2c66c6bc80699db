"""What a new incarnation of a table actor finds in Redis, read once when it starts: its table's
code, snapshot and recent log, and what the table's record says of it (its id, its moves, the
actor it now belongs to). Blocking on purpose: it runs before the actor takes any call.

Redis may be restarting or its primary failing over then: the read waits for it rather than come
back without the table, since an exception here ends the actor for good (Ray does not restart a
failed creation). A table of an older release is found under the names before hash tags and its
replay moved to the new ones; a table whose snapshot cannot be read is buried: its records go,
and a tombstone tells its players why (`table_lost`).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass

import redis
from redis.exceptions import ClusterError, TryAgainError

from actors import keys, legacy_keys
from actors.store_scripts import BURY, RESTORE
from cluster.redis_client import RedisSettings, SyncRedis, sync_redis

log = logging.getLogger("quatro.table")

RESTORE_WAIT_S = 120.0
RESTORE_ERRORS = (redis.ConnectionError, redis.TimeoutError, ClusterError, TryAgainError)
LOST_TTL_S = 24 * 3600  # how long `hello` can still say why a lost table is gone


@dataclass(frozen=True)
class Found:
    """What `read` found for one actor. `saved`: the table's code, snapshot and log (None: no
    table to restore). `superseded`: the table's record names another actor (it was moved into
    a pooled actor while this one was cut off or dead), so this one serves nothing and ends."""

    saved: tuple[str, str, list[str]] | None
    table_id: str
    moves: int = 0
    alive_at: int | None = None  # the table time its last incarnation knew itself alive
    legacy: bool = False  # found under the names before hash tags (actors/legacy_keys.py)
    superseded: bool = False


def read(name: str, settings: RedisSettings) -> Found:
    """The table actor `name`'s table as Redis holds it, waiting up to `RESTORE_WAIT_S` for a
    Redis that does not answer."""
    deadline = time.monotonic() + RESTORE_WAIT_S
    delay = 0.1
    while True:
        try:
            return _read(name, settings)
        except RESTORE_ERRORS:
            if time.monotonic() > deadline:
                raise
            log.warning("table actor %s: Redis unreachable, retrying", name)
            time.sleep(delay)
            delay = min(delay * 2, 2.0)


def _read(name: str, settings: RedisSettings) -> Found:
    r = sync_redis(settings)
    try:
        code = r.get(keys.actor(name))
        if not code:
            return Found(None, name)
        code = str(code)
        pipe = RESTORE.on(r)
        pipe.get(keys.snapshot(code))
        pipe.lrange(keys.log(code), 0, -1)
        pipe.get(keys.table(code))
        pipe.get(keys.alive(code))
        raw, entries, record, alive = RESTORE.run_sync(pipe)
        alive_at = int(alive) if alive and str(alive).isdigit() else None
        legacy = False
        if raw is None:
            # Saved by an older release, under the names before hash tags: moved from there.
            raw = r.get(legacy_keys.snapshot(code))
            if raw is None:
                return Found(None, name, alive_at=alive_at)
            entries = r.lrange(legacy_keys.log(code), 0, -1)
            record = r.get(keys.table(code)) or r.get(legacy_keys.table(code))
            legacy = True
            _move_replay(settings, code, name)
        moves = moves_of(record)
        actor, table_id, moving = names_of(record)
        # Mid-move (actors/rescue.py) the table is the pooled actor's that `moving` names.
        mine = moving == name if moving else actor in ("", name)
        if not mine:
            log.warning("table %s: moved into actor %s; this one ends", code, moving or actor)
            return Found(None, name, moves, alive_at, legacy, superseded=True)
        saved = (code, str(raw), [str(x) for x in entries])
        return Found(saved, table_id or name, moves, alive_at, legacy)
    finally:
        r.close()


def _move_replay(settings: RedisSettings, code: str, table_id: str) -> None:
    """A table of an older release (whose id was its actor's name): its replay and the
    replay's meta under the new names, before this incarnation appends to them (DUMP and
    RESTORE keep each value and TTL; a key already there is this release's and stays)."""
    r = sync_redis(settings, decode=False)
    try:
        for old, new in (
            (legacy_keys.replay(table_id), keys.replay(code, table_id)),
            (legacy_keys.replay_meta(table_id), keys.replay_meta(code, table_id)),
        ):
            if move_key(r, old, new):
                log.info("table %s: %s moved to %s", code, old, new)
    finally:
        r.close()


def bury(name: str, settings: RedisSettings, code: str, why: str, legacy: bool) -> None:
    """The table cannot come back: say so loudly, delete its records so that no gateway
    waits for it, and leave a tombstone that tells its players why (`table_lost`)."""
    log.error(
        "TABLE %s IS LOST: its saved state cannot be read (%s). Its records are deleted; "
        "its players are told `table_lost`.",
        code,
        why,
    )
    r = sync_redis(settings)
    try:
        names = [keys.table(code), keys.snapshot(code), keys.log(code), keys.lost(code)]
        BURY.run_sync(r, names, [why[:200], LOST_TTL_S])
        r.delete(keys.actor(name))
        if legacy:
            for key in (legacy_keys.table(code), legacy_keys.snapshot(code)):
                r.delete(key)
            r.delete(legacy_keys.log(code))
    finally:
        r.close()


def move_key(r: SyncRedis, old: str, new: str) -> bool:
    """Give `old`'s value and TTL to `new` unless `new` exists, then delete `old` (DUMP and
    RESTORE: the two may be of different slots, or different servers). A binary client."""
    dumped = r.dump(old)
    if dumped is None:
        return False
    ttl = r.pttl(old)
    try:
        r.restore(new, max(int(ttl), 0), dumped)
    except redis.ResponseError as exc:
        if "BUSYKEY" not in str(exc):
            raise
        r.delete(old)
        return False
    r.delete(old)
    return True


def moves_of(raw: str | bytes | None) -> int:
    """The moves a table record counts (0: none, or no readable record)."""
    if raw is None:
        return 0
    try:
        record = json.loads(raw)
        return int(record.get("moves", 0)) if isinstance(record, dict) else 0
    except (ValueError, TypeError):
        return 0


def names_of(raw: str | bytes | None) -> tuple[str, str, str]:
    """The actor, the table id and the actor taking the table over (actors/rescue.py) a table
    record names ("" for none, or no readable record)."""
    if raw is None:
        return "", "", ""
    try:
        record = json.loads(raw)
    except (ValueError, TypeError):
        return "", "", ""
    if not isinstance(record, dict):
        return "", "", ""
    actor, table_id, moving = (str(record.get(k) or "") for k in ("actor", "table_id", "moving"))
    return actor, table_id, moving
