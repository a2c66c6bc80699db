"""Bot seats, played on the table actor's own clock (R29: same rules, same cooldowns, no votes).

Until `engine.bots` offers a policy, a bot plays the simplest legal way: now and then it swaps a
card of a rank it holds least of for a centre card of the rank it holds most of. It never calls
and never votes. A bot only reads `table.view(seat)`, so it knows no more than a human would.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine import Command, Swap, Table
from engine.phase import Phase

THINK_MS = 2_500  # between two looks at the table, before time_scale


class BotDriver:
    """When each bot next looks at the table, and what it then does."""

    def __init__(self, table: Table) -> None:
        self._table = table
        self._next: dict[int, int] = {}

    @property
    def think_ms(self) -> int:
        return max(1, round(THINK_MS * self._table.config.time_scale))

    def next_due(self, now: int) -> int | None:
        if self._table.phase is not Phase.PLAYING:
            self._next.clear()
            return None
        for seat in self._table.bot_seats():
            self._next.setdefault(seat, now + self.think_ms * (1 + seat % 3))
        return min(self._next.values(), default=None)

    def due_commands(self, now: int) -> list[Command]:
        """The commands of every bot whose turn to look has come; each looks again later."""
        out: list[Command] = []
        for seat, at in sorted(self._next.items()):
            if at > now:
                continue
            self._next[seat] = now + self.think_ms
            command = choose(self._table.view(seat), seat, now)
            if command is not None:
                out.append(command)
        return out


def choose(view: dict[str, Any], seat: int, now: int) -> Command | None:
    hand = view["hand"]
    center = view["center"]
    if view["phase"] != "playing" or len(hand) != 4 or now < (view["swap_ready_at"] or 0):
        return None
    counts = Counter(card["rank"] for card in hand)
    want, held = counts.most_common(1)[0]
    if held == 4:
        return None
    slot = next((i for i, c in enumerate(center) if c["rank"] == want), None)
    if slot is None:
        return None
    give = min(hand, key=lambda card: (counts[card["rank"]], card["id"]))
    if give["rank"] == want:
        return None
    return Swap(seat=seat, card=give["id"], slot=slot, expect=center[slot]["id"])
