"""What the pool of ready actors aims at, and when it may start one: functions of the time they
are given (monotonic seconds), so that tests/actors/test_pool_demand.py needs no clock.

A gateway keeps its *target*: `minimum` plus the creations it expects in the next
`DEMAND_WINDOW_S`, at most `maximum`, and never below the *floor* an operator sets for a known
peak (actors/pool_floor.py, which may lift it past `maximum`). What it expects follows the rate
of its creations and the trend of that rate: the creations of the last window, plus half of
how many more they were than those of the window before (a rate rising in a straight line
brings that many in the next window). A rush raises the buffer while it grows, sooner than the
count of the last window alone, and a quiet spell lets it fall back.

Starting an actor costs a worker process's start (~0.6 s of CPU) on the cores the tables in
play use, hence two settings that spare them: with `quiet_s`, the buffer is refilled only once
no creation came for that long, so a ramp takes what was started ahead and starts only for
creations that find it empty; with `start_gap_s`, the buffer grows one actor at a time, each
start that long after the last one ended, so that what play loses to starts is one process now
and then, never a flock of them. A creation that finds the pool empty is never held back by
either: it waits for the next start. A surplus (actors of ended tables come back,
actors/reuse.py) is stopped down to the maximum while creations come, down to the target only
after a quiet window (`keep`); but for `hold_s` after a creation, up to `hold_most` actors of
the last wave are kept whatever the window says: its tables end and give theirs back as their
players form the next ones, which those actors then serve without a start (the evening of
docs/performance.md had its pool trimmed as its tables ended, and started them again).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

DEMAND_WINDOW_S = 10.0  # the creations of this long raise the target; the window before: its trend


@dataclass(frozen=True)
class PoolPolicy:
    """`minimum` ready actors at the least (`maximum` at most, with demand), `at_once` started
    side by side; `quiet_s` and `start_gap_s` as above (0: refill at once, unpaced);
    `hold_s` and `hold_most`: the last wave's actors kept (0: none beyond the maximum)."""

    minimum: int = 2
    maximum: int = 8
    at_once: int = 2
    quiet_s: float = 0.0
    start_gap_s: float = 0.0
    hold_s: float = 0.0
    hold_most: int = 0

    def __post_init__(self) -> None:
        minimum = max(0, self.minimum)
        object.__setattr__(self, "minimum", minimum)
        object.__setattr__(self, "maximum", max(minimum, self.maximum))
        object.__setattr__(self, "at_once", max(1, self.at_once))
        object.__setattr__(self, "quiet_s", max(0.0, self.quiet_s))
        object.__setattr__(self, "start_gap_s", max(0.0, self.start_gap_s))
        object.__setattr__(self, "hold_s", max(0.0, self.hold_s))
        object.__setattr__(self, "hold_most", max(0, self.hold_most))


class Demand:
    """The creations of the demand window, and what they ask of the pool at a given time."""

    def __init__(self, policy: PoolPolicy) -> None:
        self.policy = policy
        # When each creation of the last two windows was served (the older one: the trend).
        self._takes: deque[float] = deque()
        self._wave: deque[float] = deque()  # when each creation of the last `hold_s` was served
        self.floor = 0  # the operator's floor now (actors/pool_floor.py), set by the pool
        # For metrics, read from any thread; `target` renews it on the event loop.
        self.last_target = policy.minimum

    def served(self, now: float) -> None:
        """A creation was served at `now`."""
        self._takes.append(now)
        if self.policy.hold_s and self.policy.hold_most:
            self._wave.append(now)
        self.target(now)

    def expected(self, now: float) -> float:
        """The creations expected in the next window at `now`: the last window's, plus half of
        its rise over the window before (a rate rising in a straight line); a falling rate
        lowers it, never below none."""
        while self._takes and self._takes[0] < now - 2 * DEMAND_WINDOW_S:
            self._takes.popleft()
        recent = sum(1 for t in self._takes if t >= now - DEMAND_WINDOW_S)
        before = len(self._takes) - recent
        return max(0.0, recent + (recent - before) / 2)

    def target(self, now: float) -> int:
        """How many ready actors this gateway keeps at `now`."""
        wanted = self.policy.minimum + math.ceil(self.expected(now))
        most = max(self.policy.maximum, self.floor)
        self.last_target = min(most, max(self.floor, wanted))
        return self.last_target

    def keep(self, now: float) -> int:
        """How many ready actors this gateway lets the pool hold at `now` before it stops the
        surplus: its maximum while creations come (within the window), since the actors of
        tables that end come back to the pool (actors/reuse.py) and stopping them then only
        means starting others; its target once a window passed without any."""
        target = self.target(now)
        recent = any(t >= now - DEMAND_WINDOW_S for t in self._takes)
        kept = max(self.policy.maximum, target) if recent else target
        return max(kept, self.wave(now))

    def wave(self, now: float) -> int:
        """The last wave's actors the pool keeps at `now`: the creations served in the last
        `hold_s`, at most `hold_most` (each kept actor holds a slot and ~50 MB: the bound)."""
        while self._wave and self._wave[0] < now - self.policy.hold_s:
            self._wave.popleft()
        return min(self.policy.hold_most, len(self._wave))

    def in_ramp(self, now: float) -> bool:
        """Whether creations are coming in (the last one within `quiet_s`)."""
        quiet = self.policy.quiet_s
        return bool(quiet and self._takes) and now - self._takes[-1] < quiet

    def buffer_starts(
        self, shortfall: int, starting: int, waiting: int, last_start_end: float, now: float
    ) -> tuple[int, float | None]:
        """Of the buffer's `shortfall`, how many may start at `now` (all of it unpaced), and
        when none may yet, in how many seconds one may (the refill then looks again)."""
        gap = self.policy.start_gap_s
        if not gap or shortfall <= 0:
            return shortfall, None
        if starting:
            # One of the buffer's on its way is counted against it; a start for a waiting
            # creation is a process starting now too, so the buffer's waits for its end.
            return min(1, max(0, starting - waiting)), None
        wait = last_start_end + gap - now
        return (1, None) if wait <= 0 else (0, wait)

    def fall_back_passes(self) -> tuple[float, ...]:
        """After a creation, when (seconds after it, one after the other) the refill looks
        again: once the ramp is over, to grow the buffer back, once the creation left the
        demand window, and once it left the trend's window too, to let the pool fall back."""
        quiet = self.policy.quiet_s
        if 0 < quiet < DEMAND_WINDOW_S:
            return (quiet + 0.1, DEMAND_WINDOW_S - quiet + 0.4, DEMAND_WINDOW_S)
        return (DEMAND_WINDOW_S + 0.5, DEMAND_WINDOW_S)
