"""Starting tables cannot take the CPU from tables in play (issue 21): Ray starts its workers at
a low priority, and a table actor raises every one of its threads to the priority of play once
it holds a table — opened from the pool, or found again after a restart — while a pooled actor
waiting for its table stays low."""

from __future__ import annotations

import asyncio
import os
import signal

import psutil
import redis
from ray.exceptions import RayError

from actors import keys
from actors.priority import DEFAULT_PLAY_NICE
from actors.protocol import Probe
from actors.ray_calls import answered, send
from cluster.procs import START_NICE, WORKER_NICENESS_ENV
from tests.cluster.client import table_with
from tests.cluster.test_resilience import actor_pid
from tests.conftest import Stack


def nices(pid: int) -> set[int]:
    """The nice value of every thread of process `pid` (Linux keeps one per thread)."""
    return {os.getpriority(os.PRIO_PROCESS, t.id) for t in psutil.Process(pid).threads()}


def python_nice(pid: int) -> int:
    """The nice value of the process's main thread, where its Python runs. (Ray lowers only
    that one, after its own threads have started: they stay at the raylet's priority.)"""
    return os.getpriority(os.PRIO_PROCESS, pid)


def ray_start_nice() -> int:
    """Ray's `worker_niceness` as the test stack's head got it (cluster.procs.ray_env)."""
    return int(os.environ.get(WORKER_NICENESS_ENV, str(START_NICE)))


async def pooled_pid(stack: Stack, limit: float = 30) -> int:
    """The process of an actor waiting in the pool for its table (the stack's pool refills)."""
    store = redis.Redis.from_url(stack.redis.url, decode_responses=True)
    ray = stack.driver()
    deadline = asyncio.get_running_loop().time() + limit
    while True:
        for name in store.lrange(keys.POOL, 0, -1):
            try:
                handle = ray.get_actor(name, namespace=stack.namespace)
                return answered(Probe(), ray.get(send(handle, Probe()), timeout=10)).pid
            except Exception:  # taken, or stopped by a trim, meanwhile: the next one
                continue
        assert asyncio.get_running_loop().time() < deadline, "no actor in the pool"
        await asyncio.sleep(0.2)


async def test_a_table_plays_at_the_priority_of_play_and_the_pool_waits_low(stack: Stack) -> None:
    assert ray_start_nice() > DEFAULT_PLAY_NICE, "the start priority must be below play's"
    code, people = await table_with(stack.a.url, 4, 1, bot_policy="smart", time_scale=0.5)
    try:
        playing = actor_pid(stack, code)
        assert nices(playing) == {DEFAULT_PLAY_NICE}
        # Ray lowered it by its worker_niceness, from wherever the node started (QUATRO_RAY_NICE).
        assert python_nice(await pooled_pid(stack)) >= ray_start_nice()
        # A restarted incarnation starts low like any worker, and plays at play's priority
        # once it has found its table again, before anyone calls it.
        os.kill(playing, signal.SIGKILL)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 45
        while True:
            try:
                pid = actor_pid(stack, code)
                if pid != playing and nices(pid) == {DEFAULT_PLAY_NICE}:
                    break
            except (psutil.Error, RayError):
                pass  # not up yet
            assert loop.time() < deadline, "the restarted table is not at play's priority"
            await asyncio.sleep(0.2)
    finally:
        for p in people:
            await p.close()
