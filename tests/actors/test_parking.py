"""A table nobody is connected to parks (actors/parking.py): saved with a marker, its record
parked and fenced, its keys set to expire when its own wait would end it; a ready actor that
takes it over (`Adopt`, as actors/waking.py does) lets what fell due while it slept fire in
order, exactly as a table that never slept; a finished match owing ratings does not park until
they are settled. The table core against a real redis-server, on an injected clock."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest
import redis

from actors import keys
from actors.protocol import Act, Entry, Outcome
from actors.ratings import match_id
from actors.rescue import HAND_OVER, MOVE_HERE
from actors.store import TableMoved
from actors.table_core import TableCore
from cluster.redis_client import async_redis
from engine.phase import Phase
from tests.actors.test_departures import Clock, played_out, settled

CODE = "PARK22"
HOST = "p-host"
# Over, lobby, abandoned, left, park (s): the park's own delay is not waited for here.
IDLE = (600.0, 600.0, 1800.0, 20.0, 45.0)
SLEPT_MS = 500_000  # two void rounds (R22: 3 min each) and their pauses fall due meanwhile
_ids = itertools.count()


def act(kind: str, **args: object) -> Act:
    return Act.of(f"cmd-{next(_ids)}", "gw", HOST, kind, dict(args))


async def match(url: str, clock: Clock, name: str, policy: str = "idle") -> TableCore:
    """A 4-seat match in play, its round open: the host (a person, not connected) and three
    bots (`idle`: silent, so only the table's own deadlines move it)."""
    core = TableCore(name, url, now=clock)
    config = {"players": 4, "seed": 5, "bot_policy": policy, "bot_level": "sharp"}
    opened = await core.open(CODE, config, HOST, "Ann", IDLE, table_id=f"id-{name}")
    assert opened.ok, opened
    for seat in (1, 2, 3):
        assert isinstance(reply := await core.serve(act("add_bot", seat=seat)), Outcome)
        assert reply.ok, reply
    assert isinstance(reply := await core.serve(act("start")), Outcome)
    assert reply.ok, reply
    await core.clock.tick(clock.ms)  # R6: nobody connected, the round opens at once
    assert core.table is not None
    assert core.table.phase is Phase.PLAYING
    return core


def events(entries: list[Entry]) -> list[tuple[Any, ...]]:
    return [(e.scope, e.scope_index, e.wire, e.at) for e in entries]


async def never_slept(url: str) -> tuple[int, list[tuple[Any, ...]], dict[str, Any]]:
    """The same match on a table that never slept, its clock ticking every 250 ms through the
    same while: the seq it was at, the events after it, and the host's view at the end."""
    clock = Clock()
    core = await match(url, clock, "T-control")
    try:
        seq = core.feed.seq
        end = clock.ms + SLEPT_MS
        while clock.ms < end:
            clock.ms = min(end, clock.ms + 250)
            await core.clock.tick(clock.ms)
        assert core.table is not None
        return seq, events(core.feed.since(seq, core.feed.seq)), core.table.view(0)
    finally:
        await core.tasks.close()
        await core.store.close()


async def test_a_parked_match_wakes_in_another_actor_as_if_it_had_never_slept(
    redis_url: str,
) -> None:
    seq0, expected, view = await never_slept(redis_url)
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    r.flushdb()
    clock = Clock()
    pooled: list[str] = []
    moved: list[str] = []

    async def on_park() -> None:
        pooled.append("back in the pool")

    core = await match(redis_url, clock, "T-park")
    core.parking._on_park = on_park
    core._on_moved = lambda: moved.append("ended")
    assert core.feed.seq == seq0
    assert core.table is not None
    before = core.table.view(0)
    assert before["hand"], before
    # Nobody connected: it would park `park_s` from now (on the process's own steady clock).
    due = core.parking.due(clock.ms)
    assert due is not None
    assert 44 < due - time.monotonic() <= 45
    assert await core.parking.park()
    assert pooled == ["back in the pool"]

    record = json.loads(r.get(keys.table(CODE)) or "{}")
    assert record["parked"]
    assert (record["actor"], record["moves"]) == ("T-park", 1)
    # Its own wait (abandoned: nobody connected) ends it: the keys expire then, nothing runs.
    for key in (keys.table(CODE), keys.snapshot(CODE), keys.log(CODE)):
        assert 1790_000 < r.pttl(key) <= 1800_000, key
    snapshot = json.loads(r.get(keys.snapshot(CODE)) or "{}")
    assert set(snapshot["parked"]) == {"at", "active"}
    assert r.zscore(keys.parked(), CODE) is not None
    # A command that reaches the parked incarnation is fenced: never saved, never published,
    # and the actor (serving another table now) is not ended for it.
    with pytest.raises(TableMoved):
        await core.serve(act("floor", open=True))
    assert moved == []

    # Time passes while it sleeps; then a ready actor takes it over, as a wake does.
    clock.ms += SLEPT_MS
    into = TableCore("T-into", redis_url, now=clock)
    assert into.table is None
    client = async_redis(redis_url, 2.0)
    try:
        await client.set(keys.actor("T-into"), CODE)
        won = int(await MOVE_HERE.run(client, [keys.table(CODE)], ["T-park", 1, "T-into"]))
        assert won == 2
        adopted = into.adopt(CODE)
        assert adopted.ok, adopted
        assert await HAND_OVER.run(client, [keys.table(CODE)], ["T-into", won, "0"]) == 1
    finally:
        await client.aclose()
    try:
        assert abs(into.last_activity - core.last_activity) < 1.0  # its long wait goes on
        await into.clock.tick(clock.ms)
        assert into.table is not None
        # Every deadline that fell due while it slept fired at its own time, in order: the
        # same events as the table that never slept, and the host sees the same table.
        assert events(into.feed.since(seq0, into.feed.seq)) == expected
        assert [w for _, _, w, _ in expected if w["type"] == "reveal"], "no round ended"
        assert into.table.view(0) == view
        # Saved with what fired: the record is the table's again, with its usual lifetime.
        record = json.loads(r.get(keys.table(CODE)) or "{}")
        assert "parked" not in record
        assert record["actor"] == "T-into"
        assert r.pttl(keys.table(CODE)) > 1800_000
    finally:
        await into.tasks.close()
        await into.store.close()
        r.close()


async def test_a_finished_match_owing_its_ratings_parks_only_once_they_are_settled(
    redis_url: str,
) -> None:
    clock = Clock()
    core = await match(redis_url, clock, "T-owed", policy="smart")
    try:
        await played_out(core, clock)
        # The save that ended the match holds the ratings owed; their settling is a task of
        # the table's that has not run yet (nothing was awaited since).
        assert core.results.owed
        assert core.parking.due(clock.ms) is None
        owed = [match_id(core.table_id, int(m["match"])) for m in core.results.owed]
        await settled(core)
        assert core.parking.due(clock.ms) is not None
        assert await core.parking.park()
        r = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            snapshot = json.loads(r.get(keys.snapshot(CODE)) or "{}")
            assert snapshot["results"].get("owed", []) == []
            assert owed
            assert all(r.exists(keys.match(m)) for m in owed), owed
        finally:
            r.close()
    finally:
        await core.tasks.close()
        await core.store.close()
