"""How many commands one table judges per second, on one core: `python -m engine.bench`.

Whole matches are played at 4, 6 and 8 players, half the seats people (all connected) and half
bots, with simulated time: each step the clock moves on a little and one seat sends one of the
commands its own view allows (`engine.legal`), mostly swaps, with floors, emissions, votes and
now and then a call. Every command is logged with its time.

The figure is the replay: the logged commands are applied again to fresh tables with the same
seed (the engine is deterministic, so the game is the same) with nothing else in the loop, the
way a table actor applies the commands it receives. It is timed in this process's CPU time and
the best of a few repetitions is kept, as timeit does, so other processes sharing the machine
disturb it less. The rate of the first pass,
which also rebuilds each seat's view and its legal commands before every move, is printed too.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass

from engine.commands import (
    AddBot,
    CallContre,
    CallQuatro,
    Command,
    Connect,
    Emit,
    RequestVote,
    SetFloor,
    StartMatch,
    Swap,
    TakeSeat,
)
from engine.config import TableConfig
from engine.errors import Refusal
from engine.legal import legal_commands
from engine.phase import Phase
from engine.table import Table

# How often each kind of legal command is picked, relative to the others.
WEIGHTS: dict[type[Command], float] = {
    Swap: 30.0,
    SetFloor: 2.0,
    Emit: 0.2,  # per emoji: 24 of them
    RequestVote: 0.3,
    CallQuatro: 0.05,
    CallContre: 0.05,
}


Log = list[tuple[int, Command | None]]  # (now, command), or None: only the clock moved


@dataclass
class Match:
    players: int
    seed: int
    log: Log
    commands: int
    refused: int


def setup(players: int) -> list[Command]:
    out: list[Command] = []
    for s in range(0, players, 2):
        out += [TakeSeat(seat=s, player_id=f"p{s}", name=f"P{s}"), Connect(seat=s)]
    out += [AddBot(seat=0, target=s) for s in range(1, players, 2)]
    out.append(StartMatch(seat=0))
    return out


def play_match(players: int, seed: int) -> Match:
    """One whole match of random legal commands, logged."""
    rng = random.Random(seed)
    table = Table(TableConfig(players=players, seed=seed))
    log: Log = []
    for command in setup(players):
        table.apply(command, 0)
        log.append((0, command))
    now = 0
    refused = 0
    while table.phase is not Phase.OVER:
        now += rng.randrange(0, 120)
        seat = rng.randrange(players)
        options = legal_commands(table.view(seat), seat, now)
        if not options:
            table.advance(now)
            log.append((now, None))
            continue
        weights = [WEIGHTS.get(type(c), 5.0) for c in options]
        command = rng.choices(options, weights)[0]
        log.append((now, command))
        try:
            table.apply(command, now)
        except Refusal:
            refused += 1
    commands = sum(command is not None for _, command in log)
    return Match(players, seed, log, commands, refused)


def replay(match: Match) -> int:
    """Apply a logged match again; return how many commands were refused (as the first time)."""
    table = Table(TableConfig(players=match.players, seed=match.seed))
    apply, advance = table.apply, table.advance
    refused = 0
    for now, command in match.log:
        if command is None:
            advance(now)
        else:
            try:
                apply(command, now)
            except Refusal:
                refused += 1
    return refused


@dataclass
class Result:
    players: int
    matches: int
    commands: int
    refused: int
    replay_rate: float
    wall_rate: float
    first_pass_rate: float


def measure(players: int, seconds: float, seed: int, repeat: int) -> Result:
    started = time.perf_counter()
    matches: list[Match] = []
    while time.perf_counter() - started < seconds or not matches:
        matches.append(play_match(players, seed + len(matches)))
    first_pass = time.perf_counter() - started
    commands = sum(m.commands for m in matches)
    best = best_wall = float("inf")
    for _ in range(repeat):
        began, began_wall = time.process_time(), time.perf_counter()
        for match in matches:
            if replay(match) != match.refused:
                raise AssertionError("a replay judged a command differently: not deterministic")
        best = min(best, time.process_time() - began)
        best_wall = min(best_wall, time.perf_counter() - began_wall)
    return Result(
        players=players,
        matches=len(matches),
        commands=commands,
        refused=sum(m.refused for m in matches),
        replay_rate=commands / best,
        wall_rate=commands / best_wall,
        first_pass_rate=commands / first_pass,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m engine.bench", description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="of play per table size")
    parser.add_argument("--repeat", type=int, default=10, help="replays; the best is kept")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--players", type=int, nargs="*", default=[4, 6, 8])
    args = parser.parse_args(argv)
    for players in args.players:
        r = measure(players, args.seconds, args.seed, args.repeat)
        print(
            f"{players} players: {r.replay_rate:.0f} commands/s"
            f"  (CPU time; {r.wall_rate:.0f}/s by the wall clock; {r.commands} commands in"
            f" {r.matches} whole matches, {r.refused} refused; with a view and legal_commands"
            f" before every move: {r.first_pass_rate:.0f}/s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
