"""Ray nodes and the tables on them, for the tests that add a worker node to the session's
stack and lose, drain or restart it: finding a node's id, landing a table's actor on it, asking
that actor directly, and losing the node as a machine is lost."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any, TypeVar

import psutil
import redis
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from actors import keys
from actors.protocol import Probe, TableCall
from actors.ray_calls import answered, send
from actors.table_actor import actor_class
from cluster.procs import RayWorkerNode
from tests.cluster.client import Frame, Player, table_with
from tests.cluster.test_resilience import open_round
from tests.conftest import Stack

A = TypeVar("A")


def table_actor(stack: Stack, code: str) -> Any:
    record = json.loads(redis.Redis.from_url(stack.redis.url).get(keys.table(code)) or "{}")
    return stack.driver().get_actor(record["actor"], namespace=stack.namespace)


def ray_get(stack: Stack, ref: Any, timeout: float = 60) -> Any:
    return stack.driver().get(ref, timeout=timeout)


def actor_on(
    stack: Stack, name: str, node_id: str, redis_url: str | None = None, soft: bool = False
) -> Any:
    """A detached table actor named `name`, started on the node `node_id` and answering there.
    `soft`: Ray may restart it on another node once that one is dead (a hard affinity leaves
    it unschedulable instead, as a record naming a lost node's actor finds it)."""
    handle = (
        actor_class()
        .options(
            name=name,
            namespace=stack.namespace,
            lifetime="detached",
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=soft),
        )
        .remote(name, redis_url or stack.redis.url)
    )
    assert ask_now(stack, handle, Probe()).node == node_id
    return handle


def ask_now(stack: Stack, handle: Any, call: TableCall[A], timeout: float = 60) -> A:
    """`actors.ray_calls.ask` from this test's thread: a blocking get, with a deadline."""
    return answered(call, ray_get(stack, send(handle, call), timeout))


async def node_of(stack: Stack, manager_port: int) -> str:
    """The id of the node whose raylet listens on `manager_port`, once the head knows it."""
    async with asyncio.timeout(60):
        while True:
            for n in stack.driver().nodes():
                if n["Alive"] and int(n["NodeManagerPort"]) == manager_port:
                    return str(n["NodeID"])
            await asyncio.sleep(0.5)


TRIES = 40  # tables opened, at most, until one lands on the node


async def table_on_node(stack: Stack, node_id: str) -> tuple[str, list[Player], Any]:
    """A new 4-seat table (2 players) whose actor runs on `node_id`. New actors spread over the
    nodes (SPREAD), and the pool's spread moves ready ones there; but the pool hands out the
    ready actors it holds first, and after tests that ended many tables it holds many of the
    other nodes' (actors serve table after table, actors/reuse.py): up to `TRIES` tables."""
    for _ in range(TRIES):
        code, people = await table_with(stack.a.url, 4, 2, deals=2, time_scale=0.2)
        handle = table_actor(stack, code)
        if ask_now(stack, handle, Probe()).node == node_id:
            return code, people, handle
        for p in people:
            await p.close()
    raise AssertionError(f"no table landed on the new node in {TRIES} tries")


@dataclass
class OnANode:
    """A table in play whose actor runs on a worker node of its own: its host connected through
    gateway a, the other player through gateway b."""

    node: RayWorkerNode
    node_id: str
    code: str
    people: list[Player]
    handle: Any
    rounds: dict[int, Frame]  # what each seat was dealt
    before: dict[str, Any]  # the table as the host's welcome showed it

    async def close(self) -> None:
        for p in self.people:
            with contextlib.suppress(Exception):
                await p.close()


async def playing_on_a_new_node(stack: Stack) -> OnANode:
    """A new worker node (8 table slots) and a table in play on it. The caller stops the node
    and closes the players (`OnANode.close`); if this fails half-way, it does both itself."""
    node = RayWorkerNode(stack.head, table_slots=8, num_cpus=1, object_store_mb=80).start()
    people: list[Player] = []
    try:
        node_id = await node_of(stack, node.manager_port)
        code, people, handle = await table_on_node(stack, node_id)
        rounds = await open_round(code, people)
        host, other = people
        await other.connect(code, stack.b.url)  # one player per gateway
        before = (await host.connect(code, stack.a.url))["table"]
        return OnANode(node, node_id, code, people, handle, rounds, before)
    except BaseException:
        for p in people:
            with contextlib.suppress(Exception):
                await p.close()
        node.stop()
        raise


def kill_node(node: RayWorkerNode) -> None:
    """SIGKILL of every process of a worker node, as a lost machine: `ray start`, its raylet and
    its workers (which start sessions of their own, so not one process group)."""
    assert node.proc is not None
    procs = [psutil.Process(node.proc.pid)]
    with contextlib.suppress(psutil.Error):
        procs += procs[0].children(recursive=True)
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.kill()
    node.proc.wait(10)
    node.proc = None
