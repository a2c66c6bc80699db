"""A lost Redis primary from a table's side, without Ray or players: where a table's saves spend
the failover, and what our cluster client's refresh of its slot map costs.

    python -m lab.lost_primary             # 5 kills, the client as cluster/redis_client.py makes it
    python -m lab.lost_primary --reread    # the same, the command table read at every refresh
    python -m lab.lost_primary --kills 10 --refreshes 100

A local Redis Cluster as the soak's (three primaries, a replica each, `cluster-node-timeout`
2 s; cluster/stack.py's `StoreOnly`), and a real table core (actors/table_core.py: the actor's one
change path, its saves and their retries through actors/store.py, its client from
cluster/redis_client.py) whose host fills and empties a seat every 0.1 s, as players play on.
For each SIGKILL of the primary that serves the table: when another node names a new primary
for its slot (`promoted_s`), when the table's snapshot of its latest change is on that primary
(`saved_s`), the slowest answer to a command meanwhile (a command is answered once its save gave
up), and how many times the surviving nodes were asked for their command table (COMMAND, by
any client: this one's alone here); then the killed node is started again, a replica, for the
next. `--reread` gives the client redis-py's own way: the whole command table read again with
every refresh of the slot map, which it makes after each connection error (as before commit
d33fd4b). Last, what one refresh costs the client, in CPU and in wall time, both ways.

One JSON line per kill, one for the refreshes, one summary (`loadtests/figures.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from redis._parsers import AsyncCommandsParser
from redis.asyncio.cluster import RedisCluster

from actors import keys
from actors.protocol import Act
from actors.table_core import TableCore
from cluster.procs import RedisServer
from cluster.redis_client import async_redis
from cluster.redis_cluster import LocalRedisCluster
from cluster.stack import StoreOnly
from loadtests import cli
from loadtests.figures import emit, percentile
from loadtests.node import machine

CODE = "LOST"
PACE_S = 0.1  # between two of the host's commands
LIMIT_S = 60.0  # a kill whose table has not saved again by then is reported as such


def command_reads(cluster: LocalRedisCluster, nodes: list[RedisServer]) -> int:
    """How many times `nodes` were asked for their command table (COMMAND), by any client."""
    calls = 0
    for node in nodes:
        with cluster.client(node) as c:
            stats = c.info("commandstats")
        calls += sum(int(v["calls"]) for k, v in stats.items() if k.startswith("cmdstat_command"))
    return calls


def saved_seq(cluster: LocalRedisCluster, lost: RedisServer) -> tuple[bool, int]:
    """Whether another node serves the table's slot now, and the seq of the snapshot it holds."""
    try:
        node = cluster.primary_of(keys.snapshot(CODE))
    except RuntimeError:
        return False, -1
    if node is lost:
        return False, -1
    with cluster.client(node) as c:
        raw = c.get(keys.snapshot(CODE))
    return True, -1 if raw is None else int(json.loads(str(raw))["seq"])


class Host:
    """The table's host, filling and emptying seat 1."""

    def __init__(self, core: TableCore) -> None:
        self.core = core
        self.n = 0

    async def act(self) -> float:
        """One command; how long its answer took."""
        self.n += 1
        kind = "add_bot" if self.n % 2 else "remove_bot"
        started = time.perf_counter()
        await self.core.serve(Act.of(f"lab-{self.n}", "lab", "p0", kind, {"seat": 1}))
        return time.perf_counter() - started


async def kill(cluster: LocalRedisCluster, host: Host) -> dict[str, Any]:
    lost = cluster.primary_of(keys.snapshot(CODE))
    survivors = [n for n in cluster.nodes if n is not lost]
    before = command_reads(cluster, survivors)
    cluster.kill(lost)
    start = time.perf_counter()
    promoted = saved = None
    slowest = 0.0
    while time.perf_counter() - start < LIMIT_S:
        slowest = max(slowest, await host.act())
        serves, seq = await asyncio.to_thread(saved_seq, cluster, lost)
        now = time.perf_counter() - start
        if serves and promoted is None:
            promoted = now
        if serves and seq == host.core.feed.seq:
            saved = now
            break
        await asyncio.sleep(PACE_S)
    reads = await asyncio.to_thread(command_reads, cluster, survivors)
    lost.start()  # back on its port and directory, as a replica of the one promoted
    await asyncio.to_thread(cluster.wait_ok)

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 2)

    return {
        "promoted_s": r(promoted),
        "saved_s": r(saved),
        "slowest_answer_s": r(slowest),
        "command_reads": reads - before,
    }


async def refreshes(url: str, reread: bool, n: int) -> dict[str, float]:
    """The CPU (ms) and wall time (ms) of one refresh of a cluster client's slot map, p50."""
    client = async_redis(url)
    assert isinstance(client, RedisCluster)
    if reread:
        client.commands_parser = AsyncCommandsParser()
    cpu: list[float] = []
    wall: list[float] = []
    try:
        await client.get("lab")
        for _ in range(n):
            await client.aclose()  # what a connection error does: the next command refreshes
            w, c = time.perf_counter(), time.process_time()
            await client.initialize()
            cpu.append((time.process_time() - c) * 1000)
            wall.append((time.perf_counter() - w) * 1000)
    finally:
        await client.aclose()
    return {
        "cpu_ms_p50": round(percentile(cpu, 50), 1),
        "wall_ms_p50": round(percentile(wall, 50), 1),
    }


async def run(a: argparse.Namespace) -> None:
    store = StoreOnly(primaries=3).start()
    assert store.cluster is not None
    cluster = store.cluster
    core = TableCore("table-lab-lost", cluster.url, now=lambda: 1_000_000)
    try:
        opened = await core.open(CODE, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))
        assert opened.ok, opened
        if a.reread:
            table_client = core.store.redis
            assert isinstance(table_client, RedisCluster)
            table_client.commands_parser = AsyncCommandsParser()
            await table_client.aclose()  # its next command refreshes, and reads the table
        host = Host(core)
        kills = []
        for i in range(a.kills):
            row = await kill(cluster, host)
            kills.append(row)
            emit({"kill": i + 1, "reread": a.reread, **row})
        cost = {
            "ours": await refreshes(cluster.url, False, a.refreshes),
            "reread": await refreshes(cluster.url, True, a.refreshes),
        }
        emit({"refresh": cost, "n": a.refreshes})
        after = [k["saved_s"] - k["promoted_s"] for k in kills if k["saved_s"] is not None]
        emit(
            {
                "machine": machine(),
                "reread": a.reread,
                "kills": a.kills,
                "not_saved": sum(1 for k in kills if k["saved_s"] is None),
                "promoted_p50_s": round(percentile([k["promoted_s"] or 0 for k in kills], 50), 2),
                "saved_after_promotion_p50_s": round(percentile(after, 50), 2) if after else None,
                "saved_after_promotion_max_s": round(max(after), 2) if after else None,
                "slowest_answer_s": max(k["slowest_answer_s"] or 0 for k in kills),
                "command_reads": sum(k["command_reads"] for k in kills),
                "refresh": cost,
            }
        )
    finally:
        await core.stop()
        store.stop()


def main() -> None:
    p = cli.command("lab.lost_primary", __doc__)
    p.add_argument("--kills", type=int, default=5)
    p.add_argument("--refreshes", type=int, default=50)
    p.add_argument(
        "--reread",
        action="store_true",
        help="the table's client reads the command table at every refresh (redis-py's way)",
    )
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
