"""Issue 46's putting right of ratings, on a real redis-server filled by the release before's own
code (tests/release_before.py: its RatingStore settles the matches, as its table actors do).
The oracle is this release itself: the same matches settled from the start by its RatingStore,
on a Redis of their own. After the fix, the ratings, the leaderboard, the applied entries and
the records are as this release would have made them: the bot-only changes are gone, the
people's matches count, a board lists only established players; a second run changes nothing;
runs at once leave one to do it; an apply of the release before after the fix (its workers still
rolling) is found and put right; a player whose history is not all known gets the bots' matches
taken back on the display. The whole thing against a real Table actor of b29edd8 is
tests/store/test_rating_upgrade.py."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from actors import keys
from actors.match_records import MatchRecords
from actors.rating_fix import LEASE_MS, RatingFix
from actors.rating_fix_scripts import LEASE
from actors.ratings import RULE, RatingStore, Settled, Standing
from cluster.procs import RedisServer
from cluster.redis_client import async_redis
from engine.ratings import ESTABLISHED_AFTER, MatchResult, SeatResult
from tests.release_before import Match, older_matches, tree, wire

A, B, C, D, E, F, G = ("p-a", "p-b", "p-c", "p-d", "p-e", "p-f", "p-g")
RIVALS = tuple(f"p-e{n}" for n in range(ESTABLISHED_AFTER))  # Dee's, one match each
PEOPLE = (A, B, C, D, E, F, G, *RIVALS)
BOT = None  # a seat of a bot

MATCHES = [
    Match((A, BOT, BOT, BOT), (0, 5)),  # Ana alone (her partner a bot) against bots: three times
    Match((A, BOT, BOT, BOT), (0, 5)),
    Match((A, BOT, BOT, BOT), (5, 2)),
    Match((A, B, BOT, BOT), (5, 3)),  # Ana against Bea, a bot partner each: people on two teams
    Match((BOT, B, BOT, C), (2, 5)),  # Bea and Cy, partners, against bots alone
    Match((C, B, BOT, BOT), (5, 4)),
    # Dee against ten rivals (the same two opponents weigh less each match of a day: issue 47).
    *[Match((D, e, BOT, BOT), (5, 3) if n % 2 else (1, 5)) for n, e in enumerate(RIVALS)],
    Match((D, BOT, BOT, BOT), (0, 5)),  # Dee, established, once against bots
    Match((A, BOT, BOT, BOT, BOT, BOT), (0, 5, 3)),  # at 6 seats: Ana against bots
    Match((B, C, BOT, BOT, BOT, BOT), (5, 3, 0)),  # Bea against Cy, bots in the four other seats
]


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tree(tmp_path_factory.mktemp("release-before"))


@pytest.fixture
def oracle_url() -> Iterator[str]:
    server = RedisServer().start()
    try:
        yield server.url
    finally:
        server.cleanup()


def profiles(url: str, *ids: str) -> None:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        for pid in ids:
            r.hset(keys.profile(pid), mapping={"name": pid.upper(), "created": 1})
    finally:
        r.close()


def result(m: dict[str, Any]) -> MatchResult:
    seats = tuple(SeatResult(*s) for s in m["seats"])
    return MatchResult(1, len(seats), tuple(m["scores"]), seats, "normal", False, m["ended_at"])


async def as_this_release(url: str, matches: list[dict[str, Any]]) -> None:
    """The matches settled by this release's code from the start: the oracle."""
    profiles(url, *PEOPLE)
    client = async_redis(url)
    try:
        store, records = RatingStore(client), MatchRecords(client)
        for m in matches:
            settled = await store.apply(str(m["mid"]), result(m), int(m["ended_at"]))
            await records.record(str(m["mid"]), str(m["table_id"]), "NEWREL", result(m), settled)
    finally:
        await client.aclose()


def ratings(url: str, players: int) -> dict[str, tuple[float, float, int, int]]:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        out: dict[str, tuple[float, float, int, int]] = {}
        for pid, raw in r.hgetall(keys.ratings(players)).items():
            s = Standing.read(raw)
            out[str(pid)] = (s.rating.mu, s.rating.sigma, s.played, s.won)
        return out
    finally:
        r.close()


def board(url: str, players: int) -> list[tuple[str, float]]:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        found: list[Any] = r.zrevrange(keys.board(players), 0, -1, withscores=True)
        return [(str(p), float(s)) for p, s in found]
    finally:
        r.close()


def record(url: str, mid: str) -> dict[str, Any]:
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        return dict(json.loads(str(r.get(keys.match(mid)))))
    finally:
        r.close()


def everything(url: str, keep: Callable[[str], bool] = lambda key: True) -> dict[str, Any]:
    """Every key of the store (that `keep` keeps) and its value, to tell whether anything
    changed."""
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        out: dict[str, Any] = {}
        for key in r.scan_iter(count=1000):
            if not keep(key):
                continue
            kind = r.type(key)
            if kind == "hash":
                out[key] = r.hgetall(key)
            elif kind == "zset":
                out[key] = r.zrange(key, 0, -1, withscores=True)
            elif kind == "set":
                out[key] = sorted(r.smembers(key))
            elif kind == "list":
                out[key] = r.lrange(key, 0, -1)
            else:
                out[key] = r.get(key)
        return out
    finally:
        r.close()


def assert_as_this_release(url: str, oracle: str, players: int) -> None:
    mine, theirs = ratings(url, players), ratings(oracle, players)
    assert sorted(mine) == sorted(theirs)
    for pid, (mu, sigma, played, won) in theirs.items():
        assert mine[pid][2:] == (played, won), pid
        assert mine[pid][0] == pytest.approx(mu, abs=1e-9), pid
        assert mine[pid][1] == pytest.approx(sigma, abs=1e-9), pid
    assert board(url, players) == board(oracle, players)


async def fix_all(url: str, holder: str = "gw-test", again: bool = False) -> list[bool]:
    client = async_redis(url)
    try:
        fix = RatingFix(client, holder)
        return [(await fix.check(n, again)).ran for n in (4, 6, 8)]
    finally:
        await client.aclose()


async def test_the_fix_makes_the_ratings_this_release_would_have_made_and_runs_once(
    redis_url: str, oracle_url: str, older: Path
) -> None:
    # Ended a minute apart up to now, as tables' clocks would have them.
    first = int(time.time() * 1000) - 60_000 * (len(MATCHES) + 2)
    matches = wire(MATCHES, first)
    profiles(redis_url, *PEOPLE)
    older_matches(older, redis_url, matches)
    await as_this_release(oracle_url, matches)
    # What the release before left: Ana rated by all four of her 4-seat matches, and listed.
    assert ratings(redis_url, 4)[A][2] == 4
    assert A in dict(board(redis_url, 4))
    assert ratings(oracle_url, 4)[A][2] == 1

    assert await fix_all(redis_url) == [True, True, True]
    for n in (4, 6):
        assert_as_this_release(redis_url, oracle_url, n)
    assert [p for p, _ in board(redis_url, 4)] == [D], "only the established"
    # Each applied match says how it counts now; each record too.
    for n, m in enumerate(matches):
        mid, want = str(m["mid"]), record(oracle_url, str(m["mid"]))
        got = record(redis_url, mid)
        assert (got["rated"], got["reason"]) == (want["rated"], want["reason"]), n
        assert [s["after"] for s in got["seats"]] == [s["after"] for s in want["seats"]], n
        assert [s["played"] for s in got["seats"]] == [s["played"] for s in want["seats"]], n
    assert record(redis_url, "t-0000.1")["reason"] == "bots"
    assert record(redis_url, "t-0004.1")["reason"] == "bots", "two partners against bots"
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        entries = [Settled.read(e) for e in r.hvals(keys.rated(4))]
        assert {e.rule for e in entries} == {RULE}
        assert r.hget(keys.ratings(6), A) is None, "rated at 6 seats by bots alone: not rated"
        fixed = json.loads(str(r.hget(keys.rating_fix(4), "done")))
        assert (fixed["matches"], fixed["unrated"], fixed["kept"]) == (17, 5, 0)
        assert r.hget(keys.rating_fix(4), "lease") is None
    finally:
        r.close()

    # A second run, even forced, changes nothing; a check finds nothing pending.
    before = everything(redis_url)
    assert await fix_all(redis_url, again=True) == [True, True, True]
    after = everything(redis_url)
    done = [k for k in before if k.endswith(":fix")]
    assert {k: v for k, v in after.items() if k not in done} == {
        k: v for k, v in before.items() if k not in done
    }
    assert await fix_all(redis_url) == [False, False, False]

    # A table actor of the release before (its worker not replaced yet) applies one more match
    # of Ana's against bots: the next check finds it and puts it right.
    late = wire(
        [*MATCHES, Match((A, BOT, BOT, BOT), (0, 5)), Match((A, B, BOT, BOT), (3, 5))], first
    )
    older_matches(older, redis_url, late[len(MATCHES) :])
    await as_this_release(oracle_url, late[len(MATCHES) :])
    assert ratings(redis_url, 4)[A][2] == 3
    assert await fix_all(redis_url) == [True, False, False]
    assert_as_this_release(redis_url, oracle_url, 4)
    assert ratings(redis_url, 4)[A][2] == 2


async def test_fixes_started_at_once_leave_one_to_do_it(
    redis_url: str, oracle_url: str, older: Path
) -> None:
    """Gateways started together: one holds the lease and puts the size right, the others
    leave it; this release's own applies wait while it runs."""
    matches = wire(MATCHES[:6])
    profiles(redis_url, *PEOPLE)
    older_matches(older, redis_url, matches)
    await as_this_release(oracle_url, matches)
    clients = [async_redis(redis_url) for _ in range(4)]
    try:
        runs = await asyncio.gather(
            *(RatingFix(c, f"gw-{i}").check(4) for i, c in enumerate(clients))
        )
        assert sorted(r.ran for r in runs) == [False, False, False, True]
        assert_as_this_release(redis_url, oracle_url, 4)

        # Another's lease and freeze, live: a fix leaves the size, this release's apply waits.
        assert await LEASE.run(clients[0], [keys.rating_fix(4)], ["gw-other", LEASE_MS, "1"])
        assert not (await RatingFix(clients[1], "gw-1").check(4, again=True)).ran
        people = tuple(SeatResult(s, s % 2, (A, B, BOT, BOT)[s], "x") for s in range(4))
        match = MatchResult(1, 4, (5, 1), people, "normal", False, 9)
        with pytest.raises(RuntimeError, match="being put right"):
            await RatingStore(clients[2]).apply("t-late.1", match, 9)
        # Frozen no more (the records' part of a fix): applies run again.
        assert await LEASE.run(clients[0], [keys.rating_fix(4)], ["gw-other", LEASE_MS, "0"])
        assert (await RatingStore(clients[2]).apply("t-late.1", match, 9)).rated
    finally:
        for c in clients:
            await c.aclose()


async def test_a_history_not_all_known_gets_the_bots_matches_taken_back_on_the_display(
    redis_url: str, older: Path
) -> None:
    """Fay's match against Gil was applied more than 30 days ago (forgotten by `rated`, as the
    size's trim forgets it), her match against bots since: her rating cannot be made again, so
    the bots' match is taken back — her displayed rating is what it was before it, her count
    of matches one fewer. Gil, whose only match is forgotten, keeps his rating, and leaves the
    leaderboard like every provisional player."""
    matches = wire([Match((F, G, BOT, BOT), (5, 3)), Match((F, BOT, BOT, BOT), (0, 5))])
    profiles(redis_url, F, G)
    older_matches(older, redis_url, matches)
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        r.hdel(keys.rated(4), "t-0000.1")
        r.zrem(keys.rated_at(4), "t-0000.1")
        gil = Standing.read(r.hget(keys.ratings(4), G))
        assert r.zscore(keys.board(4), G) is not None, "the release before listed everyone"
        bots = record(redis_url, "t-0001.1")["seats"][0]
        assert await fix_all(redis_url) == [True, True, True]
        fay = Standing.read(r.hget(keys.ratings(4), F))
        assert fay.rating.display == bots["before"] != bots["after"]
        assert (fay.played, fay.won) == (1, 1)
        assert Standing.read(r.hget(keys.ratings(4), G)).rating == gil.rating
        assert r.zscore(keys.board(4), G) is None, "provisional: off the board"
        assert json.loads(str(r.hget(keys.rating_fix(4), "done")))["kept"] == 2
        assert record(redis_url, "t-0001.1")["reason"] == "bots"
    finally:
        r.close()


async def test_the_same_opponents_matches_of_a_day_count_as_this_release_counts_them(
    redis_url: str, oracle_url: str, older: Path
) -> None:
    """Issue 47 in the fix: Fay and Gil played each other seven times within an hour under the
    release before, all rated in full. Put right, the first five count at 1, 1/2 … 1/5 of a
    match and the last two not at all (`"repeated"`), as this release would have rated them;
    the counts of the day are made from the records, nothing else."""
    first = int(time.time() * 1000) - 60_000 * 9
    matches = wire([Match((F, G, BOT, BOT), (5, 3) if n % 3 else (2, 5)) for n in range(7)], first)
    profiles(redis_url, F, G)
    older_matches(older, redis_url, matches)
    await as_this_release(oracle_url, matches)
    assert ratings(redis_url, 4)[F][2] == 7
    assert await fix_all(redis_url) == [True, True, True]
    assert_as_this_release(redis_url, oracle_url, 4)
    assert ratings(redis_url, 4)[F][2] == 5
    reasons = [record(redis_url, str(m["mid"]))["reason"] for m in matches]
    assert reasons == [None] * 5 + ["repeated"] * 2
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        weights = [Settled.read(str(r.hget(keys.rated(4), str(m["mid"])))).weight for m in matches]
    finally:
        r.close()
    assert weights == pytest.approx([1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1.0, 1.0])
