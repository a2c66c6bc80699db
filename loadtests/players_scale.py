"""Profiles and ratings at scale (issue 36): fill a Redis with 1,000,000 profiles and their
ratings, then time what players do against it, through the gateway's and the actor's own code.

    python -m loadtests.players_scale                      # 1,000,000 players, embedded Redis
    python -m loadtests.players_scale --players 100000 --samples 500
    python -m loadtests.players_scale --redis-url redis://127.0.0.1:6379/0   # a Redis of yours

Without `--redis-url` it starts its own redis-server exactly as `make run` does (the embedded
one, append-only file on, through cluster/stack.py's StoreOnly), on a free loopback port, and
stops it at the end. Every player gets a profile; every player is rated at 4 seats, one in three
at 6 and one in ten at 8 (ratings drawn around a newcomer's), half of them showing their
ratings. Then, one call at a time (a player's wait, not throughput):

- a leaderboard page (`gateway.leaderboards.Leaderboards.page`: 20 rows, names, standings) at
  a random page of the 4-seat board (1,000,000 rows: 50,000 pages);
- a player's rank (`Leaderboards.row`: GET /api/leaderboards/{n}/me);
- a rating update (`actors.ratings.RatingStore.apply`: a 4-seat match of two random rated
  players and two bots — the profile checks, the read, OpenSkill, the one script).

Prints p50, p99 and max of each, the fill's time and Redis's memory. Bounded: it stops by
itself, and talks to loopback (or to the Redis given) only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from actors import keys
from actors.ratings import RatingStore, Standing
from cluster.redis_client import AsyncRedis, async_redis
from cluster.redis_ops import Pipeline
from cluster.stack import StoreOnly
from engine.ratings import MatchResult, Rating, SeatResult, provisional
from gateway.leaderboards import PAGE, Leaderboards

BATCH = 5_000  # commands per pipeline while filling
# A batch of players' profiles and ratings written: single-key commands of many slots (a
# cluster client sends each node its part), in no order that matters; not a transaction.
FILL = Pipeline("players_scale.fill")


def player_id(i: int) -> str:
    return f"p-{i:032x}"


async def fill(redis: AsyncRedis, players: int, seed: int) -> float:
    rng = random.Random(seed)
    started = time.perf_counter()
    now = int(time.time() * 1000)
    for first in range(0, players, BATCH):
        pipe = FILL.on(redis)
        for i in range(first, min(players, first + BATCH)):
            pid = player_id(i)
            public = i % 2 == 0
            pipe.hset(
                keys.profile(pid),
                mapping={
                    "name": f"Player {i}",
                    "created": now,
                    "ratings_public": "1" if public else "0",
                },
            )
            for size, share in ((4, 1), (6, 3), (8, 10)):
                if i % share:
                    continue
                r = Rating(rng.gauss(25, 4), rng.uniform(1.5, 8.3))
                played = rng.randint(1, 200)
                s = Standing(r, played, rng.randint(0, played), 1)
                record = json.dumps({**json.loads(s.to_json()), "v": 1})
                pipe.hset(keys.ratings(size), pid, record)
                if provisional(played):
                    continue  # rated, not listed yet (engine.ratings.ESTABLISHED_AFTER)
                pipe.zadd(keys.board(size), {pid: r.display})
                if public:
                    pipe.hset(keys.board_names(size), pid, f"Player {i}")
        await FILL.run(pipe)
        if first and first % 100_000 == 0:
            print(f"  {first:,} players…", flush=True)
    return time.perf_counter() - started


async def timed(samples: int, call: Callable[[int], Awaitable[Any]]) -> list[float]:
    out = []
    for n in range(samples):
        t = time.perf_counter()
        await call(n)
        out.append((time.perf_counter() - t) * 1000)
    return out


def summary(name: str, ms: list[float]) -> str:
    ms = sorted(ms)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"| {name} | {len(ms)} | {statistics.median(ms):.2f} | {p99:.2f} | {ms[-1]:.2f} |"


async def run(args: argparse.Namespace) -> None:
    server = None
    url = args.redis_url
    if not url:
        server = StoreOnly().start()  # one redis-server, as `make run` starts it
        url = server.url
        print(f"embedded redis-server on {url}", flush=True)
    redis = async_redis(url, 30.0)
    try:
        if args.fill:
            await redis.flushdb()
            print(f"filling {args.players:,} profiles and their ratings…", flush=True)
            took = await fill(redis, args.players, args.seed)
            print(f"filled in {took:.1f} s", flush=True)
        boards, store = Leaderboards(redis), RatingStore(redis)
        total = int(await redis.zcard(keys.board(4)))
        rng = random.Random(args.seed + 1)
        pages = max(1, total // PAGE)

        async def page(_: int) -> None:
            got = await boards.page(4, rng.randint(1, pages), None)
            assert len(got["rows"]) == PAGE

        async def rank(_: int) -> None:
            assert await boards.row(4, player_id(rng.randrange(args.players))) is not None

        async def update(n: int) -> None:
            a, b = player_id(rng.randrange(args.players)), player_id(rng.randrange(args.players))
            if a == b:
                b = player_id((int(a[2:], 16) + 1) % args.players)
            seats = (
                SeatResult(0, 0, a, "A"),
                SeatResult(1, 1, b, "B"),
                SeatResult(2, 0, None, "Bot 3"),
                SeatResult(3, 1, None, "Bot 4"),
            )
            result = MatchResult(1, 4, (5, rng.randint(0, 5)), seats, "normal", False, n)
            assert (await store.apply(f"bench-{args.seed}-{n}.1", result, n)).rated

        print(f"timing {args.samples} of each, one at a time…", flush=True)
        rows = [
            summary("leaderboard page (20 rows, random page)", await timed(args.samples, page)),
            summary("a player's rank (own row)", await timed(args.samples, rank)),
            summary("rating update (4-seat match, 2 rated)", await timed(args.samples, update)),
        ]
        memory = await redis.info("memory")
        print(f"\n{total:,} players on the 4-seat board; Redis uses {memory['used_memory_human']}")
        print("| operation | samples | p50 ms | p99 ms | max ms |")
        print("| --- | --- | --- | --- | --- |")
        for row in rows:
            print(row)
    finally:
        await redis.aclose()
        if server is not None:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--redis-url", default="", help="a Redis to use (default: start one)")
    parser.add_argument(
        "--no-fill", dest="fill", action="store_false", help="time a Redis filled before"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
