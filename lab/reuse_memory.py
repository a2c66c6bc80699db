"""A reused table actor's memory, table after table: flat, or growing with what tables leave?

    python -m lab.reuse_memory                  # 40 tables in a row
    python -m lab.reuse_memory --tables 80 --pool 1

A stack of its own (test hooks on, its actors serving up to `--tables` + 1 tables each), one
gateway with a pool of `--pool` whose tables stop a second after everyone left. Table after
table, one at a time: a player and three smart bots at "sharp", the match started, played until
the player saw `--events` events (a deal, swaps, signs, votes), the player leaves, and the table
stops; once its actor is back in the pool, that actor's process is measured (USS and RSS, psutil).
Prints one line per table, then for each actor that served at least 4 tables its USS after its
2nd table and after its last one, and the growth per table between them (a least-squares slope);
then one JSON line. The actors are spread by the pool's list (head out, tail in), so a pool of 1
mostly hands the same one or two actors out again; the pool's trim may stop one that came back
past its target (its series then ends).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

import psutil
import redis

from actors import keys
from actors.protocol import Probe, Status
from actors.ray_calls import answered, send
from cluster.stack import Spec, Stack
from loadtests import cli
from loadtests.figures import emit
from loadtests.node import machine
from loadtests.player import table_with

NAMESPACE = "reuse-memory"
MB = 1024 * 1024


def probe(stack: Stack, actor: str) -> Status:
    handle = stack.driver().get_actor(actor, namespace=stack.namespace)
    return answered(Probe(), stack.driver().get(send(handle, Probe()), timeout=60))


async def until(check: Any, limit: float, what: str) -> Any:
    deadline = time.monotonic() + limit
    while not (got := check()):
        if time.monotonic() > deadline:
            raise SystemExit(f"not within {limit} s: {what}")
        await asyncio.sleep(0.1)
    return got


async def one_table(stack: Stack, url: str, r: redis.Redis, events: int) -> tuple[str, int | None]:
    """Play one table to `events` events and let it stop: its actor and that actor's pid
    (None: the actor was stopped since)."""
    code, (host,) = await table_with(
        url,
        4,
        1,
        time_scale=0.1,
        bot_policy="smart",
        bot_level="sharp",
        seed=time.time_ns() % 2**31,
    )
    actor = str(json.loads(r.get(keys.table(code)) or "{}")["actor"])
    answer = await host.rest("POST", f"/api/tables/{code}/start")
    if not answer.is_success:
        raise SystemExit(f"start: {answer.status_code} {answer.text}")
    await host.until(lambda: len(host.events) >= events, 120, f"{events} events")
    await host.close()
    await until(lambda: actor in r.lrange(keys.pool(), 0, -1), 60, f"{actor} back in the pool")
    try:
        return actor, probe(stack, actor).pid
    except Exception:  # Ray's errors for an actor gone are many
        # The pool's trim stopped it meanwhile (a surplus, back at the list's tail): its
        # series ends here.
        return actor, None


def slope(points: list[tuple[int, float]]) -> float:
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else 0.0


async def run(a: argparse.Namespace) -> dict[str, Any]:
    # A lobby lives while its table is being set up, even on a loaded machine; a started table
    # everyone left stops a second later, and its actor goes back to the pool.
    settings = {"QUATRO_ABANDONED_IDLE": "1", "QUATRO_LOBBY_IDLE": "30"}
    spec = Spec(
        namespace=NAMESPACE,
        table_slots=16,
        pool=a.pool,
        test_hooks=True,
        crowd=True,
        settings=settings,
    )
    stack = Stack(spec, Path("results") / "reuse-memory")
    stack.head.extra_env["QUATRO_ACTOR_TABLES"] = str(a.tables + 1)
    stack.start()
    series: dict[str, list[tuple[int, float, float]]] = {}
    try:
        url = stack.url
        r = redis.Redis.from_url(stack.redis.url, decode_responses=True)
        for i in range(a.tables):
            actor, pid = await one_table(stack, url, r, a.events)
            if pid is None:
                print(f"table {i + 1:3d}  {actor}  stopped by the pool's trim since")
                continue
            mem = psutil.Process(pid).memory_full_info()
            served = len(series.setdefault(actor, [])) + 1
            series[actor].append((served, mem.uss / MB, mem.rss / MB))
            print(f"table {i + 1:3d}  {actor}  its table {served:3d}  USS {mem.uss / MB:6.1f} MB")
    finally:
        stack.stop()
    actors: dict[str, Any] = {}
    for actor, points in series.items():
        if len(points) < 4:
            continue
        growth = slope([(n, uss) for n, uss, _ in points[1:]]) * 1024
        actors[actor] = {
            "tables": len(points),
            "uss_after_2nd_mb": round(points[1][1], 1),
            "uss_after_last_mb": round(points[-1][1], 1),
            "rss_after_last_mb": round(points[-1][2], 1),
            "growth_kb_per_table": round(growth, 1),
        }
        print(
            f"{actor}: {len(points)} tables, USS {points[1][1]:.1f} MB after its 2nd, "
            f"{points[-1][1]:.1f} MB after its last ({growth:+.0f} KB a table)"
        )
    return {"tables": a.tables, "events_per_table": a.events, "actors": actors}


def main() -> None:
    p = cli.command("lab.reuse_memory", __doc__)
    p.add_argument("--tables", type=int, default=40)
    p.add_argument("--events", type=int, default=40, help="events the player sees per table")
    p.add_argument("--pool", type=int, default=1, help="the gateway's QUATRO_POOL_SIZE")
    a = p.parse_args()
    emit({"machine": machine(), **asyncio.run(run(a))})


if __name__ == "__main__":
    main()
