"""How fast a new player's rating settles, match by match: the question behind
`engine.ratings.ESTABLISHED_AFTER` (how many rated matches before a rating is shown without its
"?" and listed on a leaderboard).

    python -m lab.rating_settle                   # 2,000 careers of 20 matches
    python -m lab.rating_settle --careers 5000 --matches 30 --players 6

Each career is one new player's first matches at a table size against a new player of another
team, bots of the normal level in the other seats (the smallest match that counts), each match a
coin toss: a player of exactly average skill, whose true rating is where they start. For each
match number it prints the mean σ after it, the mean absolute change of the displayed rating
that match made, and that change as a share of the first match's. Pure: the engine's own
`rate`, a seeded RNG, no I/O but the printed lines.
"""

from __future__ import annotations

import argparse
import random
import statistics

from engine.ratings import NEW, MatchResult, Rating, SeatResult, rate
from loadtests.figures import emit


def career(rng: random.Random, matches: int, players: int) -> list[tuple[float, int]]:
    """(σ after, |display change|) for each of one new player's first `matches`."""
    me, other = NEW, NEW
    seats = tuple(
        SeatResult(seat, seat % (players // 2), {0: "me", 1: "other"}.get(seat), f"S{seat}")
        for seat in range(players)
    )
    out = []
    for n in range(1, matches + 1):
        won = rng.random() < 0.5
        scores = [3] * (players // 2)
        scores[0 if won else 1] = 5
        result = MatchResult(n, players, tuple(scores), seats, "normal", False, 0)
        after = rate(result, {"me": me, "other": Rating(other.mu, other.sigma)})
        out.append((after["me"].sigma, abs(after["me"].display - me.display)))
        me, other = after["me"], after["other"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.rating_settle", description=__doc__)
    parser.add_argument("--careers", type=int, default=2_000)
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--players", type=int, default=4, choices=(4, 6, 8))
    parser.add_argument("--seed", type=int, default=46)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    runs = [career(rng, args.matches, args.players) for _ in range(args.careers)]
    first = statistics.fmean(run[0][1] for run in runs)
    for n in range(args.matches):
        swing = statistics.fmean(run[n][1] for run in runs)
        emit(
            {
                "players": args.players,
                "match": n + 1,
                "sigma": round(statistics.fmean(run[n][0] for run in runs), 2),
                "mean_abs_change": round(swing, 1),
                "share_of_first": round(swing / first, 2),
            }
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
