"""The operator's commands for the store's keys (docs/operations.md, "The store"):

    python -m cluster.redis_keys count-legacy [--redis URL]
    python -m cluster.redis_keys copy [--from URL] [--to URL] [--from-ca-file F] [--to-ca-file F]
                                      [--once]

`count-legacy` counts the keys still under the names before hash tags (actors/legacy_keys.py):
they go by themselves (a table's as its actor of this release saves it, every one by its TTL),
and the release that drops their readers needs this to say 0.

`copy` moves a deployment to another store — a single Redis to a Redis Cluster, say — while
its gateways and table actors are stopped: every `quatro:*` key with its value and TTL (DUMP
and RESTORE, so any type and any size), a key under an old name given its new one. Run it
again and it copies again (what the target holds is replaced): it is idempotent. REDIS_URL's
companion settings (REDIS_USERNAME, REDIS_PASSWORD…) apply to both ends unless a URL names its
own credentials; a CA file may be given for each end. `--from` defaults to
QUATRO_REDIS_MIGRATE_FROM (so that a password is not on a command line, where `ps` shows it),
`--to` to REDIS_URL and its companions.

`--once` is for a copy that runs by itself at every gateway's start (the chart's
`redis.migrateFromStandalone`): the first to start claims a marker in the target, copies, and
marks it done; the others wait for that, and every later start does nothing. A second copy
later on would bring back, from the standalone's stale data, what the cluster has since deleted
(a session signed out, a table ended) or overwrite newer saves. A claim whose copier died
expires after `CLAIM_S`, and the next start copies again.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace

import redis

from actors import keys, legacy_keys
from cluster.redis_client import RedisSettings, SyncRedis, scan_all, sync_redis
from cluster.settings import Settings

LEGACY_PATTERNS = ("quatro:table:*", "quatro:snap:*", "quatro:log:*", "quatro:lost:*")
LEGACY_REPLAYS = ("quatro:replay:*", "quatro:replay-meta:*")
NEW_NAMES = {
    "table": keys.table,
    "snap": keys.snapshot,
    "log": keys.log,
    "lost": keys.lost,
}


MARKER = "quatro:copied-from-standalone"  # "copying" while claimed, then "done"
CLAIM_S = 600
MIGRATE_FROM = "QUATRO_REDIS_MIGRATE_FROM"


def count_legacy(r: SyncRedis) -> Counter[str]:
    """Keys under the names before hash tags, by kind."""
    found: Counter[str] = Counter()
    for pattern in (*LEGACY_PATTERNS, *LEGACY_REPLAYS):
        for key in scan_all(r, pattern):
            name = key.decode() if isinstance(key, bytes) else key
            if legacy_keys.TABLE.match(name) or legacy_keys.REPLAY.match(name):
                found[name.split(":")[1]] += 1
    return found


def new_name(source: SyncRedis, key: str) -> tuple[str, str | None]:
    """The key's name in this release, and the code a replay's table had (for the actor's
    record through which a replay is found); the key itself when it is not of the old names."""
    table = legacy_keys.TABLE.match(key)
    if table:
        return NEW_NAMES[table.group(1)](table.group(2)), None
    replay = legacy_keys.REPLAY.match(key)
    if replay:
        kind, table_id = replay.groups()
        raw = source.get(legacy_keys.replay_meta(table_id))
        code = str(json.loads(raw)["code"]) if raw else ""
        if not code:
            return key, None  # a replay without its meta is unreadable anyway: copied as is
        if kind == "replay":
            return keys.replay(code, table_id), code
        return keys.replay_meta(code, table_id), code
    return key, None


@dataclass
class Copied:
    keys: int = 0
    renamed: int = 0
    skipped: list[str] = field(default_factory=list)  # old names whose new one exists there


def copy(source: SyncRedis, target: SyncRedis) -> Copied:
    """Every `quatro:*` key of `source` into `target` (binary clients)."""
    done = Copied()
    for raw_key in scan_all(source, "quatro:*"):
        key = raw_key.decode() if isinstance(raw_key, bytes) else raw_key
        dumped = source.dump(key)
        if dumped is None:
            continue  # expired meanwhile
        ttl = max(int(source.pttl(key)), 0)
        name, code = new_name(source, key)
        if name != key:
            if source.exists(name):
                done.skipped.append(key)  # this release saved it already: that one wins
                continue
            done.renamed += 1
            if code is not None and not source.exists(keys.actor(key.split(":", 2)[2])):
                table_id = key.split(":", 2)[2]
                target.set(keys.actor(table_id), code, px=ttl or None)
        target.restore(name, ttl, dumped, replace=True)
        done.keys += 1
    return done


def copy_once(
    source: SyncRedis, target: SyncRedis, wait_s: float = CLAIM_S, poll_s: float = 1.0
) -> Copied | None:
    """`copy` unless the target was copied into already: None when another copier did it (or
    does it now: this waits for it, up to `wait_s`)."""
    deadline = time.monotonic() + wait_s
    while not target.set(MARKER, b"copying", nx=True, ex=CLAIM_S):
        if target.get(MARKER) == b"done":
            return None
        if time.monotonic() > deadline:
            raise TimeoutError(f"another copier holds {MARKER} for over {wait_s:.0f} s")
        time.sleep(poll_s)
    try:
        done = copy(source, target)
    except BaseException:
        target.delete(MARKER)  # the next start copies again
        raise
    target.set(MARKER, b"done")
    return done


def _store(url: str | None, ca_file: str | None) -> RedisSettings:
    settings = Settings() if url is None else Settings(redis_url=url)
    store = settings.store()
    return replace(store, ca_file=ca_file) if ca_file else store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cluster.redis_keys")
    commands = parser.add_subparsers(dest="command", required=True)
    count = commands.add_parser("count-legacy", help="keys still under the old names")
    count.add_argument("--redis", help="REDIS_URL by default")
    move = commands.add_parser("copy", help="every quatro:* key to another store")
    move.add_argument("--from", dest="source", help=f"${MIGRATE_FROM} by default")
    move.add_argument("--to", dest="target", help="REDIS_URL by default")
    move.add_argument("--once", action="store_true", help="once for the target, ever")
    move.add_argument("--from-ca-file")
    move.add_argument("--to-ca-file")
    args = parser.parse_args(argv)
    if args.command == "count-legacy":
        store = _store(args.redis, None)
        with sync_redis(store) as r:
            found = count_legacy(r)
        print(f"{store.masked()}: {sum(found.values())} keys under the old names {dict(found)}")
        return 0
    source_url = args.source or os.environ.get(MIGRATE_FROM)
    if not source_url:
        parser.error(f"copy: --from or ${MIGRATE_FROM} names the store to copy from")
    source_store = _store(source_url, args.from_ca_file)
    target_store = _store(args.target, args.to_ca_file)
    try:
        with (
            sync_redis(source_store, decode=False) as source,
            sync_redis(target_store, decode=False) as target,
        ):
            done = copy_once(source, target) if args.once else copy(source, target)
    except (redis.RedisError, TimeoutError) as exc:
        print(f"!! copy failed: {exc}", file=sys.stderr)
        return 1
    if done is None:
        print(f"{target_store.masked()}: copied into already ({MARKER}), nothing to do")
        return 0
    print(
        f"{source_store.masked()} -> {target_store.masked()}: {done.keys} keys copied, "
        f"{done.renamed} under their new names, {len(done.skipped)} old ones left (saved anew)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
