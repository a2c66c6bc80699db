"""A stalled control store does not stall a gateway's event loop while the pool starts an actor.

Starting a table actor asks Ray's control store (the GCS) for the name, then registers the
named actor: both are blocking calls. Made on the event loop, they held up every player of the
gateway for as long as the GCS took to answer, which on a loaded machine was seconds (a burst of
new tables, each refill a start). The pool now makes them in a thread (actors/pool_starts.py).

The GCS is stopped (SIGSTOP) for two seconds while a start is under way: a task on the same loop
ticks every 50 ms meanwhile, and must never wait more than half a second.
"""

from __future__ import annotations

import asyncio
import os
import signal

import psutil
import pytest

from actors.pool_starts import Starts
from actors.ray_calls import LastAnswer
from actors.ray_names import Handle, RayActors
from actors.slots import Slots
from actors.tasks import Tasks
from tests.conftest import Stack

STALL_S = 2.0
TICK_S = 0.05


def gcs_of(stack: Stack) -> psutil.Process:
    assert stack.head.proc is not None
    for p in psutil.Process(stack.head.proc.pid).children(recursive=True):
        if p.name() == "gcs_server":
            return p
    raise AssertionError("the stack's head has no gcs_server")


@pytest.mark.destructive
async def test_a_start_while_the_gcs_stalls_leaves_the_loop_free(stack: Stack) -> None:
    stack.driver()
    gcs = gcs_of(stack)
    actors = RayActors(stack.namespace, stack.redis.url)
    placed: list[tuple[str, Handle]] = []

    async def place(name: str, handle: Handle) -> None:
        placed.append((name, handle))

    tasks = Tasks("test starts")
    starts = Starts(actors, Slots(0), LastAnswer(), tasks, place, lambda: None)
    loop = asyncio.get_running_loop()
    longest = 0.0
    try:
        os.kill(gcs.pid, signal.SIGSTOP)
        try:
            starts.start()
            last = loop.time()
            end = last + STALL_S
            while loop.time() < end:
                await asyncio.sleep(TICK_S)
                now = loop.time()
                longest = max(longest, now - last)
                last = now
        finally:
            os.kill(gcs.pid, signal.SIGCONT)
        await asyncio.wait_for(starts.none.wait(), 60)
        assert longest < 0.5, f"the loop stood still {longest:.2f} s while the GCS stalled"
        assert len(placed) == 1, "the actor started once the GCS answered again"
    finally:
        await tasks.close()
        for _, handle in placed:
            await asyncio.to_thread(actors.kill, handle)
