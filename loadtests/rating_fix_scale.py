"""What putting the ratings right costs (issue 46, actors/rating_fix.py): a store holding the
matches the release before rated — some against bots alone, the rest of people on two teams —
in its shapes (entries without a rule, records without a level), then one fix of the size, timed.

    python -m loadtests.rating_fix_scale                          # 20,000 matches, 2,000 players
    python -m loadtests.rating_fix_scale --matches 100000 --players 10000
    python -m loadtests.rating_fix_scale --cluster                # a local Redis Cluster

The fill writes what `RatingStore.apply` and `record` of the release before wrote (the ratings
made by this release's OpenSkill, one match after another), a match a minute. The fix then
reads every applied match, replays the size and writes what changed; while it runs, this
release's tables wait to rate a match of that size, so its time is how late their `ratings`
events can be. Prints one JSON line: the fix's report, its wall time, and this process's peak
memory before and after it (the fix holds a line per match and a standing per player).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import time
from typing import Any

from actors import keys
from actors.rating_fix import RatingFix
from actors.ratings import Standing
from cluster.redis_client import AsyncRedis, async_redis
from cluster.redis_ops import Pipeline
from cluster.stack import StoreOnly
from engine.ratings import NEW, MatchResult, Rating, SeatResult, rate
from loadtests.figures import emit

BATCH = 1_000  # matches per pipeline while filling
# A batch of the release before's entries, records and ratings written: single-key commands of
# many slots (a cluster client sends each node its part); not a transaction.
FILL = Pipeline("rating_fix_scale.fill")


def peak_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


async def fill(redis: AsyncRedis, matches: int, players: int, alone: float, seed: int) -> None:
    """`matches` 4-seat matches, a share `alone` of them one person against bots."""
    rng = random.Random(seed)
    ids = [f"p-{i:032x}" for i in range(players)]
    ratings: dict[str, Rating] = {}
    played: dict[str, int] = {}
    won: dict[str, int] = {}
    start = int(time.time() * 1000) - 60_000 * matches
    pipe = FILL.on(redis)
    for n in range(matches):
        a, b = rng.sample(ids, 2)
        people = (a, None if rng.random() < alone else b)
        seats = (
            SeatResult(0, 0, people[0], "A"),
            SeatResult(1, 1, people[1], "B" if people[1] else "Bot 2"),
            SeatResult(2, 0, None, "Bot 3"),
            SeatResult(3, 1, None, "Bot 4"),
        )
        scores = (5, rng.randint(0, 4)) if rng.random() < 0.5 else (rng.randint(0, 4), 5)
        ended = start + 60_000 * n
        result = MatchResult(1, 4, scores, seats, "normal", False, ended)
        rated = result.rated()
        after = rate(result, {p: ratings.get(p, NEW) for p in rated})
        changes = {}
        for p in rated:
            changes[p] = {"before": ratings.get(p, NEW).display, "after": after[p].display}
            ratings[p] = after[p]
            played[p] = played.get(p, 0) + 1
            won[p] = won.get(p, 0) + (1 if result.won(p) else 0)
        mid = f"t-{n:08d}.1"
        pipe.hset(keys.rated(4), mid, json.dumps(changes))
        pipe.zadd(keys.rated_at(4), {mid: ended})
        record = {
            "match": mid,
            "table_id": f"t-{n:08d}",
            "code": "SCALE1",
            "number": 1,
            "players": 4,
            "ended_at": ended,
            "scores": list(scores),
            "winners": list(result.winners),
            "rated": True,
            "seats": [
                {
                    "seat": s.seat,
                    "team": s.team,
                    "name": s.name,
                    "player": s.player_id,
                    **changes.get(s.player_id or "", {"before": None, "after": None}),
                }
                for s in seats
            ],
        }
        pipe.set(keys.match(mid), json.dumps(record), ex=3600)
        if (n + 1) % BATCH == 0:
            await FILL.run(pipe)
            pipe = FILL.on(redis)
    for p, r in ratings.items():
        s = Standing(r, played[p], won[p], 1)
        pipe.hset(keys.ratings(4), p, json.dumps({**json.loads(s.to_json()), "v": 1}))
        pipe.zadd(keys.board(4), {p: r.display})
    await FILL.run(pipe)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    store = StoreOnly(primaries=3 if args.cluster else 0).start()
    redis = async_redis(store.url, 60.0)
    try:
        started = time.monotonic()
        await fill(redis, args.matches, args.players, args.alone, args.seed)
        filled_s = time.monotonic() - started
        before = peak_mib()
        started = time.monotonic()
        report = await RatingFix(redis, "scale").check(4)
        took = time.monotonic() - started
        again = time.monotonic()
        second = await RatingFix(redis, "scale").check(4, again=True)
        return {
            "store": "cluster" if args.cluster else "single",
            "matches": args.matches,
            "players": args.players,
            "alone": args.alone,
            "fill_s": round(filled_s, 1),
            "fix_s": round(took, 2),
            "fix": {k: v for k, v in report.__dict__.items() if k not in ("at", "ran")},
            "again_s": round(time.monotonic() - again, 2),
            "again_written": second.written + second.entries + second.records,
            "peak_mib_before": before,
            "peak_mib_after": peak_mib(),
        }
    finally:
        await redis.aclose()
        store.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loadtests.rating_fix_scale", description=__doc__
    )
    parser.add_argument("--matches", type=int, default=20_000)
    parser.add_argument("--players", type=int, default=2_000)
    parser.add_argument("--alone", type=float, default=0.5, help="share of bot-only matches")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--cluster", action="store_true", help="a local Redis Cluster")
    emit(asyncio.run(run(parser.parse_args(argv))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
