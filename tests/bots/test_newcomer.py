"""The newcomer stand-in (engine.bots.newcomer) plays like a person new to the game: it shows
its sign right after completing a carré, sometimes misses its partner's sign, and now and then
wastes a swap. The bot levels are measured against it, so these are what make the measure
predict real play."""

from __future__ import annotations

from engine import CallQuatro, Command, SetFloor, Swap, Table
from engine.bots import Bot, SmartBot
from engine.bots.newcomer import CALL, MISS, PACE
from engine.bots.pacing import MAX_REACTION_MS
from engine.config import Timings
from tests.bots.harness import deal, seen_by, table_with
from tests.bots.test_smart import KINGS_FOR_SEAT_0, emit_sign, take

Bots = dict[int, Bot]

# The newcomer in seat 2 can make a carré of kings in two swaps; seat 0 is played by hand.
KINGS_FOR_SEAT_2 = deal(["A A Q J", "A A Q 10", "K K Q J", "J J 10 10"], "K K Q 10")


def test_the_newcomer_shows_its_sign_right_after_the_swap_that_completes_its_carre() -> None:
    runner, log = table_with(4, {2: "newcomer"}, deals=[KINGS_FOR_SEAT_2], seed=3)
    runner.run(until=30_000)
    assert [c.rank for c in seen_by(runner.table, 2).hand] == ["K"] * 4
    completed = max(at for at, s, c, _ in log.sent if s == 2 and isinstance(c, Swap))
    opened = [at for at, c in log.commands_of(2, SetFloor) if isinstance(c, SetFloor) and c.open]
    assert opened
    assert opened[0] > completed, "a newcomer takes the floor once the carré is there"
    sign = seen_by(runner.table, 2).sign
    shown = [at for at, e in log.of_type("emission") if e["seat"] == 2 and e["emoji"] == sign]
    # Noticing the carré (a reaction), then picking the sign in the list (a quick step).
    assert shown
    assert shown[0] - completed <= (MAX_REACTION_MS + 500) / PACE


def test_the_newcomer_sometimes_misses_its_partners_sign() -> None:
    period = Timings().emission_period
    delays = []
    for seed in range(80):
        runner, log = table_with(4, {2: "newcomer"}, deals=[KINGS_FOR_SEAT_0], seed=seed)
        take(runner, 0, "Q", "K", at=100)
        runner.run(until=2_100)
        if "K" not in {c.rank for c in seen_by(runner.table, 0).center}:
            continue  # the newcomer took the other king by a slip: no carré for seat 0
        take(runner, 0, "J", "K", at=2_100)
        emit_sign(runner, 0, at=2_300)
        emitted_at = log.of_type("emission")[-1][0]
        runner.run(until=emitted_at + 10 * period)
        calls = log.commands_of(2, CallQuatro)
        assert len(calls) == 1, f"seed {seed}: the newcomer never called"
        delays.append(calls[0][0] - emitted_at)
    assert len(delays) >= 60
    assert min(delays) >= CALL.floor_ms
    missed = sum(1 for d in delays if d > period)
    # MISS of the first emissions go unnoticed; 60 rounds put the share well inside this band.
    assert 0.5 * MISS <= missed / len(delays) <= 1.6 * MISS


def test_the_newcomer_wastes_a_swap_now_and_then_and_a_smart_bot_never_does() -> None:
    """A wasted swap takes a card of another rank while one of the rank it collects lies in
    the centre."""
    policies = {0: "newcomer", 1: "smart", 2: "smart", 3: "smart"}
    wasted = {"newcomer": 0, "smart": 0}
    swaps = {"newcomer": 0, "smart": 0}
    for seed in range(8):
        runner, _ = table_with(4, policies, seed=seed, connected=[0])
        bots = runner.bots

        def check(table: Table, seat: int, command: Command, now: int, bots: Bots = bots) -> None:
            if not isinstance(command, Swap):
                return
            bot = bots[seat]
            assert isinstance(bot, SmartBot)
            center = seen_by(table, seat).center
            taken = next(c for c in center if c.id == command.expect)
            swaps[policies[seat]] += 1
            if taken.rank != bot.target and any(c.rank == bot.target for c in center):
                wasted[policies[seat]] += 1

        runner.check = check
        runner.run(until=15 * 60_000)
    assert swaps["newcomer"] > 50
    assert swaps["smart"] > 150
    assert wasted["smart"] == 0
    assert 0 < wasted["newcomer"] < 0.3 * swaps["newcomer"]
