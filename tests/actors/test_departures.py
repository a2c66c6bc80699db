"""A table whose people have all gone from it for good stops soon, and its actor serves the next
table (actors/departures.py, `QUATRO_LEFT_IDLE`); a table whose player only lost their link
keeps its long wait (`QUATRO_OVER_IDLE`, `QUATRO_ABANDONED_IDLE`). The table core against a
real redis-server, its match played on an injected clock: nothing waits for a real grace."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable

import redis

from actors import keys
from actors.departures import all_gone
from actors.idle import IdleLimits
from actors.protocol import Act, Join, Leave, Outcome
from actors.table_core import TableCore
from cluster.procs import RedisServer
from cluster.redis_client import async_redis
from engine.phase import Phase

CODE = "LEFT22"
ELSEWHERE = "NEXT33"
HOST = "p-host"
START = 1_800_000_000_000
OVER_S, LOBBY_S, ABANDONED_S, LEFT_S = 600.0, 600.0, 1800.0, 60.0
_ids = itertools.count()


class Clock:
    """The table's time, moved by the test."""

    def __init__(self) -> None:
        self.ms = START

    def __call__(self) -> int:
        return self.ms


def act(kind: str, **args: object) -> Act:
    return Act.of(f"cmd-{next(_ids)}", "gw", HOST, kind, dict(args))


async def started(
    url: str,
    clock: Clock,
    left_s: float = LEFT_S,
    on_stop: Callable[[], Awaitable[None]] | None = None,
) -> TableCore:
    """A 4-seat match in play: its host (a person, not connected) and three sharp bots."""
    core = TableCore("T-left", url, on_stop=on_stop, now=clock)
    idle = (OVER_S, LOBBY_S, ABANDONED_S, left_s)
    config = {"players": 4, "seed": 3, "bot_level": "sharp"}
    opened = await core.open(CODE, config, HOST, "Ann", idle)
    assert opened.ok, opened
    for seat in (1, 2, 3):
        assert isinstance(reply := await core.serve(act("add_bot", seat=seat)), Outcome)
        assert reply.ok, reply
    assert isinstance(reply := await core.serve(act("start")), Outcome)
    assert reply.ok, reply
    return core


async def played_out(core: TableCore, clock: Clock) -> None:
    """The match played to its end: each step jumps to the next thing due (at least a beat)."""
    assert core.table is not None
    for _ in range(20_000):
        if core.table.phase is Phase.OVER:
            return
        due = core.clock.next_due(clock.ms)
        clock.ms = max(clock.ms + 250, due or 0)
        await core.clock.tick(clock.ms)
    raise AssertionError(f"the match did not end: {core.table.phase}")


async def settled(core: TableCore) -> None:
    """Until the finished match's ratings are settled (a task of the table's, after the save
    that ended it): until then the table keeps its long wait whoever has gone."""
    for _ in range(300):  # 15 s at most
        if not core.results.owed:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"ratings still owed after 15 s: {core.results.owed}")


def records(url: str, *, seated: bool, latest: str | None) -> None:
    """The host's session records, as the gateway writes them (`Sessions.seated`)."""
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        if seated:
            r.hset(keys.player_tables(HOST), CODE, 0)
        else:
            r.hdel(keys.player_tables(HOST), CODE)
        if latest is None:
            r.delete(keys.player_latest(HOST))
        else:
            r.set(keys.player_latest(HOST), latest)
    finally:
        r.close()


async def wait_s(core: TableCore, clock: Clock) -> float:
    """After one look at who has gone: how long the table would wait now before it stops."""
    await core.clock.look()
    due = core.clock.idle_due(clock.ms)
    assert due is not None
    return (due - clock.ms) / 1000


async def test_a_finished_match_stops_soon_once_its_people_went_on_not_when_one_dropped(
    redis_url: str,
) -> None:
    clock = Clock()
    core = await started(redis_url, clock)
    try:
        await played_out(core, clock)
        await settled(core)
        # Their link lost (a phone on a bad network): the records still name this table as
        # theirs and as the latest. The long wait holds.
        records(redis_url, seated=True, latest=CODE)
        assert await wait_s(core, clock) > LEFT_S
        # They sat down at another table since: gone for good, the short wait.
        records(redis_url, seated=True, latest=ELSEWHERE)
        assert 0 < await wait_s(core, clock) <= LEFT_S
        # But not while the match's ratings are still owed (a Redis failing over): those are
        # settled for as long as the table lives.
        core.results.owed.append({"match": 99})
        assert await wait_s(core, clock) > LEFT_S
        core.results.owed.pop()
        assert 0 < await wait_s(core, clock) <= LEFT_S
        # A hello here again (their latest table is this one): the long wait is back.
        records(redis_url, seated=True, latest=CODE)
        assert await wait_s(core, clock) > LEFT_S
        # The home page dropped the finished match from their tables: gone.
        records(redis_url, seated=False, latest=CODE)
        assert 0 < await wait_s(core, clock) <= LEFT_S
        # Connected again (a tab left open here, whatever their records say): nobody has gone.
        await core.serve(Join("j-1", "gw", "gw/c1", HOST))
        records(redis_url, seated=True, latest=ELSEWHERE)
        assert await wait_s(core, clock) > LEFT_S
        assert core.clock.left_since is None
        await core.serve(Leave("gw", "gw/c1"))
        # Records older than `player_latest` (an older gateway's), or none at all (expired):
        # nobody is taken for gone.
        records(redis_url, seated=True, latest=None)
        assert await wait_s(core, clock) > LEFT_S
        records(redis_url, seated=False, latest=None)
        assert await wait_s(core, clock) > LEFT_S
    finally:
        await core.stop()


async def test_a_match_in_play_keeps_its_long_wait_for_a_dropped_player(redis_url: str) -> None:
    clock = Clock()
    core = await started(redis_url, clock)
    try:
        assert core.table is not None
        assert core.table.phase is not Phase.OVER
        records(redis_url, seated=True, latest=CODE)
        assert await wait_s(core, clock) > OVER_S  # QUATRO_ABANDONED_IDLE's, as before
        # Every person of it plays at another table now: it was abandoned.
        records(redis_url, seated=True, latest=ELSEWHERE)
        assert 0 < await wait_s(core, clock) <= LEFT_S
    finally:
        await core.stop()


async def test_a_finished_match_everyone_went_on_from_stops_by_its_own_clock(
    redis_url: str,
) -> None:
    stopped = asyncio.Event()

    async def on_stop() -> None:
        stopped.set()

    clock = Clock()
    core = await started(redis_url, clock, left_s=0.0, on_stop=on_stop)
    core.clock.look_every_s = 0.2  # its looks: every 5 s on a server
    records(redis_url, seated=True, latest=CODE)
    await played_out(core, clock)
    records(redis_url, seated=True, latest=ELSEWHERE)
    # The clock's own look (every few seconds while nobody is connected) finds them gone.
    async with asyncio.timeout(15):
        await stopped.wait()
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert r.get(keys.table(CODE)) is None  # nobody finds it any more
    finally:
        r.close()


async def test_without_an_answer_from_redis_nobody_is_taken_for_gone() -> None:
    server = RedisServer().start()
    url = server.url
    server.cleanup()  # stopped: nothing answers on its port
    client = async_redis(url, 1.0)
    try:
        assert await all_gone(client, CODE, [HOST]) is None
        assert await all_gone(client, CODE, []) is True  # nobody to wait for
    finally:
        await client.aclose()


def test_idle_limits_from_an_older_gateway_keep_the_defaults_for_the_rest() -> None:
    assert IdleLimits.of((1.0, 2.0, 3.0)) == IdleLimits(1.0, 2.0, 3.0, IdleLimits().left_s)
    assert IdleLimits.of((5.0, 6.0)).abandoned_s == IdleLimits().abandoned_s
    assert IdleLimits.of((1.0, 2.0, 3.0, 4.0, 5.0, 9.0)).values() == (1.0, 2.0, 3.0, 4.0, 5.0)
