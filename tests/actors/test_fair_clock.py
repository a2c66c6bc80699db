"""The round's clock is fair to the players (issue 37; docs/rules.md, R22's decision), on the
table core against a real redis-server: a restored incarnation gives back the time from the
last moment its records knew it alive, a process that stood still gives back its stall before
judging anything, and a table that was not faulted gets nothing.

Time is the test's: the table's clock is injected, and so is the steady clock the stall is
measured on (`Clock.steady`); nothing sleeps a deadline's duration."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import redis

from actors import keys
from actors.clock import BEAT_MS, STALL_AFTER_MS
from actors.protocol import Join, Outcome
from actors.table_core import TableCore
from tests.actors.test_table_core import CODE, NAME, Clock, act, saved

ROUND_MS = 180_000


class Steady:
    """The machine's steady clock, moved by the test (a frozen process: it jumps)."""

    def __init__(self) -> None:
        self.s = 1_000.0

    def __call__(self) -> float:
        return self.s


async def playing(
    url: str, clock: Clock, steady: Steady | None = None, on_moved: Callable[[], None] | None = None
) -> TableCore:
    """A table in play: the host connected, three quiet bots, the round open."""
    core = TableCore(NAME, url, now=clock, on_moved=on_moved)
    if steady is not None:
        core.clock.steady = steady
    config = {"players": 4, "seed": 7, "bot_policy": "idle"}
    assert (await core.open(CODE, config, "p0", "Ann", (600.0, 600.0))).ok
    for seat in (1, 2, 3):
        await core.serve(act("p0", "add_bot", seat=seat))
    await core.serve(Join("j-0", "gw", "gw/c0", "p0"))
    await core.serve(act("p0", "start"))
    reply = await core.serve(act("p0", "ready"))
    assert isinstance(reply, Outcome)
    assert reply.ok, reply
    assert core.table is not None
    assert core.table.view(0)["phase"] == "playing"
    return core


def deadline(core: TableCore) -> int:
    assert core.table is not None
    due = core.table.view(0)["deadline"]
    assert isinstance(due, int)
    return due


def resumed(core: TableCore) -> list[dict[str, Any]]:
    return [e.wire for e in core.feed.log if e.wire["type"] == "resumed"]


async def until(check: Any, limit: float, what: str) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while not check():
        if loop.time() > end:
            raise AssertionError(f"not within {limit} s: {what}")
        await asyncio.sleep(0.02)


async def restart(core: TableCore, url: str, clock: Clock) -> TableCore:
    """The process dies (its tasks end, its records stay); a new incarnation starts."""
    await core.tasks.close()
    await core.store.close()
    again = TableCore(NAME, url, now=clock)
    again.start()
    return again


async def test_a_restored_table_gets_back_the_time_since_its_last_beat(redis_url: str) -> None:
    clock = Clock()
    core = await playing(redis_url, clock)
    ends = deadline(core)
    # 20 s into the round, quiet (no change saved since the round opened); the clock's beat
    # says the table is alive at 25 s; it dies then and its next incarnation starts 9 s later.
    clock.ms += 25_000
    assert await core.beat(clock.ms)
    clock.ms += 9_000
    again = await restart(core, redis_url, clock)
    try:
        assert deadline(again) == ends + 9_000
        assert resumed(again) == [
            {
                "type": "resumed",
                "shift": 9_000,
                "deadline": ends + 9_000,
                "vote_deadline": None,
                "vote_ready_at": None,
            }
        ]
        # Saved and published at once, not at the next deadline.
        await until(lambda: again.feed.published == again.feed.seq, 5, "the shift published")
        assert saved(redis_url)["table"]["state"]["deadline"] == ends + 9_000
        # The round keeps exactly what it had left when the table stopped: 180 - 25 s.
        assert deadline(again) - clock.ms == ROUND_MS - 25_000
        assert again.table is not None
        assert again.table.scores == (0, 0)
    finally:
        await again.stop()


async def test_without_a_beat_the_last_save_bounds_the_stall(redis_url: str) -> None:
    """No beat reached Redis (it was lost, or Redis was away): the snapshot's own time is the
    last sign of life, and the players get more back, never less."""
    clock = Clock()
    core = await playing(redis_url, clock)
    ends, saved_at = deadline(core), clock.ms
    clock.ms += 12_000
    again = await restart(core, redis_url, clock)
    try:
        assert deadline(again) == ends + (clock.ms - saved_at)
        assert deadline(again) - clock.ms == ROUND_MS
    finally:
        await again.stop()


async def test_the_clock_beats_while_the_round_runs(redis_url: str) -> None:
    """With nothing saved, the running table's time alive reaches Redis about every second."""
    clock = Clock()
    core = await playing(redis_url, clock)
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        start = clock.ms
        loop = asyncio.get_running_loop()
        end = loop.time() + 10
        while (alive := r.get(keys.alive(CODE))) is None or int(alive) <= start:
            assert loop.time() < end, "no beat within 10 s"
            clock.ms += BEAT_MS // 2
            await asyncio.sleep(0.25)
        assert int(alive) <= clock.ms
        assert not resumed(core)
    finally:
        r.close()
        await core.stop()


async def test_a_frozen_process_gives_back_its_stall_before_judging(redis_url: str) -> None:
    """SIGSTOP'd 6 s (the steady clock and the table's jump together): the next command finds
    the round's deadline moved by the stall, and its own events come after the `resumed`."""
    clock, steady = Clock(), Steady()
    core = await playing(redis_url, clock, steady)
    ends = deadline(core)
    steady.s += 6.0
    clock.ms += 6_000
    try:
        reply = await core.serve(act("p0", "floor", open=True))
        assert isinstance(reply, Outcome)
        assert reply.ok, reply
        types = [e.wire["type"] for e in core.feed.log][-2:]
        assert types == ["resumed", "floor"]
        assert resumed(core)[0]["shift"] == 6_000
        assert deadline(core) == ends + 6_000
        assert core.clock.given_back == 6_000
    finally:
        await core.stop()


async def test_a_table_not_faulted_gets_nothing_back(redis_url: str) -> None:
    """Gaps under the stall's threshold are the ordinary life of a table: nothing moves."""
    clock, steady = Clock(), Steady()
    core = await playing(redis_url, clock, steady)
    ends = deadline(core)
    try:
        for _ in range(5):
            steady.s += STALL_AFTER_MS / 1000 - 0.1
            clock.ms += STALL_AFTER_MS - 100
            await core.clock.tick(clock.ms)
        reply = await core.serve(act("p0", "floor", open=True))
        assert isinstance(reply, Outcome)
        assert reply.ok
        assert not resumed(core)
        assert deadline(core) == ends
        assert core.clock.given_back == 0
    finally:
        await core.stop()


async def test_a_lobby_that_waited_is_no_stall(redis_url: str) -> None:
    """No clock runs in a private lobby: a long quiet there is not given back to anyone."""
    clock, steady = Clock(), Steady()
    core = TableCore(NAME, redis_url, now=clock)
    core.clock.steady = steady
    try:
        config = {"players": 4, "seed": 7, "bot_policy": "idle"}
        assert (await core.open(CODE, config, "p0", "Ann", (600.0, 600.0))).ok
        steady.s += 60.0
        clock.ms += 60_000
        await core.serve(act("p0", "add_bot", seat=1))
        assert not resumed(core)
        assert core.clock.given_back == 0
    finally:
        await core.stop()


async def test_a_cut_off_incarnation_cannot_beat_for_a_table_moved_away(redis_url: str) -> None:
    """The table moved (its record counts one more move: a gateway's fenced move): the old
    incarnation's beat is refused, so it cannot shorten the stall the new one gives back, and
    it knows itself fenced, as a refused save would tell it, and ends (an idle one would
    otherwise live on with a stale table, until a drain restarted it for nothing). Before the
    move, a drain's hand-over finds the table this incarnation's; after it, another's."""
    clock = Clock()
    ended: list[str] = []
    core = await playing(redis_url, clock, on_moved=lambda: ended.append("moved"))
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert await core.beat(clock.ms)
        handed = await core.saves.hand_over()
        assert (handed.code, handed.saved, handed.superseded) == (CODE, True, False)
        record = json.loads(str(r.get(keys.table(CODE))))
        r.set(keys.table(CODE), json.dumps({**record, "moves": 1}))
        clock.ms += 5_000
        handed = await core.saves.hand_over()
        assert (handed.code, handed.superseded) == (CODE, True)
        assert ended == []  # the drain that asked stops it: the answer must reach it first
        assert not await core.beat(clock.ms)
        assert core.store.fenced
        assert ended == ["moved"]
        assert r.get(keys.alive(CODE)) == str(clock.ms - 5_000)
    finally:
        r.close()
        await core.tasks.close()
        await core.store.close()
