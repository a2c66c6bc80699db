"""Ratings one person cannot bend alone (issue 47), in the table core and the rating store against
a real redis-server, without Ray: two profiles seen at one address at one table rate nobody,
the same two opponents weigh less each match of a day and not at all past five, a retried match
is answered as it was applied whatever the facts say since; a guest's profile becomes lasting
with its first rated match, and a guest's history line expires with it.

Where a profile was seen is written here as the gateway writes it (gateway/sessions.py: a
sorted set of address tags by when); tests/cluster/test_guests.py plays the same through a
gateway."""

from __future__ import annotations

import json
import time

import redis

from actors import keys
from actors.profile_keys import SEEN_TTL_S
from actors.ratings import RatingStore, match_id
from actors.results import result_from_wire
from cluster.redis_client import async_redis
from engine.ratings import REPEAT_WINDOW_MS, REPEATS_COUNTED, MatchResult, SeatResult
from tests.actors.test_results import play_to_the_end, settled, standing, table, told
from tests.actors.test_table_core import NAME, START, Clock, saved

HOUR_MS = 3600 * 1000
GUEST_TTL_S = 7 * 24 * 3600


def guests(url: str, *ids: str) -> None:
    """Profiles as a new session leaves them: a guest's, expiring with it."""
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        for pid in ids:
            r.hset(keys.profile(pid), mapping={"name": pid.upper(), "created": 1, "lasting": "0"})
            r.expire(keys.profile(pid), GUEST_TTL_S)
    finally:
        r.close()


def seen(url: str, player_id: str, *tags: str) -> None:
    """Seen at these addresses when the tables' clock starts (`START`, the injected clock's)."""
    r = redis.Redis.from_url(url, decode_responses=True)
    try:
        r.zadd(keys.seen(player_id), {t: START for t in tags})
        r.expire(keys.seen(player_id), GUEST_TTL_S)
    finally:
        r.close()


def people(ended_at: int, a: str = "p0", b: str = "p1") -> MatchResult:
    """`a` beats `b`, a bot partner each."""
    seats = tuple(SeatResult(s, s % 2, (a, b, None, None)[s], f"S{s}") for s in range(4))
    return MatchResult(1, 4, (5, 2), seats, "normal", False, ended_at)


async def test_two_profiles_seen_at_one_address_at_one_table_rate_nobody(redis_url: str) -> None:
    guests(redis_url, "p0", "p1")
    seen(redis_url, "p0", "tag-home", "tag-phone")
    seen(redis_url, "p1", "tag-school", "tag-home")
    core = await table(redis_url, Clock())
    try:
        await play_to_the_end(core)
        await settled(core)
        (event,) = told(core)
        assert (event["rated"], event["reason"], event["changes"]) == (False, "same_person", [])
        assert event["weight"] is None
        r = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            assert r.hlen(keys.ratings(4)) == 0
            assert r.hlen(keys.rated(4)) == 0
            assert not r.keys("*:met:*"), "an unrated match counts nothing for the day"
            mid = match_id(NAME, 1)
            record = json.loads(str(r.get(keys.match(mid))))
            assert (record["rated"], record["reason"], record["weight"]) == (
                False,
                "same_person",
                None,
            )
            # Still guests: their history line and win expire with them.
            for p in ("p0", "p1"):
                assert r.hget(keys.profile(p), "lasting") == "0"
                assert r.zrange(keys.history(p), 0, -1) == [mid]
                assert 0 < r.ttl(keys.history(p)) <= GUEST_TTL_S
            assert 0 < r.ttl(keys.wins("p0")) <= GUEST_TTL_S
        finally:
            r.close()
    finally:
        await core.stop()


async def test_the_first_rated_match_makes_a_guest_lasting_with_all_it_holds(
    redis_url: str,
) -> None:
    guests(redis_url, "p0", "p1")
    seen(redis_url, "p0", "tag-a")
    seen(redis_url, "p1", "tag-b")  # two addresses: two people
    core = await table(redis_url, Clock())
    try:
        await play_to_the_end(core)
        await settled(core)
        (event,) = told(core)
        assert (event["rated"], event["weight"]) == (True, 1.0)
        r = redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            for p in ("p0", "p1"):
                assert r.hget(keys.profile(p), "lasting") == "1"
                assert r.ttl(keys.profile(p)) == -1
                assert r.ttl(keys.history(p)) == -1
                # Where it was seen is kept a month after the last, never for good.
                assert GUEST_TTL_S < r.ttl(keys.seen(p)) <= SEEN_TTL_S
            assert r.ttl(keys.wins("p0")) == -1
        finally:
            r.close()
    finally:
        await core.stop()


async def test_the_same_opponents_weigh_less_each_match_of_a_day_then_count_again(
    redis_url: str,
) -> None:
    """Eight matches of p0 against p1 an hour apart from one table's clock: 1, 1/2 … 1/5 of a
    match, then none ("repeated"); a match 24 h after the first of them counts from the
    start again, as the earlier ones leave the window."""
    guests(redis_url, "p0", "p1")
    client = async_redis(redis_url)
    store = RatingStore(client)
    first = int(time.time() * 1000)
    try:
        done = []
        for n in range(REPEATS_COUNTED + 2):
            ended = first + n * HOUR_MS // 10
            done.append(await store.apply(f"t-{n}.1", people(ended), ended))
        assert [d.weight for d in done[:REPEATS_COUNTED]] == [1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5]
        assert [d.reason for d in done] == [None] * REPEATS_COUNTED + ["repeated"] * 2
        assert standing(redis_url, "p0").played == REPEATS_COUNTED
        # The k-th match moved the display about 1/k as far as a whole one would.
        gains = [d.changes["p0"]["after"] - d.changes["p0"]["before"] for d in done[:2]]
        assert gains[1] < gains[0]
        later = first + REPEAT_WINDOW_MS + HOUR_MS
        again = await store.apply("t-late.1", people(later), later)
        assert (again.rated, again.weight) == (True, 1.0)
        # Each pair's count of the day expires a day after its last match.
        (met,) = await client.keys("*:met:*")
        assert 0 < await client.pttl(met) <= REPEAT_WINDOW_MS
    finally:
        await client.aclose()


async def test_an_applied_match_sent_again_is_answered_as_applied_whatever_the_facts_say(
    redis_url: str,
) -> None:
    """The answer of the first apply was lost; meanwhile one of the two was seen at the other's
    address. The retry answers what was applied (rated), not a new judgement."""
    guests(redis_url, "p0", "p1")
    seen(redis_url, "p0", "tag-a")
    seen(redis_url, "p1", "tag-b")
    core = await table(redis_url, Clock())
    await play_to_the_end(core)
    await core.tasks.close()  # dies before it settles
    result = result_from_wire(saved(redis_url)["results"]["owed"][0])
    client = async_redis(redis_url)
    try:
        store = RatingStore(client)
        mid = match_id(NAME, 1)
        applied = await store.apply(mid, result, 0)
        assert applied.rated
        seen(redis_url, "p1", "tag-a")
        assert await store.apply(mid, result, 0) == applied
        assert standing(redis_url, "p0").played == 1
        other = people(result.ended_at + 1)
        assert (await store.apply("t-other.1", other, 0)).reason == "same_person"
    finally:
        await client.aclose()
