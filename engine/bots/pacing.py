"""Human-like timing. Every delay a bot waits comes from here, drawn from the bot's own seeded
RNG and divided by one speed knob (1.0 is a human pace; 2.0 plays twice as fast).

A table run with `time_scale` s should give its bots `speed = 1 / s`, so they keep pace with the
scaled rules."""

from __future__ import annotations

import random
from dataclasses import dataclass

MAX_REACTION_MS = 2_500  # the slowest reaction at speed 1.0


@dataclass(frozen=True, slots=True)
class Pace:
    speed: float = 1.0

    def __post_init__(self) -> None:
        if not self.speed > 0:
            raise ValueError("speed must be positive")

    def _ms(self, value: float) -> int:
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

    def deliberate(self, rng: random.Random) -> int:
        """Making up one's mind to accuse a team (Contre!)."""
        return self._ms(rng.uniform(700.0, 1_800.0))

    def think(self, rng: random.Random) -> int:
        """An idle player's gap between two moves."""
        return self._ms(rng.uniform(1_200.0, 4_500.0))

    def linger(self, rng: random.Random) -> int:
        """Looking at the reveal before starting the next round (host only)."""
        return self._ms(rng.uniform(3_000.0, 8_000.0))
