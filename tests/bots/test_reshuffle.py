"""Bots ask for a reshuffle only when the centre is truly dead (R19): nobody has taken a card
from it for 40 s, and at most once a round. Before that, a bot whose rank is not in the centre
turns it over itself, as a person does, so a table of bots never stands still."""

from __future__ import annotations

from engine import CastVote, Ready, RequestVote, Swap
from engine.bots import SmartBot
from engine.bots.smart import DEAD_CENTRE_COOLDOWNS
from engine.config import Timings
from tests.bots.harness import deal, seen_by, table_with

DEAD_CENTRE_MS = DEAD_CENTRE_COOLDOWNS * Timings().swap_cooldown  # 40 s of a round's 180
# The bot in seat 2 keeps aces; the centre never shows one, and nobody else moves.
DEAD = deal(["J J 10 10", "A A Q 10", "A A Q J", "K Q J 10"], "K K K Q")


def test_a_bot_turns_a_still_centre_over_rather_than_ask_for_a_reshuffle() -> None:
    runner, log = table_with(4, {2: "smart"}, deals=[DEAD], seed=6)
    runner.run(until=Timings().round - 1)
    swaps = [at for at, c in log.commands_of(2, Swap)]
    assert swaps, "the bot never turned the centre over"
    stretches = [b - a for a, b in zip([0, *swaps], [*swaps, Timings().round], strict=True)]
    assert max(stretches) < DEAD_CENTRE_MS
    assert log.commands_of(2, RequestVote) == []


def test_a_bot_asks_only_after_40_s_of_a_still_centre_and_once_a_round() -> None:
    """The rule itself, read from the bot's plan while the test alone moves the table (the bot's
    own swaps would keep the centre alive)."""
    runner, _ = table_with(4, {2: "smart"}, deals=[DEAD], seed=6, connected=[0])
    runner.act(0, Ready(seat=0))  # the round opens at 0: seat 0 is the one connected human
    bot = runner.bots[2]
    assert isinstance(bot, SmartBot)
    assert [i.at for i in bot._plan_reshuffle()] == [DEAD_CENTRE_MS]
    runner.now = 10_000
    sv = seen_by(runner.table, 0)
    card = next(c for c in sv.hand if c.rank != sv.center[0].rank)
    runner.act(0, Swap(seat=0, card=card.id, slot=0, expect=sv.center[0].id))
    assert [i.at for i in bot._plan_reshuffle()] == [10_000 + DEAD_CENTRE_MS]
    # Someone else asks, and seat 0 (a connected human) refuses: no bot asks again this round,
    # though R20 would allow another vote 30 s later.
    runner.now = 12_000
    runner.act(1, RequestVote(seat=1))
    runner.act(0, CastVote(seat=0, accept=False))
    assert bot._plan_reshuffle() == []
