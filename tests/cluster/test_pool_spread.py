"""The pool's ready actors follow the room (actors/placement.py), with real Ray: a node that
joins beside the one carrying the session's tables gets its share of them from the gateways'
own passes, within seconds and with nobody creating a table, so that a later loss of the
crowded node finds ready actors elsewhere (actors/rescue.py)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import pytest
import redis

from actors import keys
from actors.protocol import Probe
from cluster.procs import RayWorkerNode
from tests.cluster.nodes import ask_now, node_of
from tests.conftest import Stack, own_database

SPREAD_WITHIN_S = 40.0  # a pass every 5 s (pool.WATCH_S), and a new worker process to start
POOL = 2  # this test's own pool


def pooled_nodes(stack: Stack, r: redis.Redis) -> dict[str, str]:
    """Each pooled actor's node, as the actor itself says (those that do not answer left out)."""
    found = {}
    for name in r.lrange(keys.pool(), 0, -1):
        try:
            handle = stack.driver().get_actor(str(name), namespace=stack.namespace)
            found[str(name)] = ask_now(stack, handle, Probe(), timeout=5).node
        except Exception:
            continue
    return found


@pytest.mark.destructive
async def test_a_node_that_joins_gets_its_share_of_the_ready_actors(
    stack: Stack, tmp_path: Path
) -> None:
    # A pool of its own (a gateway with its keys in Redis database 3): the session's shared
    # list also takes back the actors of the session's tables as they end (actors/reuse.py),
    # so its size says nothing of what the spread did.
    own_db, r = own_database(stack, 3)
    gw = stack.gateway(tmp_path, REDIS_URL=own_db, QUATRO_POOL_MIN=str(POOL))
    node: RayWorkerNode | None = None
    try:
        gw.wait_ready()
        # The pool filled first, before the node joins, so that the refill cannot be what
        # places an actor there, and "moved, not added" below compares with a full pool.
        deadline = time.monotonic() + SPREAD_WITHIN_S
        while len(before := pooled_nodes(stack, r)) < POOL:
            assert time.monotonic() < deadline, f"the pool never filled: {before}"
            await asyncio.sleep(0.5)
        # More slots than the session's node: its share of a pool of two is over one actor.
        node = RayWorkerNode(stack.head, table_slots=160, num_cpus=1, object_store_mb=80).start()
        node_id = await node_of(stack, node.manager_port)
        assert node_id not in before.values()
        deadline = time.monotonic() + SPREAD_WITHIN_S
        while node_id not in (now := pooled_nodes(stack, r)).values():
            assert time.monotonic() < deadline, f"no ready actor moved to the new node: {now}"
            await asyncio.sleep(0.5)
        # Moved, not added: the pool keeps its size, and the old node keeps the rest.
        assert len(now) == len(before), (before, now)
        assert set(now.values()) - {node_id}, now
    finally:
        gw.stop()
        if node is not None:
            node.stop()
        ray = stack.driver()
        for name in r.lrange(keys.pool(), 0, -1):  # each holds a table slot of the stack
            with contextlib.suppress(Exception):
                ray.kill(ray.get_actor(str(name), namespace=stack.namespace))
        r.flushdb()
        r.close()
