"""The pool's floor for a known peak (actors/pool_floor.py): the schedule as the functions of the
time of day they are, and the floor an operator keeps in the store for one event, read by a
gateway through a real redis-server on a clock given to it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from actors import keys
from actors.pool_floor import (
    FRESH_S,
    Floor,
    ScheduleError,
    Window,
    main,
    parse_schedule,
    scheduled,
    set_floor,
    stored_floor,
)
from cluster.redis_client import async_redis, sync_redis


def at(hh: int, mm: int) -> datetime:
    return datetime(2026, 12, 6, hh, mm, tzinfo=UTC)


def test_a_count_holds_all_day_and_nothing_holds_nothing() -> None:
    assert parse_schedule("") == parse_schedule(" 0 ") == ()
    always = parse_schedule("12")
    assert [scheduled(always, at(h, 30)) for h in (0, 9, 23)] == [12, 12, 12]
    assert scheduled((), at(20, 0)) == 0


def test_windows_of_the_day_in_utc_the_highest_holding_wins() -> None:
    windows = parse_schedule("18:30-23:00=40, 20:00-21:00=60,12:00-13:30=10")
    assert windows[0] == Window(18 * 60 + 30, 23 * 60, 40)
    assert scheduled(windows, at(18, 29)) == 0
    assert scheduled(windows, at(18, 30)) == 40
    assert scheduled(windows, at(20, 15)) == 60  # the event inside the evening
    assert scheduled(windows, at(22, 59)) == 40
    assert scheduled(windows, at(23, 0)) == 0  # the end is not in it
    assert scheduled(windows, at(12, 45)) == 10
    # Read in UTC whatever the zone of the time given.
    paris = datetime(2026, 12, 6, 21, 0).astimezone()
    assert scheduled(windows, paris) == scheduled(windows, paris.astimezone(UTC))


def test_a_window_may_run_past_midnight() -> None:
    late = parse_schedule("22:00-01:00=20,23:00-24:00=5")
    assert [scheduled(late, at(h, 0)) for h in (21, 22, 23, 0, 1)] == [0, 20, 20, 20, 0]


@pytest.mark.parametrize(
    "typo", ["forty", "18:30-23:00", "18-23=4", "25:00-26:00=3", "18:61-19:00=3", "1e9", "99999"]
)
def test_a_schedule_that_cannot_be_read_is_refused_by_name(typo: str) -> None:
    with pytest.raises(ScheduleError):
        parse_schedule(typo)


async def test_a_floor_kept_in_the_store_lifts_the_schedule_for_its_time(redis_url: str) -> None:
    redis = async_redis(redis_url)
    t = [datetime(2026, 12, 6, 19, 0, tzinfo=UTC).timestamp()]
    floor = Floor(redis, "", parse_schedule("18:00-23:00=8"), clock=lambda: t[0])
    try:
        assert await floor.now() == 8
        await set_floor(redis, "", 30, for_s=3600)
        assert await floor.now() == 8  # read again only after FRESH_S
        t[0] += FRESH_S
        assert await floor.now() == 30
        stored, left = await stored_floor(redis, "")
        assert (stored, 3598 <= left <= 3600) == (30, True)
        await set_floor(redis, "", 0, 0)  # cleared
        t[0] += FRESH_S
        assert await floor.now() == 8
        await set_floor(redis, "", 3, for_s=3600)  # below the schedule: the schedule holds
        t[0] += FRESH_S
        assert await floor.now() == 8
        # A cell's floor is its own.
        await set_floor(redis, "b", 50, for_s=3600)
        assert await Floor(redis, "a").now() == 0
        assert await Floor(redis, "b").now() == 50
        await redis.set(keys.pool_floor(), "junk")
        t[0] += FRESH_S
        assert await floor.now() == 8  # junk counts as none
    finally:
        await redis.aclose()


def test_the_operators_command_sets_shows_and_clears_a_floor(
    redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["set", "25", "--for", "90m", "--redis-url", redis_url, "--cell", ""]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["stored"], 5390 <= shown["stored_for_s"] <= 5400) == (25, True)
    client = sync_redis(redis_url)
    assert client.get(keys.pool_floor()) == "25"
    assert main(["clear", "--redis-url", redis_url, "--cell", ""]) == 0
    assert json.loads(capsys.readouterr().out)["stored"] == 0
    assert client.get(keys.pool_floor()) is None
    with pytest.raises(SystemExit):
        main(["set", "--redis-url", redis_url])  # a floor is needed
