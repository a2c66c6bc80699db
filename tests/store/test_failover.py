"""A primary of the store's Redis Cluster lost during play, without a point lost
(docs/reliability.md, "The store's failover"): a gateway of this release on the session's Ray
and a cluster of its own (three primaries, a replica each, `cluster-node-timeout` of a second).

- A primary SIGKILLed mid-round: its tables' saves wait and retry while its replica is promoted,
  then play resumes and the store holds the table whole.
- A save that scores a point reaches the replica before anyone sees the point (WAIT); then the
  primary and the table's actor are killed together, and the point is there when both are back.
- A table's core (no Ray) on a cluster of the test's own: its saves land on the promoted replica
  soon after the promotion, and its client never reads the server's command table again on the
  way (each read cost a loaded table actor seconds: docs/reliability.md, "A lost primary, phase
  by phase"); and a scoring save whose connection broke is never taken for replicated.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from actors import keys
from actors.protocol import Entry, Outcome, Probe
from actors.ray_calls import answered, send
from actors.table_core import TableCore
from cluster.gateway_process import GatewayProcess
from cluster.procs import RedisServer
from cluster.redis_client import SyncRedis, sync_redis
from cluster.redis_cluster import LocalRedisCluster
from lab.lost_primary import command_reads
from tests.actors.test_table_core import Clock, act
from tests.cluster.test_play import card_of, swap_until_ack
from tests.conftest import Stack
from tests.store.conftest import NODE_TIMEOUT_MS
from tests.store.play import PARTNER, quatro, ready, rigged_table, score, start

WAIT_MS = 5000  # a scoring save waits this long for its replica: room to see it wait
HELD_S = 1.0  # how long the test looks for a point published before its replica has it
# A lost primary's table saves again within this: generous against a loaded machine, the
# failover itself being the node timeout (NODE_TIMEOUT_MS, 1 s) and an election, 2-3 s here.
SAVED_WITHIN_S = 20.0


@dataclass
class Shard:
    cluster: LocalRedisCluster
    gateway: GatewayProcess
    namespace: str

    def store(self) -> SyncRedis:
        return sync_redis(self.cluster.url)


@pytest.fixture(scope="module")
def shard(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shard]:
    cluster = LocalRedisCluster(primaries=3, replicas=1, node_timeout_ms=NODE_TIMEOUT_MS).start()
    namespace = f"failover-{uuid.uuid4().hex[:6]}"
    gateway = stack.gateway(
        tmp_path_factory.mktemp("failover"),
        REDIS_URL=cluster.url,
        RAY_NAMESPACE=namespace,
        QUATRO_POOL_SIZE="1",
        QUATRO_POOL_MAX="1",
        QUATRO_REDIS_WAIT_MS=str(WAIT_MS),
    )
    try:
        gateway.wait_ready()
        yield Shard(cluster, gateway, namespace)
    finally:
        gateway.stop()
        cluster.cleanup()


def snapshot(shard: Shard, code: str) -> dict[str, object]:
    with shard.store() as r:
        return dict(json.loads(str(r.get(keys.snapshot(code)))))


def scores(shard: Shard, code: str) -> list[int]:
    """The scores in the table's saved snapshot."""
    table = snapshot(shard, code)["table"]
    assert isinstance(table, dict)
    return [int(s) for s in table["state"]["scores"]]


async def promoted(cluster: LocalRedisCluster, lost: RedisServer, key: str) -> RedisServer:
    """The node that serves `key` once the lost primary's replica took over (deadline-bound)."""
    async with asyncio.timeout(30):
        while True:
            with_ok = await asyncio.to_thread(_serving, cluster, lost, key)
            if with_ok is not None:
                return with_ok
            await asyncio.sleep(0.05)


def _serving(cluster: LocalRedisCluster, lost: RedisServer, key: str) -> RedisServer | None:
    try:
        node = cluster.primary_of(key)
    except RuntimeError:
        return None
    return None if node is lost else node


async def test_a_primary_lost_mid_round_pauses_its_tables_then_play_resumes(shard: Shard) -> None:
    code, people = await rigged_table(shard.gateway.url)
    try:
        await start(people, code)
        first = await score(people)
        assert first["scores"] == [1, 0]
        dealt = await ready(people)
        lost = shard.cluster.primary_of(keys.snapshot(code))
        shard.cluster.kill(lost)
        # The round goes on: a swap now is answered once its save gave up (its primary is
        # gone), and its save is tried again until the replica serves.
        hand, centre = dealt["hand"], dealt["center"]
        king = card_of(hand, "K")
        slot = next(i for i, c in enumerate(centre) if c["rank"] == "A")
        await swap_until_ack(people[PARTNER], king["id"], slot, centre[slot]["id"])
        now = await promoted(shard.cluster, lost, keys.snapshot(code))
        assert shard.cluster.role(now) == "master"
        lost.start()  # back on its port and directory: a replica of the one promoted
        await asyncio.to_thread(shard.cluster.wait_ok)
        hand = [c for c in hand if c["id"] != king["id"]] + [centre[slot]]
        centre = [king if i == slot else c for i, c in enumerate(centre)]
        second = await quatro(people, hand, centre)
        assert second["scores"] == [2, 0]
        # The store holds the table whole: its score, and a log without a gap.
        assert scores(shard, code) == [2, 0]
        with shard.store() as r:
            seqs = [json.loads(x)[0] for x in r.lrange(keys.log(code), 0, -1)]
        assert seqs == list(range(seqs[0], seqs[-1] + 1))
        assert seqs[-1] >= int(second["seq"]) - 2  # its welcome and seat frames aside
        for p in people:
            assert not p.problems
    finally:
        for p in people:
            await p.close()


def actor_pid(shard: Shard, stack: Stack, code: str) -> int:
    with shard.store() as r:
        name = json.loads(str(r.get(keys.table(code))))["actor"]
    ray = stack.driver()
    handle = ray.get_actor(name, namespace=shard.namespace)
    return answered(Probe(), ray.get(send(handle, Probe()), timeout=30)).pid


def replica_of(cluster: LocalRedisCluster, primary: RedisServer) -> RedisServer:
    for node in cluster.nodes:
        if node.proc is None or node is primary:
            continue
        with cluster.client(node) as c:
            info = c.info("replication")
        if info.get("role") == "slave" and int(info.get("master_port", 0)) == primary.port:
            return node
    raise AssertionError(f"no replica of {primary.port}")


async def reveal_saved_on(cluster: LocalRedisCluster, node: RedisServer, code: str) -> None:
    def saved() -> bool:
        with cluster.client(node) as c:
            return any('"reveal"' in x for x in c.lrange(keys.log(code), -3, -1))

    async with asyncio.timeout(20):
        while True:  # polled: nothing tells us when a primary wrote
            if await asyncio.to_thread(saved):
                return
            await asyncio.sleep(0.01)


async def test_a_point_outlives_its_primary_and_its_table_killed_together(
    shard: Shard, stack: Stack
) -> None:
    code, people = await rigged_table(shard.gateway.url)
    host = people[0]
    try:
        await start(people, code)
        dealt = await ready(people)
        hand, centre = dealt["hand"], dealt["center"]
        primary = shard.cluster.primary_of(keys.snapshot(code))
        replica = replica_of(shard.cluster, primary)
        pid = actor_pid(shard, stack, code)
        # The replica stalls: the primary has the point, and nobody may see it until the
        # replica has it too.
        assert replica.proc is not None
        os.kill(replica.proc.pid, signal.SIGSTOP)
        try:
            scoring = asyncio.ensure_future(quatro(people, hand, centre))
            await reveal_saved_on(shard.cluster, primary, code)
            # Published at once, a point would reach the host within milliseconds.
            with pytest.raises(TimeoutError):
                await host.until(lambda: host.latest("reveal"), HELD_S)
            assert not scoring.done()
        finally:
            os.kill(replica.proc.pid, signal.SIGCONT)
        reveal = await scoring
        assert reveal["scores"] == [1, 0]
        # Both at once: the primary (with whatever its replica did not get) and the table.
        shard.cluster.kill(primary)
        os.kill(pid, signal.SIGKILL)
        await promoted(shard.cluster, primary, keys.snapshot(code))
        for p in people:
            welcome = await p.connect(code)
            assert welcome["table"]["scores"] == [1, 0]
        assert scores(shard, code) == [1, 0]
        assert actor_pid(shard, stack, code) != pid
        primary.start()
        await asyncio.to_thread(shard.cluster.wait_ok)
    finally:
        for p in people:
            await p.close()


def saved_on_promoted(
    cluster: LocalRedisCluster, lost: RedisServer, code: str
) -> dict[str, Any] | None:
    """The table's snapshot on the primary that replaced `lost` (None: not promoted yet)."""
    node = _serving(cluster, lost, keys.snapshot(code))
    if node is None:
        return None
    with cluster.client(node) as c:
        raw = c.get(keys.snapshot(code))
    return None if raw is None else dict(json.loads(str(raw)))


async def test_a_table_saves_on_the_promoted_replica_without_reading_the_command_table_again(
    own_cluster: LocalRedisCluster,
) -> None:
    code = "FOV1"
    core = TableCore("table-f0v1", own_cluster.url, now=Clock())
    opened = await core.open(code, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))
    assert opened.ok, opened
    try:
        lost = own_cluster.primary_of(keys.snapshot(code))
        survivors = [n for n in own_cluster.nodes if n is not lost]
        before = command_reads(own_cluster, survivors)
        own_cluster.kill(lost)
        killed = time.monotonic()
        # The host fills and empties a seat, as players play on through the failover: each
        # change is answered, its save failing while the slot has no primary, until one lands
        # on the promoted replica.
        bots = 0
        async with asyncio.timeout(SAVED_WITHIN_S):
            while True:
                kind = "remove_bot" if bots else "add_bot"
                reply = await core.serve(act("p0", kind, seat=1))
                assert isinstance(reply, Outcome), reply
                assert reply.ok, reply
                bots = 1 - bots
                saved = await asyncio.to_thread(saved_on_promoted, own_cluster, lost, code)
                if saved is not None and saved["seq"] == core.feed.seq:
                    break
                await asyncio.sleep(0.1)
        took = time.monotonic() - killed
        assert core.table is not None
        assert saved["table"] == core.table.to_snapshot()
        # Every refresh of the client's slot map (after each error while the slot had no
        # primary) read the whole command table again before: seconds of a loaded actor.
        reads = command_reads(own_cluster, survivors) - before
        assert reads == 0, f"the command table read {reads} times; saved after {took:.1f} s"
    finally:
        await core.stop()


async def test_a_scoring_save_sent_again_is_never_taken_for_replicated(
    own_cluster: LocalRedisCluster,
) -> None:
    code = "FOV5"  # slot 14966: the last primary's, not the one a cluster client defaults to
    core = TableCore("table-f0v5", own_cluster.url, now=Clock())
    opened = await core.open(code, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))
    assert opened.ok, opened
    primary = own_cluster.primary_of(keys.snapshot(code))
    replica = replica_of(own_cluster, primary)
    assert replica.proc is not None
    reveal = Entry(core.feed.seq + 1, "all", 0, {"type": "reveal", "scores": [1, 0]}, 0, "")
    try:
        os.kill(replica.proc.pid, signal.SIGSTOP)  # no replica can confirm anything now
        try:
            # The table's connections to its primary break (as a failover elsewhere breaks
            # them: its client then closes them all), and the client sends the save and its
            # WAIT again. redis-py's pipeline sent that WAIT to any node, on a connection with
            # no write, which counts every replica at once: the point passed for replicated.
            with own_cluster.client(primary) as admin:
                assert admin.execute_command("CLIENT KILL", "TYPE", "normal", "SKIPME", "yes")
            args = (code, core.snapshot(), [reveal], 4, 3600, core.feed.seq)
            written = await core.store.write(*args)
            assert not (written.ok and written.replicated), written
            assert not written.ok, written  # sent again: not saved, as far as the table knows
        finally:
            os.kill(replica.proc.pid, signal.SIGCONT)
        written = await core.store.write(*args)
        assert written.ok, written
        assert written.replicated, written
    finally:
        await core.stop()
