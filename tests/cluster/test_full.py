"""A full cluster: a new table is refused at once (`503 no_room`), and a table whose process dies
still gets its slot back. Ray gives a freed slot to an actor waiting for one before an actor
restarting; before the slot gate, new tables queued in Ray and a crashed match waited for some
other table to end (a red CI run: "not within 90 s: the bots play on")."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import redis

from actors.slots import Slots
from tests.cluster.client import Player, table_with
from tests.cluster.test_restore import (
    actor_name,
    kill_and_see_the_bots_play_on,
    quick_bots,
    snapshot,
    until,
)
from tests.conftest import Stack

POOL = "quatro:pool"


def fill_the_cluster(stack: Stack) -> Any:
    """A placement group holding every free table slot (retried while slots move under us)."""
    ray = stack.driver()
    from ray.util.placement_group import placement_group, remove_placement_group

    for _ in range(5):
        free = int(ray.available_resources().get("table_slot", 0))
        if free == 0:
            return None
        pg = placement_group([{"table_slot": free}])
        try:
            ray.get(pg.ready(), timeout=10)
            return pg
        except ray.exceptions.GetTimeoutError:
            remove_placement_group(pg)
    raise AssertionError("could not take the free slots")


def pending(stack: Stack) -> int:
    """Actors waiting for Ray to place them."""
    from ray._private import state

    stack.driver()
    return sum(1 for a in state.actors().values() if a["State"] == "PENDING_CREATION")


async def test_a_crashed_table_gets_its_slot_back_on_a_full_cluster(stack: Stack) -> None:
    ray = stack.driver()
    from ray.util.placement_group import remove_placement_group

    store = redis.Redis.from_url(stack.redis.url, decode_responses=True)
    # The bot table waits in its lobby while the cluster fills: started only just before the
    # kill, its match cannot be over by then (an over table is silent).
    code, (host,) = await table_with(stack.a.url, 4, 1, bot_policy="smart", time_scale=0.5)
    await quick_bots(host, code)
    # Both gateways' pools full first: no refill is starting actors while the slots are taken.
    await until(lambda: store.llen(POOL) >= 2, 60, "the pool is refilled")
    pg = fill_the_cluster(stack)
    opened: list[str] = []
    try:
        # Pooled actors already hold their slots: those tables open. Then the cluster is full. (A
        # gateway that read the free slots just before may still try once: `unavailable`.)
        answers = []
        for i in range(8):
            guest = await Player(stack.a.url if i % 2 else stack.b.url, f"N{i}").register()
            r = await guest.rest("POST", "/api/tables", json={"players": 4})
            answers.append(r.status_code)
            if r.status_code == 201:
                opened.append(r.json()["code"])
            elif r.json()["error"]["code"] == "no_room":
                assert r.status_code == 503
                assert int(r.headers["Retry-After"]) >= 1
                break
        else:
            raise AssertionError(f"never refused no_room on a full cluster: {answers}")
        # No new actor is left waiting in Ray for a slot: one that raced the cluster filling up
        # is killed once it has waited PLACE_WAIT_S (30 s).
        await until(lambda: pending(stack) == 0, 60, "no actor waits for a slot")
        assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
        await host.wait_event(lambda e: e["type"] == "signing")
        await host.close()
        await until(
            lambda: not snapshot(stack, code)["table"]["state"]["seats"][0]["connected"],
            15,
            "the host's departure is saved",
        )
        # The bot table's process dies: its restart must find the slot it freed.
        took = await kill_and_see_the_bots_play_on(stack, code)
        figures = {"answers": answers, "played_on_after_s": round(took, 1)}
        print(f"full cluster: {json.dumps(figures)}")
    finally:
        if pg is not None:
            remove_placement_group(pg)
        await host.close()
        for table in opened:  # lobbies would hold their slots for the rest of the session
            ray.kill(ray.get_actor(actor_name(stack, table), namespace=stack.namespace))


@pytest.mark.parametrize(
    ("free", "reserve", "asks", "granted"),
    [
        (10, 4, [8], [6]),  # never past the reserve
        (10, 4, [2, 2, 2], [2, 2, 2]),  # each grant lowers the count until the next reading
        (10, 4, [5, 5], [5, 1]),
        (3, 4, [1], [0]),  # already under the reserve
        (6, 0, [8], [6]),
    ],
)
async def test_the_slot_gate_grants_only_past_the_reserve(
    free: int, reserve: int, asks: list[int], granted: list[int]
) -> None:
    readings: list[float] = []

    def read() -> tuple[float, float]:
        readings.append(free)
        return float(free), 96.0

    slots = Slots(reserve, fresh_s=3600, read=read)
    assert [await slots.room(n) for n in asks] == granted
    assert len(readings) == 1  # one reading serves a burst


async def test_the_slot_gate_reads_again_once_stale() -> None:
    values = iter([(5.0, 96.0), (9.0, 96.0)])
    slots = Slots(4, fresh_s=0.0, read=lambda: next(values))
    assert await slots.room(3) == 1
    assert await slots.room(3) == 3
    # Concurrent asks share one lock: never more than the reading allows in all.
    gate = Slots(2, fresh_s=3600, read=lambda: (7.0, 96.0))
    got = await asyncio.gather(*(gate.room(1) for _ in range(10)))
    assert sum(got) == 5


async def test_a_cluster_that_can_grow_lets_new_tables_wait_for_the_autoscaler() -> None:
    # 60 slots now, up to 660: waiting tables are the demand that adds a worker.
    growing = Slots(4, max_slots=660, fresh_s=3600, read=lambda: (0.0, 60.0))
    assert await growing.room(8) == 8
    assert growing.can_grow
    # Grown to its limit, the reserve holds again.
    full = Slots(4, max_slots=660, fresh_s=3600, read=lambda: (3.0, 660.0))
    assert await full.room(8) == 0
    assert not full.can_grow
