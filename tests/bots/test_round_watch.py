"""What the tournament times (engine.round_watch), on rounds played by hand: a call's reaction
runs from the latest public swap or emission it can be reacting to — the caller's partner's for
Quatro!, the accused team's for Contre! — and a round's stillness is its longest stretch without
a swap."""

from __future__ import annotations

from engine import CallContre, CallQuatro, RequestVote
from engine.round_watch import CallTiming, RoundWatch, percentile
from engine.tournament import Runner
from tests.bots.harness import table_with
from tests.bots.test_smart import KINGS_FOR_SEAT_0, emit_sign, take


def watched_round() -> tuple[RoundWatch, Runner]:
    watch = RoundWatch(4)
    runner, _ = table_with(4, {}, deals=[KINGS_FOR_SEAT_0], seed=1, listeners=[watch.listen])
    take(runner, 0, "Q", "K", at=1_000)
    take(runner, 0, "J", "K", at=3_100)
    emit_sign(runner, 0, at=4_000)
    take(runner, 1, "A", "Q", at=5_000)  # an opponent's swap: no evidence about seat 0's hand
    return watch, runner


def test_quatro_is_timed_from_the_partners_latest_swap_or_emission() -> None:
    watch, runner = watched_round()
    runner.act(2, CallQuatro(seat=2), at=7_000)
    assert watch.calls == [CallTiming("quatro", 2, 3_000)]
    assert watch.round_ms == [7_000]
    assert watch.still_ms == [2_100]  # from the swap at 1 s to the swap at 3.1 s
    assert watch.requests == []


def test_contre_is_timed_from_the_accused_teams_latest_swap_or_emission() -> None:
    watch, runner = watched_round()
    runner.act(1, CallContre(seat=1, team=0), at=6_500)
    assert watch.calls == [CallTiming("contre", 1, 2_500)]


def test_after_a_reshuffle_a_call_is_timed_from_the_new_deal() -> None:
    watch, runner = watched_round()
    runner.act(3, RequestVote(seat=3), at=5_500)  # nobody to vote (R19): reshuffled at once
    runner.act(2, CallQuatro(seat=2), at=8_000)
    assert watch.requests == [3]
    assert watch.calls == [CallTiming("quatro", 2, 2_500)]
    assert watch.still_ms == [2_500]  # the new deal moved the centre


def test_percentiles_interpolate_between_ranks() -> None:
    assert percentile([], 10) == 0.0
    assert percentile([5.0], 99) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 50) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 10) == 1.4
