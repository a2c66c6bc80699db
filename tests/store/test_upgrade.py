"""A live deployment on the key names before hash tags moves over to this release, with the real
code of the release before it: its gateway fills a Redis (sessions, a table with a point
scored, its replay, a pooled actor), then a gateway of this release takes over while the older
table actors still run and save under the old names (a rolling upgrade: gateways roll first,
workers later). Players keep their sessions and seats; the table plays on with its score, first
on its older actor, then on an actor of this release that moves it to the new names. Nothing is
migrated at a gateway's start, so any number of gateways may start at once."""

from __future__ import annotations

import json
import subprocess
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from actors import keys, legacy_keys
from actors.table_core import TableCore
from cluster.gateway_process import ROOT, GatewayProcess
from cluster.procs import RedisServer
from cluster.redis_client import async_redis, sync_redis
from cluster.redis_cluster import LocalRedisCluster
from cluster.redis_keys import copy, count_legacy
from gateway.routes.replays import READ, locate
from gateway.sessions import Sessions
from tests.cluster.client import Player
from tests.conftest import Stack
from tests.store.play import PARTNER, quatro, ready, rigged_table, score, start


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def release_before_hash_tags() -> str:
    """The commit of the release this one upgrades: the first-parent ancestor of HEAD just
    before the first commit that has actors/legacy_keys.py (on this branch, its parent; once
    merged, main before the merge)."""
    try:
        intro = git("log", "--diff-filter=A", "--format=%H", "--", "actors/legacy_keys.py")
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        raise AssertionError(f"this test needs the repository's git history: {exc}") from exc
    intro = intro.splitlines()[-1]
    after = set(git("rev-list", "--ancestry-path", f"{intro}..HEAD").split()) | {intro}
    for commit in reversed(git("rev-list", "--first-parent", "HEAD").split()):
        if commit in after:
            return git("rev-parse", f"{commit}^1")
    raise AssertionError("no commit of HEAD's first-parent history holds the new key names")


@pytest.fixture(scope="module")
def old_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release before, its code only (git archive), run with this venv."""
    commit = release_before_hash_tags()
    tree = tmp_path_factory.mktemp("old-release")
    archive = tree / "code.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), commit], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    assert not (tree / "actors" / "legacy_keys.py").exists()
    return tree


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.cleanup()


def gateway(stack: Stack, root: Path, url: str, namespace: str, logs: Path) -> GatewayProcess:
    """A gateway of the release in `root` on the session's Ray, in its own namespace."""
    return stack.gateway_of(
        root,
        logs,
        REDIS_URL=url,
        RAY_NAMESPACE=namespace,
        QUATRO_POOL_SIZE="1",
        QUATRO_POOL_MAX="1",
    )


def record(r: redis.Redis, key: str) -> dict[str, object]:
    return dict(json.loads(str(r.get(key) or "{}")))


async def copied_to_a_cluster(
    source: RedisServer, cluster: LocalRedisCluster, code: str, table_id: str, people: list[Player]
) -> None:
    """`python -m cluster.redis_keys copy`, twice (it is idempotent), from the Redis the older
    release filled to a Redis Cluster: this release finds every session and the table there."""
    with sync_redis(source.url, decode=False) as r, sync_redis(cluster.url, decode=False) as c:
        assert count_legacy(r)["snap"] >= 1
        first, again = copy(r, c), copy(r, c)
        assert first.renamed >= 4
        assert again.keys == first.keys
        assert not count_legacy(c)
    client = async_redis(cluster.url)
    try:
        sessions = Sessions(client, 3600)
        for p in people:
            session = await sessions.lookup(p.token)
            assert session is not None
            assert session.player_id == p.player_id
            assert await sessions.tables(p.player_id, 5) == {code: p.seat}
        table = TableCore(table_id, cluster.url)
        assert table.table is not None
        assert table.table.view(None)["scores"] == [1, 0]
        assert (await locate(client, table_id)).read is READ
    finally:
        await client.aclose()


async def test_a_live_deployment_moves_to_the_new_key_names(
    stack: Stack,
    old_release: Path,
    own_redis: RedisServer,
    redis_cluster: LocalRedisCluster,
    tmp_path: Path,
) -> None:
    namespace = f"upgrade-{uuid.uuid4().hex[:6]}"
    r = redis.Redis.from_url(own_redis.url, decode_responses=True)
    old = gateway(stack, old_release, own_redis.url, namespace, tmp_path)
    new: GatewayProcess | None = None
    people: list[Player] = []
    try:
        old.wait_ready()
        # The release before: sessions, a table of three people and a bot, a point scored.
        code, people = await rigged_table(old.url)
        await start(people, code)
        reveal = await score(people)
        assert reveal["scores"] == [1, 0]
        table_id = str(record(r, legacy_keys.table(code))["table_id"])
        assert r.exists(legacy_keys.snapshot(code), legacy_keys.replay(table_id)) == 2
        assert not r.exists(keys.table(code), keys.snapshot(code))  # truly the old names
        old.stop()  # its table actor (and the pooled one) live on, on the older code
        await copied_to_a_cluster(own_redis, redis_cluster, code, table_id, people)

        # This release's gateway, the older actors still running.
        new = gateway(stack, ROOT, own_redis.url, namespace, tmp_path)
        new.wait_ready()
        for p in people:
            p.base = new.url
            mine = (await p.rest("GET", "/api/sessions/tables")).json()
            assert [(t["code"], t["seat"]) for t in mine["tables"]] == [(code, p.seat)], mine
            welcome = await p.connect(code)
            assert welcome["table"]["scores"] == [1, 0]
        # The older actor plays on through the new gateway, and saves under the old names.
        seq = int(json.loads(str(r.get(legacy_keys.snapshot(code))))["seq"])
        await ready(people)
        assert int(json.loads(str(r.get(legacy_keys.snapshot(code))))["seq"]) > seq
        assert not r.exists(keys.snapshot(code))
        # Its replay, read where the older actor keeps it: found (the match is not over yet).
        answer = await people[0].rest("GET", f"/api/replays/{table_id}")
        assert answer.json()["error"]["code"] == "not_finished", answer.text

        # Its worker is replaced: the actor ends for good, and the first gateway that looks for
        # the table starts it again, on this release, from the old names.
        driver = stack.driver()
        driver.kill(driver.get_actor(table_id, namespace=namespace), no_restart=True)
        for p in people:
            welcome = await p.connect(code)
            assert welcome["table"]["scores"] == [1, 0]
        dealt = people[PARTNER].welcome
        assert dealt is not None
        assert r.exists(keys.snapshot(code), keys.table(code)) == 2
        assert not r.exists(legacy_keys.snapshot(code), legacy_keys.log(code))
        assert r.get(keys.actor(table_id)) == code
        assert r.llen(keys.replay(code, table_id)) > 0
        assert not r.exists(legacy_keys.replay(table_id))
        answer = await people[0].rest("GET", f"/api/replays/{table_id}")
        assert answer.json()["error"]["code"] == "not_finished", answer.text
        # It plays on under the new names, and its log came along whole.
        second = await quatro(people, dealt["table"]["hand"], dealt["table"]["center"])
        assert second["scores"] == [2, 0]
        seqs = [json.loads(x)[0] for x in r.lrange(keys.log(code), 0, -1)]
        assert seqs == list(range(seqs[0], seqs[-1] + 1))

        # A new table on this release's gateway may be given a pooled actor of the older one:
        # it keeps its own record, under the old name, and is found by it.
        host = await Player(new.url, "Dee").register()
        made = await host.rest("POST", "/api/tables", json={"players": 4})
        assert made.status_code == 201, made.text
        other = made.json()["code"]
        assert (await host.rest("GET", f"/api/tables/{other}")).is_success
        assert r.exists(keys.table(other)) + r.exists(legacy_keys.table(other)) == 1
    finally:
        for p in people:
            await p.close()
        old.stop()
        if new is not None:
            new.stop()
        r.close()
