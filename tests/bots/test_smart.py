"""The smart policy's promises, each on a rigged deal with the other seats played by hand."""

from __future__ import annotations

import pytest

from engine import CallContre, CallQuatro, Emit, SetFloor, Swap
from engine.bots import LEVELS
from engine.bots.newcomer import CALL as NEWCOMER_CALL
from engine.bots.pacing import Reaction
from engine.config import Timings
from engine.tournament import Runner
from tests.bots.harness import Log, card_ids, deal, seen_by, slot_of, table_with

# 4 players: seat 0 can make a carré of kings in two swaps; seat 2 (a bot) waits for aces that
# never come.
KINGS_FOR_SEAT_0 = deal(["K K Q J", "A A Q 10", "A A Q J", "J J 10 10"], "K K Q 10")
# The same with seats 0 and 2 exchanged: the bot in seat 2 can make the carré itself.
KINGS_FOR_SEAT_2 = deal(["A A Q J", "A A Q 10", "K K Q J", "J J 10 10"], "K K Q 10")


def take(runner: Runner, seat: int, give_rank: str, want_rank: str, at: int) -> None:
    """Seat swaps one card of `give_rank` for a centre card of `want_rank`, at `at`."""
    runner.run(until=at)
    table = runner.table
    want = card_ids(table, 0, want_rank, where="center")[0]
    give = card_ids(table, seat, give_rank)[0]
    runner.act(seat, Swap(seat=seat, card=give, slot=slot_of(table, want), expect=want))


def emit_sign(runner: Runner, seat: int, at: int) -> str:
    runner.run(until=at)
    sign = seen_by(runner.table, seat).sign
    assert sign is not None
    runner.act(seat, SetFloor(seat=seat, open=True))
    runner.act(seat, Emit(seat=seat, emoji=sign))
    return sign


def latest(reaction: Reaction) -> float:
    """The latest a call may come after the evidence: its slowest draw, or, when the partner
    showed the sign again before that, the floor after the repeat (engine.bots.pacing)."""
    return max(reaction.cap_ms, Timings().emission_period + reaction.floor_ms)


NORMAL = LEVELS["normal"]
SHARP = LEVELS["sharp"]


def reveal(log: Log) -> dict[str, object]:
    reveals = log.of_type("reveal")
    assert len(reveals) == 1
    return reveals[0][1]


def test_r15_smart_bot_calls_quatro_when_partner_emits_the_team_sign() -> None:
    runner, log = table_with(4, {2: "smart"}, deals=[KINGS_FOR_SEAT_0], seed=3)
    take(runner, 0, "Q", "K", at=1_000)
    take(runner, 0, "J", "K", at=3_100)
    emit_sign(runner, 0, at=3_300)
    emitted_at = log.of_type("emission")[0][0]
    runner.run(until=emitted_at + int(latest(NORMAL.call)) + 1)
    calls = log.commands_of(2, CallQuatro)
    assert len(calls) == 1
    assert NORMAL.call.floor_ms <= calls[0][0] - emitted_at <= latest(NORMAL.call)
    shown = reveal(log)
    assert shown["reason"] == "quatro"
    assert shown["correct"] is True
    assert shown["scored"] == [0]


def test_partner_sign_is_heard_at_any_speed_within_a_scaled_reaction() -> None:
    runner, log = table_with(4, {2: "smart"}, deals=[KINGS_FOR_SEAT_0], seed=5, speed=4.0)
    take(runner, 0, "Q", "K", at=1_000)
    take(runner, 0, "J", "K", at=3_100)
    emit_sign(runner, 0, at=3_300)
    emitted_at = log.of_type("emission")[0][0]
    runner.run(until=emitted_at + int(latest(NORMAL.call)))
    calls = log.commands_of(2, CallQuatro)
    assert calls
    assert NORMAL.call.floor_ms / 4 <= calls[0][0] - emitted_at <= latest(NORMAL.call) / 4


def test_r16_smart_bot_with_a_carre_signals_it_and_never_calls_on_its_own_hand() -> None:
    runner, log = table_with(4, {2: "smart"}, deals=[KINGS_FOR_SEAT_2], seed=1)
    runner.run(until=60_000)
    seen = seen_by(runner.table, 2)
    assert [c.rank for c in seen.hand] == ["K"] * 4, "the bot should have collected the kings"
    sign = seen.sign
    assert any(e["seat"] == 2 and e["emoji"] == sign for _, e in log.of_type("emission"))
    # Its partner never shows the sign: a call would judge the partner's hand, which holds no
    # carré, so the bot keeps its carré and waits until the round runs out (R22).
    runner.run(until=200_000)
    assert log.commands_of(2, CallQuatro) == []
    shown = reveal(log)
    assert shown["reason"] == "timeout"
    assert shown["carres"] == [2]


def test_r17_smart_bot_accuses_the_team_it_watched_collect_a_carre_at_6_players() -> None:
    # Seat 1 (team 1) takes all four kings in plain sight: two from the deal's centre, two that
    # seat 3 (the bot's partner) puts down.
    six = deal(["A A Q J", "10 10 9 9", "A A Q J", "K K 10 9", "Q Q J 8", "10 9 8 J"], "K K 8 8")
    # At the sharp level, which remembers every take (the others may forget one, test_levels).
    runner, log = table_with(6, {0: "smart"}, deals=[six], seed=2, bot_level="sharp")
    take(runner, 1, "10", "K", at=100)
    take(runner, 1, "10", "K", at=2_200)
    take(runner, 3, "K", "8", at=2_300)
    take(runner, 3, "K", "8", at=4_400)
    take(runner, 1, "9", "K", at=4_500)
    assert log.commands_of(0, CallContre) == [], "three kings seen is no carré yet"
    take(runner, 1, "9", "K", at=6_600)
    last_swap = log.of_type("swapped")[-1][0]
    runner.run(until=last_swap + int(SHARP.accuse.cap_ms))
    calls = log.commands_of(0, CallContre)
    assert len(calls) == 1
    at, call = calls[0]
    assert isinstance(call, CallContre)
    assert call.team == 1
    assert SHARP.accuse.floor_ms <= at - last_swap <= SHARP.accuse.cap_ms
    shown = reveal(log)
    assert shown["correct"] is True
    assert shown["scored"] == [0]


def test_smart_bot_never_puts_down_the_rank_its_partner_visibly_collects() -> None:
    hands = ["A A J J", "Q J 10 10", "K K Q 10", "A Q J 10"]
    rigged = deal(hands, "K K Q A")

    def queens_put_down(partner_takes_the_queen: bool) -> list[int]:
        runner, log = table_with(4, {2: "smart"}, deals=[rigged], seed=4)
        if partner_takes_the_queen:
            take(runner, 0, "A", "Q", at=100)
        runner.run(until=12_000)
        return [
            at for at, e in log.of_type("swapped") if e["seat"] == 2 and e["placed"]["rank"] == "Q"
        ]

    assert queens_put_down(False), "without a partner collecting queens, the queen goes"
    assert queens_put_down(True) == []


# A newcomer misses the sign this many times in a row once in 15,000 rounds (MISS ** 8).
NEWCOMER_MISSES = 8

# Team 0 can make two carrés: kings for seat 0, aces for seat 2, both from the centre.
BOTH_CARRES = deal(["K K Q J", "Q J 10 10", "A A Q J", "Q J 10 10"], "K K A A")


def test_r15_when_both_bots_hold_a_carre_neither_breaks_it_and_the_first_to_hear_calls() -> None:
    runner, log = table_with(4, {0: "smart", 2: "smart"}, deals=[BOTH_CARRES], seed=8)
    runner.run(until=120_000)
    ended_at, shown = log.of_type("reveal")[0]
    sign = shown["signs"][0]
    signs = [(at, e["seat"]) for at, e in log.of_type("emission") if e["emoji"] == sign]
    assert {seat for _, seat in signs} == {0, 2}, "both should have completed a carré and said so"
    calls = log.commands_of(0, CallQuatro) + log.commands_of(2, CallQuatro)
    assert len(calls) == 1
    ((called_at, call),) = calls
    assert called_at == ended_at
    # The caller heard its partner's sign while holding its own carré, and called on it.
    heard_at = min(at for at, seat in signs if seat != call.seat)
    assert heard_at + NORMAL.call.floor_ms <= called_at <= heard_at + latest(NORMAL.call)
    assert shown["reason"] == "quatro"
    assert shown["correct"] is True
    assert shown["carres"] == [0, 2]
    assert shown["scored"] == [0]


@pytest.mark.parametrize("policy", ["smart", "newcomer"])
@pytest.mark.parametrize("bot", [0, 2])
def test_r15_a_bot_holding_a_carre_calls_when_its_human_partner_shows_the_sign(
    bot: int, policy: str
) -> None:
    """The both-carré round with one partner a bot: it completes its carré and shows the sign
    by its own plan; the human partner (played by the test) does the same; the bot calls on
    the partner's carré within a reaction time (a newcomer may miss the first few emissions of
    the sign, one every 5 s), and is right (R15). The newcomer stands for a player who follows
    the hints: they say the same."""
    human = 2 - bot
    reaction = latest(NORMAL.call)
    if policy == "newcomer":
        reaction = NEWCOMER_MISSES * Timings().emission_period + latest(NEWCOMER_CALL)
    runner, log = table_with(4, {bot: policy}, deals=[BOTH_CARRES], seed=9)
    rank = "A" if human == 2 else "K"
    take(runner, human, "Q", rank, at=1_000)
    take(runner, human, "J", rank, at=3_100)
    assert [c.rank for c in seen_by(runner.table, human).hand] == [rank] * 4
    sign = seen_by(runner.table, bot).sign
    for _ in range(100):  # the bot's own plan: its carré, then its sign on the floor
        if any(e["seat"] == bot and e["emoji"] == sign for _, e in log.of_type("emission")):
            break
        runner.step(until=runner.now + 60_000)
    else:
        raise AssertionError("the bot never showed its sign")
    assert [c.rank for c in seen_by(runner.table, bot).hand] == ["A" if bot == 2 else "K"] * 4
    assert log.commands_of(bot, CallQuatro) == [], "no call before the partner's sign"
    emit_sign(runner, human, at=runner.now + 500)
    emitted_at = log.of_type("emission")[-1][0]
    runner.run(until=emitted_at + int(reaction) + 1)
    calls = log.commands_of(bot, CallQuatro)
    assert len(calls) == 1
    assert emitted_at < calls[0][0] <= emitted_at + reaction
    shown = reveal(log)
    assert (shown["reason"], shown["by"], shown["correct"]) == ("quatro", bot, True)
    assert shown["carres"] == [0, 2]
    assert shown["scored"] == [0]


def test_r15_smart_bot_calls_quatro_when_it_saw_its_partner_take_all_four() -> None:
    rigged = deal(["J J 10 10", "K K J 10", "A A Q Q", "A A Q Q"], "K K J 10")
    runner, log = table_with(4, {2: "smart"}, deals=[rigged], seed=12, bot_level="sharp")
    take(runner, 0, "J", "K", at=100)
    take(runner, 1, "K", "J", at=300)
    take(runner, 0, "J", "K", at=2_200)
    take(runner, 1, "K", "10", at=2_400)
    take(runner, 0, "10", "K", at=4_300)
    assert log.commands_of(2, CallQuatro) == []
    take(runner, 0, "10", "K", at=6_400)
    runner.run(until=6_400 + int(SHARP.call.cap_ms))
    calls = log.commands_of(2, CallQuatro)
    assert len(calls) == 1
    assert SHARP.call.floor_ms <= calls[0][0] - 6_400 <= SHARP.call.cap_ms
    assert all(e["seat"] != 0 for _, e in log.of_type("emission")), "the bot read the swaps"
    assert reveal(log)["correct"] is True
