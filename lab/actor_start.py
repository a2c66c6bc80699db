"""How fast new table actors become ready: one after another, and side by side.

    python -m lab.actor_start                 # 8 actors, 3 rounds of each
    python -m lab.actor_start --actors 16 --rounds 5

Each round starts `--actors` table actors (the class the directory uses, without a table) and
waits until each has answered `ping` — one at a time, then all at once — and kills them. This is
what refilling the table pool costs (`actors/pool.py` starts `QUATRO_POOL_STARTS` actors side by
side, 2 by default). Ray's head and redis-server are started as children and stopped by PID.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import ray

from actors.protocol import Probe
from actors.ray_calls import ask
from actors.table_actor import actor_class
from cluster.stack import Spec, Stack
from loadtests import cli
from loadtests.figures import emit
from loadtests.node import machine

NAMESPACE = "actor-start"


async def start(n: int, redis_url: str, together: bool) -> float:
    """Seconds until `n` new actors all answered, then kill them."""
    cls = actor_class()
    names = [f"start-{uuid.uuid4().hex[:10]}" for _ in range(n)]
    t0 = time.monotonic()
    handles: list[Any] = []
    if together:
        handles = [cls.options(name=x, namespace=NAMESPACE).remote(x, redis_url) for x in names]
        await asyncio.gather(*(ask(h, Probe()) for h in handles))
    else:
        for x in names:
            handle = cls.options(name=x, namespace=NAMESPACE).remote(x, redis_url)
            await ask(handle, Probe())
            handles.append(handle)
    took = time.monotonic() - t0
    for handle in handles:
        ray.kill(handle)
    return took


async def run(a: argparse.Namespace) -> dict[str, list[float]]:
    stack = Stack(
        Spec(namespace=NAMESPACE, table_slots=a.actors * 2 + 4, gateways=0),
        Path("results") / "actor-start",
    )
    stack.start()
    redis = stack.redis
    try:
        stack.driver()
        await start(2, redis.url, together=True)  # warm the node up once
        out: dict[str, list[float]] = {"one_after_another_s": [], "side_by_side_s": []}
        for _ in range(a.rounds):
            out["one_after_another_s"].append(round(await start(a.actors, redis.url, False), 2))
            out["side_by_side_s"].append(round(await start(a.actors, redis.url, True), 2))
        return out
    finally:
        stack.stop()  # this driver's connection too


def main() -> None:
    p = cli.command("lab.actor_start", __doc__)
    p.add_argument("--actors", type=int, default=8)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    result = asyncio.run(run(a))
    emit({"machine": machine(), "actors": a.actors, **result})


if __name__ == "__main__":
    main()
