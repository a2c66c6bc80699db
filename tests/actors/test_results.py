"""A finished match's ratings, applied exactly once (issue 36): the table core against real
redis-servers, without Ray. The match ends, its ratings are owed in the snapshot that ends it,
settled after that save, told to the table, and never applied twice: not when the core is
restarted at any point of the settling, not when the script is sent again, not after a Redis
failover to a replica that had the write; and not settled before a replica has it, where the
store has replicas to wait for. Issue 46: a match of people on two teams is rated, and one
against bots alone is told unrated, with its reason, and still leaves its record, its people's
history lines and wins."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from actors import keys
from actors.match_records import MatchRecords
from actors.protocol import Act, Outcome
from actors.ratings import RatingStore, Settled, Standing, match_id
from actors.results import result_from_wire
from actors.store import NO_REPLICA_BACKOFF_S
from actors.table_core import TableCore
from cluster.procs import RedisServer
from cluster.redis_client import RedisSettings, async_redis
from engine import CallQuatro
from engine.ratings import NEW, REPEATS_COUNTED, MatchResult, SeatResult
from engine.settings import NEWCOMER_WINS
from tests.actors.test_table_core import CODE, NAME, Clock, act, saved

PLAYERS = ("p0", "p1")  # the humans: one on each team (seats 0 and 1), a bot partner each
WAIT_MS = 100  # how long a WAIT waits for a replica here


def profiles(url: str, *ids: str) -> None:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        for player_id in ids:
            r.hset(keys.profile(player_id), mapping={"name": player_id.upper(), "created": 1})
    finally:
        r.close()


def standing(url: str, player_id: str, players: int = 4) -> Standing:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        return Standing.read(r.hget(keys.ratings(players), player_id))
    finally:
        r.close()


async def table(store: str | RedisSettings, clock: Clock, guest: int = 1) -> TableCore:
    """p0 hosts, a guest will sit in seat `guest` (1: the other team; 2: p0's partner), bots
    that never act in the other two seats."""
    core = TableCore(NAME, store, now=clock)
    config = {"players": 4, "seed": 7, "bot_policy": "idle"}
    assert (await core.open(CODE, config, "p0", "P0", (600.0, 600.0))).ok
    for seat in (1, 2, 3):
        if seat != guest:
            await ok(core, act("p0", "add_bot", seat=seat))
    return core


async def ok(core: TableCore, request: Act) -> None:
    reply = await core.serve(request)
    assert isinstance(reply, Outcome)
    assert reply.ok, reply


async def play_to_the_end(core: TableCore, guest: str = "p1", seat: int = 1) -> None:
    """Nobody is connected, so every round opens at once (R6); the wrong Quatro! of seat 3's
    bot (team 1) scores for team 0, p0's, five times."""
    await ok(core, act(guest, "take_seat", seat=seat, name=guest.upper()))
    await ok(core, act("p0", "start"))
    t = core.table
    assert t is not None
    while str(t.phase) != "over":
        if str(t.phase) == "pause":
            await ok(core, act("p0", "next_round"))
        # A bot's call, as the engine takes one for a bot's seat: wrong, so team 0 scores.
        await core.change(lambda: core.apply(CallQuatro(seat=3), core.now()), touch=True)


async def settled(core: TableCore) -> None:
    """The core's outbox empties (within 10 s)."""
    for _ in range(500):
        if not core.results.owed:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"still owed: {core.results.owed}")


def told(core: TableCore) -> list[dict[str, Any]]:
    return [dict(e.wire) for e in core.feed.since(0, core.feed.seq) if e.wire["type"] == "ratings"]


def rated_before(url: str, player_id: str, played: int) -> None:
    """The player has `played` rated matches at 4 seats behind them, as a table leaves it."""
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        s = Standing(NEW, played, 0, 1)
        r.hset(keys.ratings(4), player_id, json.dumps({**json.loads(s.to_json()), "v": 1}))
    finally:
        r.close()


async def test_a_finished_match_rates_its_players_once_and_tells_the_table(
    redis_url: str,
) -> None:
    """p0 (nine rated matches behind them) beats p1 (new): both rated, p0 now established and
    listed, p1 provisional and not."""
    profiles(redis_url, *PLAYERS)
    rated_before(redis_url, "p0", 9)
    core = await table(redis_url, Clock())
    try:
        await play_to_the_end(core)
        await settled(core)
        winner, loser = standing(redis_url, "p0"), standing(redis_url, "p1")
        assert (winner.played, winner.won, winner.version) == (10, 1, 2)
        assert (loser.played, loser.won, loser.version) == (1, 0, 1)
        assert winner.rating.mu > NEW.mu > loser.rating.mu
        (event,) = told(core)
        assert (event["match"], event["rated"], event["reason"]) == (1, True, None)
        assert event["changes"] == [
            {"seat": 0, "delta": winner.rating.display - 1000, "provisional": False},
            {"seat": 1, "delta": loser.rating.display - 1000, "provisional": True},
        ]
        assert core.requests.view(0)["ratings"] == event
        assert saved(redis_url)["results"] == {"owed": [], "last": event}
        r = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            mid = match_id(NAME, 1)
            assert r.zrange(keys.history("p0"), 0, -1) == [mid]
            assert r.zrange(keys.history("p1"), 0, -1) == [mid]
            record = json.loads(str(r.get(keys.match(mid))))
            assert (record["rated"], record["reason"], record["bot_level"]) == (
                True,
                None,
                "normal",
            )
            assert record["scores"] == [5, 0]
            assert [s["player"] for s in record["seats"]] == ["p0", "p1", None, None]
            assert [s["played"] for s in record["seats"]] == [10, 1, None, None]
            # Only the established player is listed.
            assert r.zscore(keys.board(4), "p0") == winner.rating.display
            assert r.zscore(keys.board(4), "p1") is None
            assert r.smembers(keys.wins("p0")) == {mid}
            assert r.scard(keys.wins("p1")) == 0
        finally:
            r.close()
    finally:
        await core.stop()


async def test_partners_against_bots_alone_are_told_unrated_and_keep_a_history_line(
    redis_url: str,
) -> None:
    """p0 and p2, partners, against two bots: the match rates nobody, the table is told so and
    why; its record and both people's histories say it, and their win counts toward the
    relaxed start's end."""
    profiles(redis_url, "p0", "p2")
    core = await table(redis_url, Clock(), guest=2)
    try:
        await play_to_the_end(core, "p2", 2)
        await settled(core)
        (event,) = told(core)
        assert {k: event[k] for k in ("match", "rated", "reason", "changes")} == {
            "match": 1,
            "rated": False,
            "reason": "bots",
            "changes": [],
        }
        assert core.requests.view(2)["ratings"] == event
        r = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            assert r.hlen(keys.ratings(4)) == 0
            assert r.hlen(keys.rated(4)) == 0
            mid = match_id(NAME, 1)
            record = json.loads(str(r.get(keys.match(mid))))
            assert (record["rated"], record["reason"]) == (False, "bots")
            assert [s["before"] for s in record["seats"]] == [None] * 4
            for p in ("p0", "p2"):
                assert r.zrange(keys.history(p), 0, -1) == [mid]
                assert r.smembers(keys.wins(p)) == {mid}
        finally:
            r.close()
    finally:
        await core.stop()


async def test_wins_count_once_each_up_to_the_newcomers_three_and_never_at_practice(
    redis_url: str,
) -> None:
    profiles(redis_url, "p0")
    client = async_redis(redis_url)
    store, records = RatingStore(client), MatchRecords(client)
    try:
        seats = tuple(SeatResult(s, s % 2, "p0" if s == 0 else None, f"S{s}") for s in range(4))
        practice = MatchResult(1, 4, (5, 1), seats, "relaxed", True, 1_000)
        settled_practice = await store.apply("t-p.1", practice, 1_000)
        assert settled_practice == Settled({}, "practice")
        await records.record("t-p.1", "t-p", "PRACT1", practice, settled_practice)
        assert await records.wins("p0") == 0
        assert await client.zrange(keys.history("p0"), 0, -1) == ["t-p.1"]
        won = MatchResult(1, 4, (5, 1), seats, "normal", False, 2_000)
        for n in range(5):
            for _ in range(2):  # settled again after a restart: counted once
                await records.record(f"t-{n}.1", f"t-{n}", "WON123", won, Settled({}, "bots"))
            assert await records.wins("p0") == min(n + 1, NEWCOMER_WINS)
        # A deleted profile gets no history line and no win.
        await client.set(keys.profile_gone("p0"), "1")
        await records.record("t-9.1", "t-9", "WON123", won, Settled({}, "bots"))
        assert "t-9.1" not in await client.zrange(keys.history("p0"), 0, -1)
    finally:
        await client.aclose()


async def test_a_core_restarted_anywhere_in_the_settling_applies_the_match_once(
    redis_url: str,
) -> None:
    """The first incarnation dies right after the save that ended the match (its settling
    never ran); the second dies after the script ran but before it dropped the match from its
    outbox; the third finds the match applied and only tells the table."""
    profiles(redis_url, *PLAYERS)
    first = await table(redis_url, Clock())
    await play_to_the_end(first)
    await first.tasks.close()  # dies: nothing more of it runs
    owed = saved(redis_url)["results"]["owed"]
    assert len(owed) == 1, "the save that ended the match holds what it owes"
    assert standing(redis_url, "p0").played == 0

    second = TableCore(NAME, redis_url, now=Clock())  # restored, but never started
    assert second.results.owed == owed
    store = RatingStore(async_redis(redis_url))
    result = result_from_wire(owed[0])
    applied = await store.apply(match_id(NAME, 1), result, 0)  # what its task would have done
    assert standing(redis_url, "p0").played == 1
    await second.tasks.close()  # dies before it told anyone

    third = TableCore(NAME, redis_url, now=Clock())
    try:
        third.start()
        await settled(third)
        assert standing(redis_url, "p0").played == 1, "applied twice"
        (event,) = told(third)
        assert applied.rated
        expected = applied.changes["p0"]["after"] - applied.changes["p0"]["before"]
        assert event["changes"][0] == {"seat": 0, "delta": expected, "provisional": True}
        # Sent again (an answer lost, a gateway's retry): the same changes, nothing applied.
        assert await store.apply(match_id(NAME, 1), result, 0) == applied
        assert standing(redis_url, "p1").played == 1
    finally:
        await third.stop()
        await store.redis.aclose()


async def test_matches_of_the_same_players_ending_together_both_count(redis_url: str) -> None:
    profiles(redis_url, *PLAYERS)
    core = await table(redis_url, Clock())
    await play_to_the_end(core)
    await core.tasks.close()
    result = result_from_wire(saved(redis_url)["results"]["owed"][0])
    store = RatingStore(async_redis(redis_url))
    try:
        ids = [f"t-{i}.1" for i in range(REPEATS_COUNTED + 1)]
        done = await asyncio.gather(*(store.apply(mid, result, 0) for mid in ids))
        s = standing(redis_url, "p0")
        assert (s.played, s.won, s.version) == (5, 5, 5)
        assert standing(redis_url, "p1").won == 0
        # Issue 47: the same two opponents, so each counted match weighs 1/k as the k-th of
        # their day, whichever ended first, and the sixth not at all.
        assert sorted(d.weight for d in done if d.rated) == [1 / k for k in (5, 4, 3, 2, 1)]
        assert [d.reason for d in done if not d.rated] == ["repeated"]
    finally:
        await store.redis.aclose()


async def test_a_match_with_a_deleted_or_missing_profile_rates_nobody(redis_url: str) -> None:
    profiles(redis_url, "p0")  # p1 never had a profile
    core = await table(redis_url, Clock())
    try:
        await play_to_the_end(core)
        await settled(core)
        (event,) = told(core)
        assert (event["rated"], event["reason"], event["changes"]) == (False, "profile", [])
        assert standing(redis_url, "p0").played == 0
        r = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            record = json.loads(str(r.get(keys.match(match_id(NAME, 1)))))
            assert (record["rated"], record["reason"]) == (False, "profile")
            assert r.zcard(keys.board(4)) == 0
            assert not r.exists(keys.history("p1"), keys.wins("p1"))
        finally:
            r.close()
    finally:
        await core.stop()


@pytest.fixture
def replicated() -> Iterator[tuple[RedisServer, RedisServer]]:
    primary, replica = RedisServer().start(), RedisServer().start()
    try:
        r = redis.Redis(port=replica.port, decode_responses=True)
        r.replicaof("127.0.0.1", str(primary.port))
        for _ in range(500):  # in sync within 10 s
            if r.info("replication").get("master_link_status") == "up":
                break
            time.sleep(0.02)
        r.close()
        yield primary, replica
    finally:
        primary.cleanup()
        replica.cleanup()


async def test_a_failover_to_a_replica_that_has_the_match_applies_it_once(
    replicated: tuple[RedisServer, RedisServer],
) -> None:
    """The script reached the primary and its replica; the primary dies before the actor heard
    the answer; the replica is promoted and the actor sends the match again: it finds it."""
    primary, replica = replicated
    profiles(primary.url, *PLAYERS)
    core = await table(primary.url, Clock())
    await play_to_the_end(core)
    await core.tasks.close()
    result = result_from_wire(saved(primary.url)["results"]["owed"][0])
    old = RatingStore(async_redis(primary.url))
    first = await old.apply(match_id(NAME, 1), result, 0)
    assert int(await old.redis.execute_command("WAIT", 1, 5000)) == 1
    await old.redis.aclose()
    primary.stop()
    promote = redis.Redis(port=replica.port)
    promote.replicaof("NO", "ONE")
    promote.close()
    new = RatingStore(async_redis(replica.url))
    try:
        assert await new.apply(match_id(NAME, 1), result, 0) == first
        s = standing(replica.url, "p0")
        assert (s.played, s.version) == (1, 1)
    finally:
        await new.redis.aclose()


def waiting(url: str) -> RedisSettings:
    """A store whose table waits for one replica after a match's ratings update."""
    return RedisSettings(url, wait_replicas=1, wait_ms=WAIT_MS)


async def unconfirmed(core: TableCore, times: int) -> None:
    """The core's ratings update was not confirmed by a replica `times` times (within 10 s)."""
    for _ in range(500):
        if core.results.store().unreplicated >= times:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"unconfirmed {core.results.store().unreplicated} times, not {times}")


def pause(server: RedisServer, sig: signal.Signals) -> None:
    assert server.proc is not None
    os.kill(server.proc.pid, sig)


async def test_a_match_stays_owed_until_a_replica_has_its_ratings(
    replicated: tuple[RedisServer, RedisServer],
) -> None:
    """The replica stalls (SIGSTOP) before the match ends: the update reaches the primary, no
    replica confirms it, and the match stays owed (in the snapshot too), through a restart of
    the core; the replica back, the match is settled, once, and the replica has it."""
    primary, replica = replicated
    profiles(primary.url, *PLAYERS)
    first = await table(waiting(primary.url), Clock())
    pause(replica, signal.SIGSTOP)
    try:
        await play_to_the_end(first)
        await unconfirmed(first, 2)  # applied, then sent again: no replica has it either time
        assert standing(primary.url, "p0").played == 1
        assert told(first) == []
        assert len(saved(primary.url)["results"]["owed"]) == 1, "forgotten before a replica"
        await first.tasks.close()  # dies
        # Its restarted incarnation sends the update on a connection of its own: that one's
        # WAIT too must count the replicas that have the first apply.
        second = TableCore(NAME, waiting(primary.url), now=Clock())
        second.start()
        await unconfirmed(second, 1)
        assert second.results.owed
        assert told(second) == []
    finally:
        pause(replica, signal.SIGCONT)
    try:
        await settled(second)
        (event,) = told(second)
        assert event["match"] == 1
        s = standing(primary.url, "p0")
        assert (s.played, s.version) == (1, 1), "applied twice"
        assert standing(replica.url, "p0") == s
        assert saved(primary.url)["results"] == {"owed": [], "last": event}
    finally:
        await second.stop()


async def test_ratings_no_replica_ever_confirms_are_settled_after_the_scoring_saves_wait(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A store that should have a replica has none (lost for good): the match stays owed and
    its update is sent again with the backoff, until by the table's clock no replica has
    answered for NO_REPLICA_BACKOFF_S (the scoring save's); then it is settled, once, with a
    warning that says why."""
    profiles(redis_url, *PLAYERS)
    clock = Clock()
    core = await table(waiting(redis_url), clock)
    try:
        with caplog.at_level(logging.WARNING, logger="quatro.table"):
            await play_to_the_end(core)
            await unconfirmed(core, 2)
            clock.ms += int(NO_REPLICA_BACKOFF_S * 1000) - 100  # not quite
            await unconfirmed(core, 3)
            assert core.results.owed
            assert told(core) == []
            clock.ms += 100
            await settled(core)
        (event,) = told(core)
        assert event["match"] == 1
        s = standing(redis_url, "p0")
        assert (s.played, s.version) == (1, 1)
        kept = [r.getMessage() for r in caplog.records if "kept owed" in r.getMessage()]
        assert len(kept) >= 3
        assert "no replica confirmed the update (within 100 ms: 0 of 1)" in kept[0]
        assert any("settled on the primary alone" in r.getMessage() for r in caplog.records)
    finally:
        await core.stop()
