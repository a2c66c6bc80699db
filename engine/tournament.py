"""Bots-only matches on the pure engine, in simulated time: no sleeping, a match in milliseconds.

    python -m engine.tournament --players 4 --matches 200 --a smart --b random [--seed S]

Teams alternate between policy a and policy b around the table: team k plays policy a when k is
even, b when odd (4 players: 1 team each; 6: a has teams 0 and 2; 8: a has 0 and 2, b has 1 and
3). The clock jumps straight to the earliest of the bots' next actions and the table's next
deadline. Seat 0 must hold the host before bots can be added (R29), so a placeholder player takes
it and never connects, and a bot plays that seat like any other.

The last line printed is one JSON object: win rates (shared wins count for each winner: a policy
wins a match when one of its teams is among the winners), points per team per match for each
policy, rounds per match, how rounds ended, and the mean length of a round's play in seconds.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.bots import POLICIES, Bot, make_bot
from engine.commands import AddBot, Command, Connect, StartMatch, TakeSeat
from engine.config import TableConfig
from engine.errors import Refusal
from engine.events import Outbound
from engine.phase import Phase
from engine.seating import team_of, teams
from engine.table import Table

ENDINGS = ("quatro_right", "quatro_wrong", "contre_right", "contre_wrong", "void")
MAX_STEPS = 200_000  # a guard: a match that has not ended by then is reported as stuck

# Called for every command a bot sends: (seat, command, refusal code or None, time).
CommandHook = Callable[[int, Command, str | None, int], None]
# Called for every event a bot is fed: (seat, wire dict, time).
EventHook = Callable[[int, dict[str, Any], int], None]
# Called before each command a bot sends is applied: (table, seat, command, time).
CheckHook = Callable[[Table, int, Command, int], None]


@dataclass(slots=True)
class MatchResult:
    policies: tuple[str, ...]  # per team
    winners: tuple[int, ...] = ()
    scores: tuple[int, ...] = ()
    rounds: int = 0
    endings: Counter[str] = field(default_factory=Counter)
    round_ms: list[int] = field(default_factory=list)
    duration_ms: int = 0
    commands: int = 0
    refusals: Counter[str] = field(default_factory=Counter)
    finished: bool = False


def team_policies(players: int, a: str, b: str) -> tuple[str, ...]:
    return tuple(a if k % 2 == 0 else b for k in range(teams(players)))


def play_match(
    players: int,
    policies: Sequence[str],
    seed: int,
    *,
    speed: float = 1.0,
    time_scale: float = 1.0,
    max_rounds: int | None = None,
    host_connected: bool = False,
    on_command: CommandHook | None = None,
    on_event: EventHook | None = None,
    check: CheckHook | None = None,
) -> MatchResult:
    """One bots-only match. `policies[k]` plays team k. Stops after `max_rounds` when given.

    With `host_connected`, seat 0 counts as a connected human (played by its bot): rounds then
    go through a real signing phase and reshuffles need that seat's vote, which bots never give.
    """
    table = Table(TableConfig(players=players, seed=seed, time_scale=time_scale))
    result = MatchResult(policies=tuple(policies))
    table.apply(TakeSeat(seat=0, player_id="tournament-host", name="Host"), 0)
    if host_connected:
        table.apply(Connect(seat=0), 0)
    for s in range(1, players):
        table.apply(AddBot(seat=0, target=s), 0)
    seeder = random.Random(seed)
    bots: list[Bot] = []
    for s in range(players):
        policy = policies[team_of(s, players)]
        bot = make_bot(
            policy,
            s,
            players,
            seed=seeder.getrandbits(48),
            speed=speed,
            timings=table.config.timings,
        )
        bot.sync(table.view(s), 0)
        bots.append(bot)
    opened_at = 0

    def feed(outbounds: list[Outbound]) -> None:
        nonlocal opened_at
        for o in outbounds:
            wire = o.event.to_wire()
            kind = wire["type"]
            if kind == "round" and o.to.scope == "seat" and o.to.index == 0:
                opened_at = o.at
            elif kind == "reveal":
                result.rounds += 1
                result.round_ms.append(o.at - opened_at)
                reason = wire["reason"]
                if reason == "timeout":
                    result.endings["void"] += 1
                else:
                    result.endings[f"{reason}_{'right' if wire['correct'] else 'wrong'}"] += 1
            elif kind == "over":
                result.winners = tuple(wire["winners"])  # type: ignore[arg-type]
                result.finished = True
            for s, bot in enumerate(bots):
                if o.to.includes(s, players):
                    if on_event is not None:
                        on_event(s, wire, o.at)
                    bot.observe(wire, o.at)

    now = 0
    feed(table.apply(StartMatch(seat=0), now))
    order = list(range(players))
    shuffler = random.Random(seed ^ 0x5EED)
    for _ in range(MAX_STEPS):
        if table.phase is Phase.OVER:
            break
        if max_rounds is not None and result.rounds >= max_rounds:
            break
        times = [i.at for bot in bots if (i := bot.decide(now)) is not None]
        deadline = table.next_deadline()
        if deadline is not None:
            times.append(deadline)
        if not times:
            break  # nothing will ever happen again
        now = max(now, min(times))
        feed(table.advance(now))
        shuffler.shuffle(order)  # who acts first within one millisecond is luck, not seat order
        for s in order:
            bot = bots[s]
            intent = bot.decide(now)
            if intent is None or intent.at > now:
                continue
            command = intent.command
            if check is not None:
                check(table, s, command, now)
            bot.sent(command, now)
            result.commands += 1
            try:
                out = table.apply(command, now)
            except Refusal as refusal:
                result.refusals[str(refusal.code)] += 1
                if on_command is not None:
                    on_command(s, command, str(refusal.code), now)
                feed(refusal.events)
                bot.refused(command, refusal.to_wire(), now)
                continue
            if on_command is not None:
                on_command(s, command, None, now)
            feed(out)
    result.scores = table.scores
    result.duration_ms = now
    return result


@dataclass(slots=True)
class Totals:
    players: int
    a: str
    b: str
    results: list[MatchResult] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        matches = len(self.results)
        policies = team_policies(self.players, self.a, self.b)
        wins = Counter[str]()
        points: dict[str, float] = {"a": 0.0, "b": 0.0}
        endings = Counter[str]()
        round_ms: list[int] = []
        rounds = 0
        for r in self.results:
            for side, index in (("a", 0), ("b", 1)):
                mine = [k for k in range(len(policies)) if k % 2 == index]
                if any(k in r.winners for k in mine):
                    wins[side] += 1
                points[side] += sum(r.scores[k] for k in mine) / max(1, len(mine))
            endings.update(r.endings)
            round_ms += r.round_ms
            rounds += r.rounds
        per = max(1, matches)
        return {
            "players": self.players,
            "matches": matches,
            "win_rate": {"a": wins["a"] / per, "b": wins["b"] / per},
            "points_per_match": {"a": points["a"] / per, "b": points["b"] / per},
            "rounds_per_match": rounds / per,
            "round_endings": {name: endings[name] for name in ENDINGS},
            "mean_round_seconds": sum(round_ms) / max(1, len(round_ms)) / 1000,
        }


def run(players: int, matches: int, a: str, b: str, seed: int, speed: float) -> Totals:
    totals = Totals(players=players, a=a, b=b)
    policies = team_policies(players, a, b)
    for i in range(matches):
        totals.results.append(play_match(players, policies, seed * 1_000_003 + i, speed=speed))
    return totals


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.tournament", description=__doc__)
    parser.add_argument("--players", type=int, choices=(4, 6, 8), default=4)
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--a", choices=sorted(POLICIES), default="smart")
    parser.add_argument("--b", choices=sorted(POLICIES), default="random")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--speed", type=float, default=1.0, help="bots' pace (1.0 = human)")
    args = parser.parse_args(argv)
    if args.matches < 1:
        parser.error("--matches must be at least 1")
    totals = run(args.players, args.matches, args.a, args.b, args.seed, args.speed)
    policies = team_policies(args.players, args.a, args.b)
    split = ", ".join(
        f"team {k} (seats {k} and {k + args.players // 2}) = {'a' if k % 2 == 0 else 'b'}:{p}"
        for k, p in enumerate(policies)
    )
    print(f"teams: {split}")
    print("points_per_match is per team of each policy; win_rate counts shared wins for each.")
    results = totals.results
    stuck = sum(1 for r in results if not r.finished)
    minutes = sum(r.duration_ms for r in results) / max(1, len(results)) / 60_000
    refusals = Counter[str]()
    commands = 0
    for r in results:
        refusals.update(r.refusals)
        commands += r.commands
    print(f"mean match length: {minutes:.2f} simulated minutes; unfinished matches: {stuck}")
    print(f"commands sent: {commands}; refused: {dict(sorted(refusals.items()))}")
    print(json.dumps(totals.summary()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
