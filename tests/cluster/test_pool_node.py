"""Ready table actors that must not hold a slot where nobody wants them (issue 48), on a Ray node
this module adds to the session's stack, whose workers look for their name on a pool list every
second (`QUATRO_POOL_CHECK_S`, as an operator's setting reaches them: the node's environment):

- a ready actor that no list names (its gateway died between starting and listing it, or Redis
  lost the list) ends by itself, after two looks in a row; a listed one, or one with a table,
  stays;
- under Ray's autoscaler, a node whose last table ended, its actor back in the pool
  (actors/reuse.py), is left with no actor at all: they move to a node that carries tables, so
  that the autoscaler can see the node idle and remove it.

Both against pool lists of their own (Redis database 9)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ray.exceptions import GetTimeoutError, RayActorError

from actors import keys
from actors.protocol import Open, Probe
from actors.ray_names import new_name, new_table_id
from actors.reuse import CHECK_ENV
from actors.snapshot import DEFAULT_REPLAY_TTL_S
from cluster.procs import RayWorkerNode
from tests.cluster.nodes import actor_on, ask_now, node_of
from tests.conftest import Stack, database_url, own_database

pytestmark = pytest.mark.destructive  # a node of its own, stopped at the end

OWN_DB = 9  # tests/README.md
EVERY_S = 1.0
EMPTIED_WITHIN_S = 60.0  # a spread pass every 5 s (pool.WATCH_S), a worker to start per move


@pytest.fixture(scope="module")
def node(stack: Stack) -> Iterator[str]:
    """A node of 8 slots whose actors look for their listing every `EVERY_S`: its id."""
    added = RayWorkerNode(
        stack.head, table_slots=8, num_cpus=1, object_store_mb=80, extra_env={CHECK_ENV: "1"}
    ).start()
    try:
        yield asyncio.run(node_of(stack, added.manager_port))
    finally:
        added.stop()


def alive(stack: Stack, handle: Any) -> bool:
    """False once Ray says the actor died; a slow answer (a loaded machine) is no death."""
    try:
        ask_now(stack, handle, Probe(), timeout=5)
    except RayActorError:
        return False
    except GetTimeoutError:
        return True
    return True


async def ends(stack: Stack, handle: Any, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30 * EVERY_S
    while alive(stack, handle):
        assert loop.time() < deadline, f"{what} still runs"
        await asyncio.sleep(0.2)


def open_on(stack: Stack, handle: Any, code: str, idle_s: float) -> None:
    idle = (idle_s, idle_s, idle_s)
    call = Open(code, {"players": 4}, "p0", "Host", idle, DEFAULT_REPLAY_TTL_S, new_table_id())
    assert ask_now(stack, handle, call).ok


async def test_a_ready_actor_no_list_names_ends_and_a_listed_one_stays(
    stack: Stack, node: str
) -> None:
    _, store = own_database(stack, OWN_DB)
    url = database_url(stack, OWN_DB)
    names = [new_name() for _ in range(3)]
    handles: list[Any] = []
    try:
        # The listed one and the one with a table first: by the time the orphan, started
        # last, has looked twice, each of them has too.
        listed = actor_on(stack, names[0], node, url)
        handles.append(listed)
        store.rpush(keys.pool(), names[0])
        playing = actor_on(stack, names[1], node, url)
        handles.append(playing)
        open_on(stack, playing, "LISTNG", 600.0)
        started = time.monotonic()
        orphan = actor_on(stack, names[2], node, url)
        handles.append(orphan)
        await ends(stack, orphan, "the actor on no list")
        # Two looks: never at its first, a gateway lists a new actor a moment after its start.
        assert time.monotonic() - started >= 2 * EVERY_S
        assert alive(stack, listed)
        assert ask_now(stack, playing, Probe()).code == "LISTNG"
        # Its looks ran all along: off the list, it ends too.
        store.lrem(keys.pool(), 1, names[0])
        await ends(stack, listed, "the actor taken off the list")
        assert alive(stack, playing)
    finally:
        driver = stack.driver()
        for handle in handles:
            try:
                driver.kill(handle, no_restart=True)
            except Exception:
                continue
        store.flushdb()


def actors_on(stack: Stack, node_id: str) -> list[str]:
    """The live actors Ray has on `node_id`."""
    from ray._private import state

    stack.driver()
    return [
        str(a["Name"])
        for a in state.actors().values()
        if a["State"] == "ALIVE" and a["Address"]["NodeID"] == node_id
    ]


async def test_under_the_autoscaler_a_node_whose_tables_ended_is_left_with_no_actor(
    stack: Stack, node: str, tmp_path: Path
) -> None:
    url, store = own_database(stack, OWN_DB)
    name = new_name()
    handle = actor_on(stack, name, node, url)
    # A table on the node, which ends a second after its last call: its actor goes back to the
    # pool list of the gateway below, still on the node, which carries no table any more.
    open_on(stack, handle, "ENDED1", 1.0)
    gw = stack.gateway(
        tmp_path,
        REDIS_URL=url,
        # Ray's autoscaler may grow the cluster (the chart's QUATRO_MAX_TABLE_SLOTS): the pool
        # keeps its ready actors off nodes that carry no table.
        QUATRO_MAX_TABLE_SLOTS="100000",
        # Above what it holds once the actor is back: its surplus trim must not be what
        # takes the actor off the node.
        QUATRO_POOL_MIN="3",
        QUATRO_POOL_MAX="3",
    )
    try:
        gw.wait_ready()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while name not in store.lrange(keys.pool(), 0, -1):
            assert loop.time() < deadline, "the actor never came back to the pool"
            await asyncio.sleep(0.2)
        deadline = loop.time() + EMPTIED_WITHIN_S
        while left := actors_on(stack, node):
            assert loop.time() < deadline, f"ready actors kept on a node with no table: {left}"
            await asyncio.sleep(0.5)
        assert not alive(stack, handle)  # moved: stopped there, another started elsewhere
        assert store.llen(keys.pool()) >= 1  # the pool keeps its actors, elsewhere
    finally:
        gw.stop()
        driver = stack.driver()
        for pooled in [name, *store.lrange(keys.pool(), 0, -1)]:
            try:
                driver.kill(driver.get_actor(str(pooled), namespace=stack.namespace))
            except Exception:
                continue
        store.flushdb()
