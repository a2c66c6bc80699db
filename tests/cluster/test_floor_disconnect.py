"""R13 over the wire: when a floor holder's connection drops, everyone sees the floor close."""

from __future__ import annotations

from engine import EMOJIS
from tests.cluster.client import table_with
from tests.cluster.test_resilience import open_round
from tests.conftest import Stack


async def test_r13_a_dropped_floor_holder_closes_the_floor_for_everyone(stack: Stack) -> None:
    code, people = await table_with(stack.a.url, 4, 2, deals=1, time_scale=0.2)
    holder, watcher = people
    await watcher.connect(code, stack.b.url)
    await open_round(code, people)
    await holder.ok("floor", open=True)
    await holder.ok("emit", emoji=EMOJIS[3])
    opened = await watcher.wait_event(lambda e: e["type"] == "floor" and e["open"] is True)
    await holder.close()
    closed = await watcher.wait_event(
        lambda e: e["type"] == "floor" and e["seat"] == 0, after=opened["seq"]
    )
    assert closed["open"] is False
    gone = watcher.latest("seat")
    assert gone is not None
    assert gone["connected"] is False
    assert gone["seq"] < closed["seq"]
    welcome = await watcher.connect(code)
    assert welcome["table"]["seats"][0]["floor"] is False
    await watcher.close()
