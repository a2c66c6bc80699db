"""Human reaction times (engine.bots.pacing.Reaction): a floor nobody beats, a median, a tail."""

from __future__ import annotations

import random

import pytest

from engine.bots.pacing import CALL, Pace, Reaction
from engine.round_watch import percentile


def test_a_reaction_never_beats_its_floor_and_centres_on_its_median() -> None:
    reaction = Reaction(floor_ms=2_000, median_ms=3_000, sigma=0.5)
    rng = random.Random(4)
    draws = [reaction.draw(rng) for _ in range(5_000)]
    assert min(draws) >= 2_000
    assert max(draws) <= reaction.cap_ms == 6_000
    assert percentile(draws, 50) == pytest.approx(3_000, rel=0.03)
    assert percentile(draws, 90) > 3_500  # the long tail of slower ones


def test_a_table_clock_scales_the_reactions_and_the_tempo_does_not() -> None:
    quick = Pace(speed=4.0, tempo=2.0)
    assert quick.call_floor() == CALL.floor_ms / 4
    rng = random.Random(1)
    assert all(quick.call_reaction(rng) >= CALL.floor_ms / 4 for _ in range(1_000))


@pytest.mark.parametrize(("floor", "median", "sigma"), [(0, 1, 0.5), (2, 2, 0.5), (1, 2, 0)])
def test_a_reaction_needs_a_floor_below_its_median_and_a_spread(
    floor: float, median: float, sigma: float
) -> None:
    with pytest.raises(ValueError, match=r"floor_ms < median_ms|sigma"):
        Reaction(floor_ms=floor, median_ms=median, sigma=sigma)
