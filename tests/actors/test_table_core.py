"""The table core without Ray, against a real redis-server: every change goes through one path
(version, feed and snapshot advance together), a restarted core finds its table again, a refused
command changes nothing, the clock lets time pass at an injected time, and a stopped core leaves
no task behind."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
import redis

from actors import keys, watchers
from actors.orders import is_order
from actors.protocol import Act, ErrorBody, Join, Leave, Outcome, Unreadable, Views, ViewSet
from actors.snapshot import DEFAULT_REPLAY_TTL_S
from actors.store import STOPPED_TTL_S
from actors.table_core import TableCore
from engine.errors import ErrorCode

CODE = "CORE"
NAME = "T-core"
START = 1_800_000_000_000  # the injected clock's start (ms)
_ids = itertools.count()
UNKNOWN = ErrorBody("unknown_type", "no such command: 'juggle'")


class Clock:
    """The table's time, moved by the test: nothing here waits for a real deadline."""

    def __init__(self) -> None:
        self.ms = START

    def __call__(self) -> int:
        return self.ms


def saved(url: str, code: str = CODE) -> dict[str, Any]:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        raw = r.get(keys.snapshot(code))
        assert isinstance(raw, str), "no snapshot in Redis"
        return dict(json.loads(raw))
    finally:
        r.close()


def stored_log(url: str, code: str = CODE) -> list[list[Any]]:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        return [json.loads(x) for x in r.lrange(keys.log(code), 0, -1)]
    finally:
        r.close()


def act(player: str, kind: str, **args: Any) -> Act:
    return Act.of(f"cmd-{next(_ids)}", "gw", player, kind, args)


async def opened(url: str, clock: Clock, players: int = 4) -> TableCore:
    core = TableCore(NAME, url, now=clock)
    answer = await core.open(CODE, {"players": players, "seed": 7}, "p0", "Ann", (600.0, 600.0))
    assert answer.ok, answer
    return core


def in_step(core: TableCore, url: str) -> None:
    """The one path's promise: what is applied is committed, saved and published together.
    (Not `saved == version`: the clock's empty ticks bump the version and save nothing.)"""
    assert core.feed.published == core.feed.seq
    snap = saved(url)
    assert snap["seq"] == core.feed.seq
    assert core.table is not None
    # The table's injected time stands still, so the clock's empty ticks leave this equal.
    assert snap["table"] == core.table.to_snapshot()
    assert stored_log(url)[-1][0] == core.feed.seq


async def test_each_change_advances_version_feed_and_snapshot_together(redis_url: str) -> None:
    clock = Clock()
    core = await opened(redis_url, clock)
    try:
        in_step(core, redis_url)
        for seat in (1, 2, 3):
            before = (core.version, core.feed.seq)
            reply = await core.serve(act("p0", "add_bot", seat=seat))
            assert isinstance(reply, Outcome)
            assert reply.ok, reply
            assert reply.events, "an applied command's events come back in its reply"
            assert core.version > before[0]
            assert core.feed.seq > before[1]
            assert [e.seq for e in reply.events] == list(range(before[1] + 1, core.feed.seq + 1))
            in_step(core, redis_url)
        joined = await core.serve(Join("j-1", "gw", "gw/c0", "p0"))
        assert core.conns == {0: "gw/c0"}, joined
        in_step(core, redis_url)
        assert saved(redis_url)["conns"] == {"0": "gw/c0"}
        await core.serve(Leave("gw", "gw/c0"))
        assert core.conns == {}
        in_step(core, redis_url)
    finally:
        await core.stop()


async def test_open_awaits_nothing_between_the_hosts_seat_and_its_commit(redis_url: str) -> None:
    """`open` claims its code in Redis first, then seats the host and commits in one stretch:
    a request that comes during the claim finds no table, rather than one whose host's seat is
    applied and not yet committed (it found that before), and a second `open` meanwhile is
    refused without claiming a code of its own."""
    core = TableCore(NAME, redis_url, now=Clock())
    first = asyncio.ensure_future(
        core.open(CODE, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))
    )
    await asyncio.sleep(0)  # the first `open` now waits for its claim
    try:
        during = await core.serve(Views(((0, "p0"),)))
        assert isinstance(during, ViewSet)
        assert during.joined == {}, "a table seen before its host's seat was committed"
        second = await core.open("OTHER", {"players": 4}, "p9", "Zed", (600.0, 600.0))
        assert not second.ok
        assert second.error is not None
        assert second.error.code == ErrorCode.NOT_ALLOWED
        opened = await first
        assert (opened.ok, opened.seat) == (True, 0), opened
        r = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            assert r.get(keys.actor(NAME)) == CODE  # the second never claimed "OTHER"
        finally:
            r.close()
        assert core.table is not None
        assert core.table.seat_of("p0") == 0
        in_step(core, redis_url)
    finally:
        await core.stop()


async def test_a_refused_command_changes_nothing(redis_url: str) -> None:
    clock = Clock()
    core = await opened(redis_url, clock)
    try:
        before = (core.version, core.feed.seq, json.dumps(saved(redis_url), sort_keys=True))
        view = core.requests.view(0)
        # Seat 2 holds no bot: the engine refuses, and says so in the reply only.
        reply = await core.serve(act("p0", "remove_bot", seat=2))
        assert isinstance(reply, Outcome)
        assert not reply.ok
        assert reply.error is not None
        assert reply.events == ()
        # Someone with no seat here may not act for one either.
        stranger = await core.serve(act("p9", "start"))
        assert isinstance(stranger, Outcome)
        assert stranger.error is not None
        assert stranger.error.code == "no_seat"
        # A command this version cannot read (a newer gateway's kind) is refused, unapplied.
        unread = Act("cmd-u", "gw", "p0", Unreadable("juggle", {}, UNKNOWN))
        refused = await core.serve(unread)
        assert isinstance(refused, Outcome)
        assert (refused.ok, refused.error) == (False, UNKNOWN)
        after = (core.version, core.feed.seq, json.dumps(saved(redis_url), sort_keys=True))
        assert after == before
        assert core.requests.view(0) == view
    finally:
        await core.stop()


async def test_a_restarted_core_finds_its_table_and_its_answers_again(redis_url: str) -> None:
    clock = Clock()
    core = await opened(redis_url, clock)
    first = act("p0", "add_bot", seat=1)
    await core.serve(first)
    await core.serve(Join("j-1", "gw", "gw/c0", "p0"))
    seq, view = core.feed.seq, core.requests.view(0)
    await core.tasks.close()  # the process dies: its tasks end, its records stay

    again = TableCore(NAME, redis_url, now=clock)  # a new incarnation of the same actor
    try:
        assert again.code == CODE
        assert not again.lost
        assert again.feed.seq == seq
        assert again.saves.stored_seq == seq
        assert again.requests.view(0) == view
        assert again.conns == {0: "gw/c0"}
        # A gateway's retry of a command judged before the restart is not applied twice.
        retried = await again.serve(first)
        assert isinstance(retried, Outcome)
        assert retried.ok
        assert retried.replayed
        assert again.feed.seq == seq
        # And the log a gateway resubscribes from came back with it.
        assert again.feed.covers(seq - 3)
    finally:
        await again.stop()


async def test_an_unreadable_snapshot_leaves_a_lost_core_and_a_tombstone(redis_url: str) -> None:
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        r.set(keys.actor(NAME), CODE)
        r.set(keys.snapshot(CODE), json.dumps({"format": 99, "table": {}}))
        core = TableCore(NAME, redis_url)
        assert core.lost
        assert core.table is None
        assert r.get(keys.snapshot(CODE)) is None
        assert r.get(keys.actor(NAME)) is None
        assert "unknown snapshot format" in str(r.get(keys.lost(CODE)))
    finally:
        r.close()


async def test_the_clock_lets_time_pass_at_an_injected_time(redis_url: str) -> None:
    clock = Clock()
    core = await opened(redis_url, clock)
    try:
        for seat in (1, 2, 3):
            await core.serve(act("p0", "add_bot", seat=seat))
        reply = await core.serve(act("p0", "start"))
        assert isinstance(reply, Outcome)
        assert reply.ok, reply
        seq = core.feed.seq
        # Nothing is due yet at the time the match started: a tick changes nothing in the feed.
        assert await core.clock.tick(clock.ms) == []
        assert core.feed.seq == seq
        moves = 0
        for _ in range(40):  # bounded: each step jumps to the next thing due
            due = core.clock.next_due(clock.ms)
            assert due is not None, "a match in play always has something due"
            clock.ms = max(clock.ms, due)
            moves += len(await core.clock.tick(clock.ms))
        assert moves > 0
        assert core.feed.seq == seq + moves
        in_step(core, redis_url)
        assert clock.ms > START  # time passed only as the test moved it
    finally:
        await core.stop()


async def test_a_stopped_core_leaves_no_task_behind(redis_url: str) -> None:
    ended: list[str] = []

    async def on_stop() -> None:
        ended.append("stopped")

    clock = Clock()
    core = TableCore(NAME, redis_url, on_stop=on_stop, now=clock)
    await core.open(CODE, {"players": 4}, "p0", "Ann", (600.0, 600.0))  # watchers welcome
    # Give it one of each task: its clock, a count of watchers to announce, a gateway whose link
    # broke (its lease grace), and the follower of another.
    await core.serve(Join("j-1", "gw2", "gw2/w1", "p5", watch=True))
    core.link_ended("gw3", orderly=False)
    follower = core.follow("gw4", -1, leased=True)
    first = await follower.__anext__()
    assert first.head == core.feed.published
    mine = core.tasks.running()
    assert {t.get_name().split(":")[-1] for t in mine} >= {
        "clock",
        "announce-watching",
        "gone-check",
    }
    await core.stop()
    assert ended == ["stopped"]
    assert core.tasks.running() == []
    left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert left == [], left
    # Its follower was told to end, and its records are gone or going.
    with pytest.raises(StopAsyncIteration):
        await follower.__anext__()
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert r.get(keys.table(CODE)) is None
        assert 0 < int(r.ttl(keys.snapshot(CODE))) <= STOPPED_TTL_S
        # The actor's record stays as long as the replay it names the code of, and no longer.
        assert r.get(keys.actor(NAME)) == CODE
        assert int(r.ttl(keys.replay(CODE, NAME))) <= int(r.ttl(keys.actor(NAME)))
        assert int(r.ttl(keys.actor(NAME))) <= DEFAULT_REPLAY_TTL_S + 3 * 3600
    finally:
        r.close()
    # A call arriving as the actor ends starts nothing that would outlive it.
    core.start()
    assert core.tasks.running() == []


async def test_an_idle_table_stops_itself_through_its_clock(redis_url: str) -> None:
    stopped = asyncio.Event()

    async def on_stop() -> None:
        stopped.set()

    core = TableCore(NAME, redis_url, on_stop=on_stop)
    # A lobby that may wait no time at all: its clock stops it at its first look.
    await core.open(CODE, {"players": 4}, "p0", "Ann", (0.0, 0.0))
    async with asyncio.timeout(10):
        await stopped.wait()
    async with asyncio.timeout(10):
        await asyncio.gather(*core.tasks.running())  # the clock returns once it stopped the table
    assert core.tasks.running() == []
    assert core.table is not None
    assert core.table.phase.name == "LOBBY"


async def test_the_count_of_watchers_is_announced_through_the_one_path(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The announcement waits QUATRO_WATCHING_ANNOUNCE (2 s) to gather a crowd: none here.
    monkeypatch.setattr(watchers, "WATCHING_ANNOUNCE_S", 0.0)
    clock = Clock()
    core = await opened(redis_url, clock)
    try:
        version, seq = core.version, core.feed.seq
        for n in range(3):
            await core.serve(Join(f"w-{n}", "gw", f"gw/w{n}", f"watcher{n}", watch=True))
        announcing = [t for t in core.tasks.running() if "announce" in t.get_name()]
        assert len(announcing) == 1
        async with asyncio.timeout(10):
            await asyncio.gather(*announcing)
        told = [e for e in core.feed.since(seq, core.feed.seq) if e.wire["type"] == "watching"]
        assert [e.wire["count"] for e in told] == [3]  # once, whatever arrived meanwhile
        assert core.version > version
        in_step(core, redis_url)
    finally:
        await core.stop()


def stored_replay(url: str) -> list[list[Any]]:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        return [json.loads(x) for x in r.lrange(keys.replay(CODE, NAME), 0, -1)]
    finally:
        r.close()


async def test_a_save_sent_twice_appends_nothing_twice(redis_url: str) -> None:
    """A save whose answer came late is sent again (redis-py on a timeout, the core's retry of
    a save it thinks failed) though Redis applied it: seen as a seq twice in a table's log in
    the R30 property test. The log and the replay still hold each event once, in order."""
    clock = Clock()
    core = await opened(redis_url, clock)
    try:
        await core.serve(act("p0", "add_bot", seat=1))
        assert core.table is not None
        new = core.feed.since(0, core.feed.seq)
        assert len(new) >= 2
        for _ in range(2):  # the same save again, and one that overlaps it
            assert (await core.store.write(CODE, core.snapshot(), new, 4, 3600)).ok
        assert (await core.store.write(CODE, core.snapshot(), new[-1:], 4, 3600)).ok
        seqs = [e[0] for e in stored_log(redis_url)]
        assert seqs == sorted(set(seqs)) == [e.seq for e in new]
        replayed = [e[0] for e in stored_replay(redis_url)]
        assert replayed == sorted(set(replayed))
        assert replayed == [e.seq for e in new if not is_order(e.wire)]
        # A later save still appends what is new.
        await core.serve(act("p0", "add_bot", seat=2))
        assert [e[0] for e in stored_log(redis_url)][-1] == core.feed.seq
        in_step(core, redis_url)
    finally:
        await core.stop()


async def test_a_table_opened_with_a_code_used_before_starts_a_log_of_its_own(
    redis_url: str,
) -> None:
    """A stopped table's log and snapshot stay a few minutes, and its code may be given to a
    new table meanwhile: the new one's events must not be taken for old ones (a log is only
    appended past its last seq), nor mixed into the old log."""
    clock = Clock()
    old = await opened(redis_url, clock)
    for seat in (1, 2, 3):
        await old.serve(act("p0", "add_bot", seat=seat))
    await old.stop()
    assert stored_log(redis_url), "the stopped table's log stays for a while"

    new = TableCore("T-core-2", redis_url, now=clock)
    answer = await new.open(CODE, {"players": 4, "seed": 8}, "p9", "Zed", (600.0, 600.0))
    assert answer.ok, answer
    try:
        assert [e[0] for e in stored_log(redis_url)] == list(range(1, new.feed.seq + 1))
        assert saved(redis_url)["seq"] == new.feed.seq
        in_step(new, redis_url)
    finally:
        await new.stop()
