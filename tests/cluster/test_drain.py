"""A Ray node that must go (a scale-down, a rolling upgrade, `kubectl drain`) hands its tables
over: `python -m actors.drain`, the worker pods' preStop hook, moves each table actor to another
node from its snapshot while its players stay connected, and nothing is lost."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time

import pytest

from actors.protocol import Probe
from cluster.procs import RayWorkerNode
from tests.cluster.client import Player
from tests.cluster.test_data_plane import _node_of, ask_now, table_on_node
from tests.cluster.test_resilience import open_round
from tests.conftest import ROOT, Stack


def _drain(stack: Stack, node_id: str, deadline: float) -> dict[str, object]:
    env = dict(os.environ)
    env.update(stack.head.driver_env())
    env.update(
        RAY_ADDRESS=stack.head.address,
        RAY_NAMESPACE=stack.namespace,
        PYTHONPATH=str(ROOT),
    )
    done = subprocess.run(
        [sys.executable, "-m", "actors.drain", "--node-id", node_id, "--deadline", str(deadline)],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline + 60,
        check=False,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, (done.returncode, done.stdout, done.stderr[-3000:])
    moves: dict[str, object] = json.loads(lines[-1])
    print("drain:", lines[-1])
    assert done.returncode == 0, (moves, done.stderr[-3000:])
    return moves


@pytest.mark.destructive
async def test_a_drained_node_hands_its_tables_over_without_a_lost_point(stack: Stack) -> None:
    node = RayWorkerNode(stack.head, table_slots=8, num_cpus=1, object_store_mb=80).start()
    people: list[Player] = []
    try:
        node_id = await _node_of(stack, node.manager_port)
        code, people, handle = await table_on_node(stack, node_id)
        rounds = await open_round(code, people)
        host, other = people
        await other.connect(code, stack.b.url)  # one player per gateway
        before = (await host.connect(code, stack.a.url))["table"]
        incarnation = ask_now(stack, handle, Probe()).incarnation

        moves = await asyncio.to_thread(_drain, stack, node_id, 60.0)
        assert moves["node"] == node_id
        assert int(str(moves["here"])) >= 1, moves
        assert moves["back"] == moves["here"], moves
        assert moves["stuck"] == [], moves
        assert moves["unsaved"] == [], moves
        where = ask_now(stack, handle, Probe())
        assert where.node != node_id
        assert where.incarnation != incarnation

        # The players never reconnected by hand: the same connections play on.
        mine = rounds[1]
        started = time.monotonic()
        await other.ok("swap", card=mine["hand"][0]["id"], slot=0, expect=mine["center"][0]["id"])
        seen = await host.wait_event(lambda e: e["type"] == "swapped" and e["seat"] == 1)
        assert seen["placed"]["id"] == mine["hand"][0]["id"]
        assert time.monotonic() - started < 10
        after = (await host.connect(code, stack.b.url))["table"]
        assert after["hand"] == before["hand"] == rounds[0]["hand"]
        assert after["scores"] == before["scores"]
        assert (after["round"], after["phase"]) == (before["round"], "playing")
        for p in people:
            assert not p.problems
    finally:
        for p in people:
            with contextlib.suppress(Exception):
                await p.close()
        node.stop()
