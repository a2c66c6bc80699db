"""Bots-only matches on the pure engine, in simulated time: no sleeping, a match in milliseconds.

    python -m engine.tournament --players 4 --matches 200 --a smart --b random [--level L]
    python -m engine.tournament --levels [--matches 200] [--seed S]

With `--levels`, each bot level (engine.bots.levels) plays a practice table instead: a newcomer
(engine.bots.newcomer, a stand-in for a person new to the game) in seat 0, connected like a
human, with a smart partner bot, against smart bots, every bot at that level, over the same
seeds. One line per level, then one JSON object, `{"levels": {"relaxed": {...}, "normal":
{...}, "sharp": {...}}, "players", "matches", "seed"}`; per level:

    newcomer_wins               the share of matches the newcomer's team won
    newcomer_points_per_match, bots_points_per_match
    round_s_p50, round_s_mean   a round's play, from its deal to its call or timeout (R22)
    match_minutes               simulated, pauses and signing included
    reshuffles_per_round        reshuffle votes the bots asked for (R19), per round
    still_s_p99, still_s_max    each round's longest stretch with no swap: its 99th percentile
                                over the rounds, and the longest of all
    call_reaction_s_p10, call_reaction_s_p50   the bots' calls, from the latest public event
                                each can be reacting to (engine.round_watch)
    quatro_reaction_s_p10, contre_reaction_s_p10   the same, by kind of call
    contre_share                rounds ended by a Contre!
    newcomer_carres_contred     of the rounds the newcomer ended holding a carré, the share an
                                opponent's Contre! ended before its partner's Quatro!
    void_share                  rounds nobody called in (R22)

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.bots import POLICIES, Bot, make_bot
from engine.commands import AddBot, Command, Connect, StartMatch, TakeSeat
from engine.config import TableConfig
from engine.errors import Refusal
from engine.events import Outbound
from engine.phase import Phase
from engine.round_watch import RoundWatch, percentile
from engine.seating import team_of, teams
from engine.settings import BOT_LEVELS, DEFAULT_BOT_LEVEL
from engine.table import Table

ENDINGS = ("quatro_right", "quatro_wrong", "contre_right", "contre_wrong", "void")
MAX_STEPS = 200_000  # a guard: a match that has not ended by then is reported as stuck

# Called for every command a bot sends: (seat, command, refusal code or None, time).
CommandHook = Callable[[int, Command, str | None, int], None]
# Called for every event a bot is fed: (seat, wire dict, time).
EventHook = Callable[[int, dict[str, Any], int], None]
# Called before each command a bot sends is applied: (table, seat, command, time).
CheckHook = Callable[[Table, int, Command, int], None]
# Called once for every event the table sends, whatever its audience: (outbound, wire dict).
Listener = Callable[[Outbound, dict[str, Any]], None]


@dataclass(slots=True)
class MatchResult:
    policies: tuple[str, ...]  # per team
    winners: tuple[int, ...] = ()
    scores: tuple[int, ...] = ()
    rounds: int = 0
    endings: Counter[str] = field(default_factory=Counter)
    calls_by_policy: Counter[str] = field(default_factory=Counter)  # "smart:contre_wrong", …
    round_ms: list[int] = field(default_factory=list)
    duration_ms: int = 0
    commands: int = 0
    refusals: Counter[str] = field(default_factory=Counter)
    finished: bool = False


def team_policies(players: int, a: str, b: str) -> tuple[str, ...]:
    return tuple(a if k % 2 == 0 else b for k in range(teams(players)))


class Runner:
    """Drives one Table and the bots of some of its seats on a simulated clock.

    Each bot is fed exactly the events whose audience includes its seat (R30). The clock jumps
    to the earliest of the bots' next actions and the table's next deadline; within one
    millisecond the bots act in a shuffled order, each seeing what the previous ones did.
    Other seats act only through `act` (tests play them by hand).
    """

    def __init__(
        self,
        table: Table,
        bots: Mapping[int, Bot],
        *,
        seed: int = 0,
        now: int = 0,
        on_command: CommandHook | None = None,
        on_event: EventHook | None = None,
        check: CheckHook | None = None,
    ) -> None:
        self.table = table
        self.bots = dict(bots)
        self.now = now
        self.on_command = on_command
        self.on_event = on_event
        self.check = check
        self.listeners: list[Listener] = []
        self._shuffler = random.Random(seed ^ 0x5EED)
        for seat, bot in self.bots.items():
            bot.sync(table.view(seat), self.now)

    def feed(self, outbounds: list[Outbound]) -> None:
        players = self.table.players
        for o in outbounds:
            wire = o.event.to_wire()
            for listener in self.listeners:
                listener(o, wire)
            for seat, bot in self.bots.items():
                if o.to.includes(seat, players):
                    if self.on_event is not None:
                        self.on_event(seat, wire, o.at)
                    bot.observe(wire, o.at)

    def act(self, seat: int, command: Command, at: int | None = None) -> list[Outbound]:
        """Send a command for a seat no bot plays (after letting the bots play up to `at`)."""
        if at is not None:
            self.run(until=at)
        out = self.table.apply(command, self.now)
        self.feed(out)
        return out

    def next_time(self) -> int | None:
        times = [i.at for bot in self.bots.values() if (i := bot.decide(self.now)) is not None]
        deadline = self.table.next_deadline()
        if deadline is not None:
            times.append(deadline)
        return min(times) if times else None

    def step(self, until: int | None = None) -> bool:
        """Jump to the next moment something happens (not past `until`) and play it out.
        False when nothing is due by then."""
        t = self.next_time()
        if t is None or (until is not None and t > until):
            if until is not None and until > self.now:
                self.now = until
                self.feed(self.table.advance(until))
            return False
        self.now = max(self.now, t)
        self.feed(self.table.advance(self.now))
        order = sorted(self.bots)
        self._shuffler.shuffle(order)  # who acts first within one millisecond is luck
        for seat in order:
            bot = self.bots[seat]
            intent = bot.decide(self.now)
            if intent is None or intent.at > self.now:
                continue
            self.send(seat, intent.command)
        return True

    def send(self, seat: int, command: Command) -> None:
        bot = self.bots[seat]
        now = self.now
        if self.check is not None:
            self.check(self.table, seat, command, now)
        bot.sent(command, now)
        try:
            out = self.table.apply(command, now)
        except Refusal as refusal:
            if self.on_command is not None:
                self.on_command(seat, command, str(refusal.code), now)
            self.feed(refusal.events)
            bot.refused(command, refusal.to_wire(), now)
            return
        if self.on_command is not None:
            self.on_command(seat, command, None, now)
        self.feed(out)

    def run(self, until: int | None = None, max_steps: int = MAX_STEPS) -> None:
        """Play until `until` (or until nothing more can happen, or the match is over)."""
        for _ in range(max_steps):
            if self.table.phase is Phase.OVER and until is None:
                return
            if not self.step(until):
                return


def play_match(
    players: int,
    policies: Sequence[str],
    seed: int,
    *,
    speed: float = 1.0,
    time_scale: float = 1.0,
    max_rounds: int | None = None,
    host_connected: bool = False,
    bot_level: str = "normal",
    seat_policies: Mapping[int, str] | None = None,
    on_command: CommandHook | None = None,
    on_event: EventHook | None = None,
    check: CheckHook | None = None,
    listeners: Sequence[Listener] = (),
) -> MatchResult:
    """One bots-only match. `policies[k]` plays team k, except the seats `seat_policies` names;
    every bot plays at `bot_level`. Stops after `max_rounds` when given.

    With `host_connected`, seat 0 counts as a connected human (played by its bot): rounds then
    go through a real signing phase and reshuffles need that seat's vote, which bots never give.
    """
    chosen = dict(seat_policies or {})
    table = Table(TableConfig(players=players, seed=seed, time_scale=time_scale))
    result = MatchResult(policies=tuple(policies))
    table.apply(TakeSeat(seat=0, player_id="tournament-host", name="Host"), 0)
    if host_connected:
        table.apply(Connect(seat=0), 0)
    for s in range(1, players):
        table.apply(AddBot(seat=0, target=s), 0)
    seeder = random.Random(seed)
    bots = {
        s: make_bot(
            chosen.get(s, policies[team_of(s, players)]),
            s,
            players,
            seed=seeder.getrandbits(48),
            speed=speed,
            timings=table.config.timings,
            bot_level=bot_level,
        )
        for s in range(players)
    }

    def count(seat: int, command: Command, code: str | None, at: int) -> None:
        result.commands += 1
        if code is not None:
            result.refusals[code] += 1
        if on_command is not None:
            on_command(seat, command, code, at)

    runner = Runner(table, bots, seed=seed, on_command=count, on_event=on_event, check=check)
    opened_at = 0

    def tally(o: Outbound, wire: dict[str, Any]) -> None:
        nonlocal opened_at
        kind = wire["type"]
        if kind == "round" and o.to.scope == "seat" and o.to.index == 0:
            opened_at = o.at
        elif kind == "reveal":
            result.rounds += 1
            result.round_ms.append(o.at - opened_at)
            if wire["reason"] == "timeout":
                result.endings["void"] += 1
            else:
                ending = f"{wire['reason']}_{'right' if wire['correct'] else 'wrong'}"
                result.endings[ending] += 1
                caller = policies[team_of(int(wire["by"]), players)]
                result.calls_by_policy[f"{caller}:{ending}"] += 1
        elif kind == "over":
            result.winners = tuple(wire["winners"])
            result.finished = True

    runner.listeners.append(tally)
    runner.listeners.extend(listeners)
    runner.act(0, StartMatch(seat=0))
    for _ in range(MAX_STEPS):
        if table.phase is Phase.OVER:
            break
        if max_rounds is not None and result.rounds >= max_rounds:
            break
        if not runner.step():
            break  # nothing will ever happen again
    result.scores = table.scores
    result.duration_ms = runner.now
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


def run(
    players: int,
    matches: int,
    a: str,
    b: str,
    seed: int,
    speed: float,
    bot_level: str = DEFAULT_BOT_LEVEL,
) -> Totals:
    totals = Totals(players=players, a=a, b=b)
    policies = team_policies(players, a, b)
    for i in range(matches):
        result = play_match(
            players, policies, seed * 1_000_003 + i, speed=speed, bot_level=bot_level
        )
        totals.results.append(result)
    return totals


NEWCOMER_SEAT = 0


def levels_report(players: int, matches: int, seed: int) -> dict[str, dict[str, float]]:
    """For each bot level: a newcomer in seat 0 (connected, as at a practice table) and its
    smart partner against smart bots, all bots at that level, over the same seeds."""
    report: dict[str, dict[str, float]] = {}
    for name in BOT_LEVELS:
        totals = Totals(players=players, a="newcomer team", b="bots")
        watches: list[RoundWatch] = []
        for i in range(matches):
            watch = RoundWatch(players)
            watches.append(watch)
            totals.results.append(
                play_match(
                    players,
                    ("smart",) * teams(players),
                    seed * 1_000_003 + i,
                    host_connected=True,
                    bot_level=name,
                    seat_policies={NEWCOMER_SEAT: "newcomer"},
                    listeners=(watch.listen,),
                )
            )
        report[name] = level_row(totals, watches)
    return report


def level_row(totals: Totals, watches: Sequence[RoundWatch]) -> dict[str, float]:
    """One level's line: the newcomer's results, the rounds' pace, and the bots' reactions."""
    s = totals.summary()
    endings = s["round_endings"]
    rounds = max(1, sum(endings.values()))
    round_s = [ms / 1000 for w in watches for ms in w.round_ms]
    still_s = [ms / 1000 for w in watches for ms in w.still_ms]
    bot_calls = [c for w in watches for c in w.calls if c.seat != NEWCOMER_SEAT]

    def reaction(q: float, kind: str | None = None) -> float:
        chosen = [c.reaction_ms / 1000 for c in bot_calls if kind is None or c.kind == kind]
        return round(percentile(chosen, q), 2)

    bot_requests = sum(1 for w in watches for by in w.requests if by != NEWCOMER_SEAT)
    # The newcomer's own carrés (held when the round ended), and how many of them an opponent's
    # Contre! took before the partner's Quatro!: what the player counted.
    mine = [e for w in watches for e in w.endings if NEWCOMER_SEAT in e.carres]
    newcomer_team = team_of(NEWCOMER_SEAT, totals.players)
    contred = [e for e in mine if e.reason == "contre" and e.target_team == newcomer_team]
    return {
        "newcomer_wins": s["win_rate"]["a"],
        "newcomer_points_per_match": s["points_per_match"]["a"],
        "bots_points_per_match": s["points_per_match"]["b"],
        "round_s_p50": round(percentile(round_s, 50), 2),
        "round_s_mean": round(s["mean_round_seconds"], 2),
        "match_minutes": round(
            sum(r.duration_ms for r in totals.results) / max(1, len(totals.results)) / 60_000, 2
        ),
        "reshuffles_per_round": round(bot_requests / rounds, 3),
        "still_s_p99": round(percentile(still_s, 99), 1),
        "still_s_max": round(max(still_s, default=0.0), 1),
        "call_reaction_s_p10": reaction(10),
        "call_reaction_s_p50": reaction(50),
        "quatro_reaction_s_p10": reaction(10, "quatro"),
        "contre_reaction_s_p10": reaction(10, "contre"),
        "contre_share": round((endings["contre_right"] + endings["contre_wrong"]) / rounds, 3),
        "newcomer_carres_contred": round(len(contred) / max(1, len(mine)), 3),
        "void_share": round(endings["void"] / rounds, 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.tournament", description=__doc__)
    parser.add_argument("--players", type=int, choices=(4, 6, 8), default=4)
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--a", choices=sorted(POLICIES), default="smart")
    parser.add_argument("--b", choices=sorted(POLICIES), default="random")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--speed", type=float, default=1.0, help="bots' pace (1.0 = human)")
    parser.add_argument(
        "--level", choices=BOT_LEVELS, default=DEFAULT_BOT_LEVEL, help="every bot's level"
    )
    parser.add_argument(
        "--levels", action="store_true", help="a newcomer against each bot level (see above)"
    )
    args = parser.parse_args(argv)
    if args.matches < 1:
        parser.error("--matches must be at least 1")
    if args.levels:
        report = levels_report(args.players, args.matches, args.seed)
        print(f"seat 0: newcomer; seat {args.players // 2}: its smart partner; others: smart")
        for name, row in report.items():
            print(f"{name:8} " + " ".join(f"{k}={v}" for k, v in row.items()))
        meta = {"players": args.players, "matches": args.matches, "seed": args.seed}
        print(json.dumps({"levels": report, **meta}))
        return 0
    totals = run(args.players, args.matches, args.a, args.b, args.seed, args.speed, args.level)
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
    calls = Counter[str]()
    commands = 0
    for r in results:
        refusals.update(r.refusals)
        calls.update(r.calls_by_policy)
        commands += r.commands
    print(f"calls by the caller's policy: {dict(sorted(calls.items()))}")
    print(f"mean match length: {minutes:.2f} simulated minutes; unfinished matches: {stuck}")
    print(f"commands sent: {commands}; refused: {dict(sorted(refusals.items()))}")
    print(json.dumps(totals.summary()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
