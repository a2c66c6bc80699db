"""The carré estimate reads only public swaps and the bot's own cards."""

from __future__ import annotations

from engine.bots.estimate import seat_carre_chance
from tests.bots.harness import deal, table_with
from tests.bots.test_smart import take

# Seat 0 collects the kings: two from the centre, two that seat 1 puts down. Seat 3 (the bot
# whose estimate is read) keeps its aces and queens: nothing it wants ever shows. It plays at
# the sharp level, which remembers every take (the others forget, test_levels.py).
KINGS = deal(["J J 10 10", "K K J 10", "A A Q Q", "A A Q Q"], "K K J 10")


def test_four_taken_in_sight_are_a_certain_carre_three_are_not() -> None:
    runner, _ = table_with(4, {3: "smart"}, deals=[KINGS], seed=1, bot_level="sharp")
    watcher = runner.bots[3]
    take(runner, 0, "J", "K", at=100)
    take(runner, 1, "K", "J", at=300)
    assert seat_carre_chance(watcher.model, 0) == 0.0  # one king taken: no dealt hand has three
    take(runner, 0, "J", "K", at=2_200)
    take(runner, 1, "K", "10", at=2_400)
    take(runner, 0, "10", "K", at=4_300)
    assert seat_carre_chance(watcher.model, 0) == 0.0  # three kings, and the fourth in sight
    take(runner, 0, "10", "K", at=6_400)
    assert seat_carre_chance(watcher.model, 0) == 1.0
    # Seat 1 put both its kings down and took a jack and a ten: it cannot hold a carré.
    assert seat_carre_chance(watcher.model, 1) == 0.0


def test_nobody_can_hold_a_carre_before_anyone_took_two_of_a_rank() -> None:
    runner, _ = table_with(4, {3: "smart"}, deals=[KINGS], seed=1, bot_level="sharp")
    watcher = runner.bots[3]
    runner.run(until=1_000)
    assert [seat_carre_chance(watcher.model, s) for s in range(4)] == [0.0] * 4
