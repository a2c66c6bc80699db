"""Human-like timing. Every delay a bot waits comes from here, drawn from the bot's own seeded
RNG and divided by one speed knob (1.0 is a human pace; 2.0 plays twice as fast).

A table run with `time_scale` s should give its bots `speed = 1 / s`, so they keep pace with the
scaled rules. A bot level (engine.bots.levels) sets a `tempo` on top, for the ordinary moves
(swaps, the floor, getting ready), and its own reaction times (`Reaction`) for noticing a card
in the centre and for the two calls: those are written as a person's at that level, so the
tempo does not scale them again.

A call reacts to evidence (the partner's sign, the swaps of a team that may hold a carré), and
nobody reads evidence faster than a floor: a reaction is drawn from a shifted log-normal, the
usual shape of human reaction times — never below the floor, most near the median, a long tail
of slower ones. The policy also waits for the floor after each newer piece of evidence (the
sign shown again, another swap), so that every call comes at least the floor after the latest
event it can be reacting to.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

MAX_REACTION_MS = 2_500  # the slowest ordinary reaction (`Pace.reaction`) at speed 1.0


@dataclass(frozen=True, slots=True)
class Reaction:
    """How long a person takes to act on something they saw, in ms at a human pace: never
    sooner than `floor_ms`, half the time by `median_ms`; `sigma` spreads the log-normal above
    the floor, whose tail is cut at `cap_ms` (four times the median's distance above the
    floor), so that a test knows how long to wait."""

    floor_ms: float
    median_ms: float
    sigma: float = 0.45

    def __post_init__(self) -> None:
        if not 0 < self.floor_ms < self.median_ms:
            raise ValueError("a reaction needs 0 < floor_ms < median_ms")
        if self.sigma <= 0:
            raise ValueError("sigma must be positive")

    @property
    def cap_ms(self) -> float:
        return self.floor_ms + 4 * (self.median_ms - self.floor_ms)

    def draw(self, rng: random.Random) -> float:
        above = (self.median_ms - self.floor_ms) * rng.lognormvariate(0.0, self.sigma)
        return min(self.cap_ms, self.floor_ms + above)


# A practised player (the `normal` level). Quatro! on the partner's sign is recognition; Contre!
# is a judgement, and takes longer. A card one wants lies in the centre a while before one sees
# it: a person watches the floors and the signs as much as the centre.
CALL = Reaction(floor_ms=2_000, median_ms=2_900, sigma=0.4)
ACCUSE = Reaction(floor_ms=3_000, median_ms=5_000, sigma=0.45)
NOTICE = Reaction(floor_ms=2_500, median_ms=12_000, sigma=0.5)


@dataclass(frozen=True, slots=True)
class Pace:
    speed: float = 1.0
    tempo: float = 1.0  # the level's: ordinary moves only
    call: Reaction = field(default=CALL)
    accuse: Reaction = field(default=ACCUSE)
    notice: Reaction = field(default=NOTICE)

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
        """How long after the cooldown ends the next swap goes: finding the card and dragging
        it, rarely at once."""
        return self._ms(rng.triangular(600.0, 8_000.0, 2_000.0))

    def restless(self, rng: random.Random) -> int:
        """How long a player whose card is not in the centre waits before swapping something
        else, to turn the centre over."""
        return self._ms(rng.uniform(8_000.0, 24_000.0))

    def notice_card(self, rng: random.Random) -> int:
        """From a card's arrival in the centre to this player having seen it."""
        return self._clock(self.notice.draw(rng))

    def call_reaction(self, rng: random.Random) -> int:
        """From the evidence (the partner's sign or swap) to Quatro!."""
        return self._clock(self.call.draw(rng))

    def call_floor(self) -> int:
        return self._clock(self.call.floor_ms)

    def deliberate(self, rng: random.Random) -> int:
        """Making up one's mind to accuse a team (Contre!), from the evidence."""
        return self._clock(self.accuse.draw(rng))

    def accuse_floor(self) -> int:
        return self._clock(self.accuse.floor_ms)

    def span(self, rng: random.Random, mean_ms: float) -> int:
        """How long something seen stays in mind: exponential, most memories short-lived."""
        return self._clock(rng.expovariate(1.0 / mean_ms))

    def think(self, rng: random.Random) -> int:
        """An idle player's gap between two moves."""
        return self._ms(rng.uniform(1_200.0, 4_500.0))

    def linger(self, rng: random.Random) -> int:
        """Looking at the reveal before starting the next round (host only)."""
        return self._ms(rng.uniform(3_000.0, 8_000.0))
