"""An evening's players over time, the curve `python -m loadtests.evening` plays (and the chart's
Locust job, with `QUATRO_EVENING`): from a few to the peak over the rise, smoothly (slow at first,
fastest mid-way, as an evening fills), then back to the few over the fall.

`QUATRO_EVENING="RISE:FALL:PEAK:FEW"`, minutes and players, e.g. "10:4:160:8". The count is kept
to whole tables of `seats`, so that no group of friends waits for a seat nobody will take."""

from __future__ import annotations

import math
from dataclasses import dataclass

ENV = "QUATRO_EVENING"
SPAWN_RATE = 5.0  # players a second at most: a curve's steepest minute needs far fewer


@dataclass(frozen=True, slots=True)
class Curve:
    rise_s: float
    fall_s: float
    peak: int
    few: int
    seats: int = 4

    @classmethod
    def parse(cls, text: str, seats: int = 4) -> Curve:
        """From "RISE:FALL:PEAK:FEW" (minutes, minutes, players, players); ValueError else."""
        parts = text.split(":")
        if len(parts) != 4:
            raise ValueError(f"{ENV} is RISE:FALL:PEAK:FEW, not {text!r}")
        try:
            rise, fall = float(parts[0]), float(parts[1])
            peak, few = int(parts[2]), int(parts[3])
        except ValueError:
            raise ValueError(f"{ENV}: numbers RISE:FALL:PEAK:FEW, not {text!r}") from None
        if rise <= 0 or fall < 0 or not 0 <= few <= peak:
            raise ValueError(f"{ENV}: minutes above 0 and 0 <= FEW <= PEAK, not {text!r}")
        return cls(rise * 60, fall * 60, peak, few, seats)

    @property
    def length_s(self) -> float:
        return self.rise_s + self.fall_s

    def players(self, t: float) -> int | None:
        """Players `t` seconds into the evening (None once it is over)."""
        if t > self.length_s:
            return None
        if t <= self.rise_s:
            share = (1 - math.cos(math.pi * t / self.rise_s)) / 2
        else:
            share = (1 + math.cos(math.pi * (t - self.rise_s) / max(self.fall_s, 1e-9))) / 2
        n = self.few + (self.peak - self.few) * share
        return int(n) // self.seats * self.seats
