"""Who arrives when in a burst (loadtests/burst.py), and what became of each player."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

TABLE_SIZE = 4  # a host and three friends


@dataclass
class Plan:
    """Who arrives when: player `i` at `at` seconds into the window."""

    i: int
    kind: str  # "host", "friend" or "quick"
    at: float
    group: int | None = None
    seat: int | None = None  # a friend's seat at its host's table


def plan(
    players: int, window: float, table_share: float, quick_share: float, seed: int
) -> list[Plan]:
    """Groups of four (host first) for the table share, quick play for the rest."""
    if table_share < 0 or quick_share < 0 or table_share + quick_share <= 0:
        raise ValueError("the shares must be ≥ 0 and not both 0")
    rng = random.Random(seed)
    tabled = round(players * table_share / (table_share + quick_share) / TABLE_SIZE) * TABLE_SIZE
    tabled = min(tabled, players - players % TABLE_SIZE)
    times = [rng.uniform(0, window) for _ in range(players)]
    out: list[Plan] = []
    for g in range(tabled // TABLE_SIZE):
        when = sorted(times[g * TABLE_SIZE : (g + 1) * TABLE_SIZE])
        out.append(Plan(g * TABLE_SIZE, "host", when[0], g, 0))
        for s in range(1, TABLE_SIZE):
            out.append(Plan(g * TABLE_SIZE + s, "friend", when[s], g, s))
    out += [Plan(i, "quick", times[i]) for i in range(tabled, players)]
    return sorted(out, key=lambda p: p.at)


class Failed(Exception):
    """A player's journey ended without a seat; `kind` groups it in the report."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


@dataclass
class Outcome:
    plan: Plan
    arrived: float = 0.0  # loop time
    late_s: float = 0.0  # how far behind its scheduled moment this script started it
    seated_s: float | None = None
    failure: Failed | None = None
    refusals: list[str] = field(default_factory=list)
    waited_for_link: bool = False
    thought_s: float = 0.0  # the friend's look at the table: not the server's time
