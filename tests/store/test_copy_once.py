"""`python -m cluster.redis_keys copy --once`, as the chart's init container runs it at every
gateway's start: the first start copies the standalone's data into the cluster, the later ones
leave the cluster alone (a second copy would bring back what the cluster deleted since), and a
copier that died before it was done lets the next one copy. Real redis-servers, the command run
as the chart runs it (source from the environment, target from REDIS_URL)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import redis

from actors import keys, legacy_keys
from cluster.procs import RedisServer
from cluster.redis_client import SyncRedis, sync_redis
from cluster.redis_cluster import LocalRedisCluster
from cluster.redis_keys import MARKER, MIGRATE_FROM
from tests.conftest import ROOT


@pytest.fixture
def standalone() -> Iterator[RedisServer]:
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.cleanup()


def redis_keys(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m cluster.redis_keys ARGS` as an operator or the chart runs it."""
    return subprocess.run(
        [sys.executable, "-m", "cluster.redis_keys", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def copy_once(source: str, target: str) -> subprocess.CompletedProcess[str]:
    return redis_keys({**os.environ, MIGRATE_FROM: source, "REDIS_URL": target}, "copy", "--once")


def test_the_copy_runs_once_for_a_cluster(
    standalone: RedisServer, redis_cluster: LocalRedisCluster
) -> None:
    code = "ONCE42"
    session = keys.session("f" * 64)
    old = redis.Redis.from_url(standalone.url, decode_responses=True)
    with sync_redis(redis_cluster.url) as new:
        copied(old, new, standalone, redis_cluster, code, session)
    old.close()


def copied(
    old: redis.Redis,
    new: SyncRedis,
    standalone: RedisServer,
    redis_cluster: LocalRedisCluster,
    code: str,
    session: str,
) -> None:
    try:
        old.set(legacy_keys.snapshot(code), "snap-1")
        old.set(session, "a session", ex=3600)
        # A copier that died: its claim is there, not done; the next start copies.
        new.set(MARKER, "copying", ex=1)

        first = copy_once(standalone.url, redis_cluster.url)
        assert first.returncode == 0, first.stderr
        assert "2 keys copied" in first.stdout, first.stdout
        assert new.get(keys.snapshot(code)) == "snap-1"
        assert new.get(MARKER) == "done"

        # Play goes on in the cluster: the session signed out, the table saved anew. A gateway
        # restarting later must not bring the standalone's stale copies back.
        new.delete(session)
        new.set(keys.snapshot(code), "snap-2")
        again = copy_once(standalone.url, redis_cluster.url)
        assert again.returncode == 0, again.stderr
        assert "nothing to do" in again.stdout, again.stdout
        assert new.get(session) is None
        assert new.get(keys.snapshot(code)) == "snap-2"
    finally:
        for key in (MARKER, keys.snapshot(code), session):
            new.delete(key)


def test_copy_needs_a_source() -> None:
    done = redis_keys({k: v for k, v in os.environ.items() if k != MIGRATE_FROM}, "copy")
    assert done.returncode == 2
    assert MIGRATE_FROM in done.stderr
