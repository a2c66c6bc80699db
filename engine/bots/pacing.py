"""Human-like timing. Every delay a bot waits comes from here, drawn from the bot's own seeded
RNG and divided by one speed knob (1.0 is a human pace; 2.0 plays twice as fast).

A table run with `time_scale` s should give its bots `speed = 1 / s`, so they keep pace with the
scaled rules. A `tempo` on top scales the ordinary moves (swaps, the floor, getting ready),
and `call` is the reaction time of a Quatro!, written as a person's, so the tempo does not
scale it again.

A call reacts to evidence (the partner's sign), and nobody reads evidence faster than a floor:
a call's reaction is drawn from a shifted log-normal, the usual shape of human reaction times —
never below the floor, most near the median, a long tail of slower ones.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

MAX_REACTION_MS = 2_500  # the slowest ordinary reaction (`Pace.reaction`) at speed 1.0


@dataclass(frozen=True, slots=True)
class Reaction:
    """How long a person takes to act on something they saw, in ms at a human pace: never
    sooner than `floor_ms`, half the time by `median_ms`; `sigma` spreads the log-normal above
    the floor, and `slowest_ms` cuts its tail (by default four times the median's distance
    above the floor), so that a test knows how long to wait."""

    floor_ms: float
    median_ms: float
    sigma: float = 0.45
    slowest_ms: float = 0.0

    def __post_init__(self) -> None:
        if not 0 < self.floor_ms < self.median_ms:
            raise ValueError("a reaction needs 0 < floor_ms < median_ms")
        if self.sigma <= 0:
            raise ValueError("sigma must be positive")

    @property
    def cap_ms(self) -> float:
        return self.slowest_ms or self.floor_ms + 4 * (self.median_ms - self.floor_ms)

    def draw(self, rng: random.Random) -> float:
        above = (self.median_ms - self.floor_ms) * rng.lognormvariate(0.0, self.sigma)
        return min(self.cap_ms, self.floor_ms + above)


# A practised player's Quatro! on the partner's sign.
CALL = Reaction(floor_ms=2_000, median_ms=2_900, sigma=0.4)


@dataclass(frozen=True, slots=True)
class Pace:
    speed: float = 1.0
    tempo: float = 1.0  # the level's: ordinary moves only
    call: Reaction = field(default=CALL)

    def __post_init__(self) -> None:
        if not self.speed > 0 or not self.tempo > 0:
            raise ValueError("speed and tempo must be positive")

    def _ms(self, value: float) -> int:
        return max(1, round(value / (self.speed * self.tempo)))

    def _clock(self, value: float) -> int:
        return max(1, round(value / self.speed))

    def reaction(self, rng: random.Random) -> int:
        """Seeing something and acting on it: mostly 0.4–1.2 s, sometimes slower."""
        return self._ms(min(float(MAX_REACTION_MS), 320.0 + rng.gammavariate(2.0, 220.0)))

    def quick(self, rng: random.Random) -> int:
        """A follow-up to one's own action (emitting right after completing a carré)."""
        return self._ms(rng.uniform(150.0, 500.0))

    def swap_gap(self, rng: random.Random) -> int:
        """How long after the cooldown ends the next swap goes: rarely exactly at its end."""
        return self._ms(rng.triangular(60.0, 1_800.0, 300.0))

    def restless(self, rng: random.Random) -> int:
        """How long a player whose card is not in the centre waits before swapping something
        else, to turn the centre over."""
        return self._ms(rng.uniform(3_000.0, 9_000.0))

    def call_reaction(self, rng: random.Random) -> int:
        """From the evidence (the partner's sign or swap) to Quatro!."""
        return self._clock(self.call.draw(rng))

    def call_floor(self) -> int:
        return self._clock(self.call.floor_ms)

    def deliberate(self, rng: random.Random) -> int:
        """Making up one's mind to accuse a team (Contre!)."""
        return self._ms(rng.uniform(700.0, 1_800.0))

    def span(self, rng: random.Random, mean_ms: float) -> int:
        """How long something seen stays in mind: exponential, most memories short-lived."""
        return self._clock(rng.expovariate(1.0 / mean_ms))

    def think(self, rng: random.Random) -> int:
        """An idle player's gap between two moves."""
        return self._ms(rng.uniform(1_200.0, 4_500.0))

    def linger(self, rng: random.Random) -> int:
        """Looking at the reveal before starting the next round (host only)."""
        return self._ms(rng.uniform(3_000.0, 8_000.0))
