"""The contract every bot policy keeps with whoever runs it (the table actor on timers, the
tournament on simulated time, a Locust user over the wire).

    bot.sync(view, now)          a whole snapshot: `table.view(seat)` or `welcome.table`
    bot.observe(event, at)       one event addressed to the bot's seat, as its wire dict
    bot.decide(now) -> Intent    what the bot means to send next and when (`at` >= now), or None
    bot.sent(command, now)       the runner sent it (call this before applying it)
    bot.refused(command, error, now)   the table said no (`error` is `Refusal.to_wire()`)

`decide` does not consume randomness: asking twice with nothing new in between gives the same
answer, so a runner may ask as often as it likes. Feed events before deciding again: a plan made
on an old centre may go stale.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.bots.model import Model
from engine.bots.pacing import Pace
from engine.commands import Command, Emit
from engine.config import Timings


@dataclass(frozen=True, slots=True)
class Intent:
    command: Command
    at: int


class Bot(ABC):
    """A seat's player with a policy. It knows only its seat's view and events (R30)."""

    kind = "bot"

    def __init__(
        self,
        seat: int,
        players: int,
        *,
        seed: int,
        speed: float = 1.0,
        timings: Timings | None = None,
    ) -> None:
        self.model = Model(seat=seat, players=players, timings=timings or Timings())
        self.rng = random.Random(seed)
        self.pace = Pace(speed)
        self._plan: Intent | None = None
        self._dirty = True
        self._hold_until = 0
        self._choice_before: str | None = None
        self.refusals: list[tuple[Command, str]] = []

    @property
    def seat(self) -> int:
        return self.model.seat

    def sync(self, view: Mapping[str, Any], now: int) -> None:
        self.model.sync(view, now)
        self._dirty = True
        self.on_sync(now)

    def observe(self, event: Mapping[str, Any], at: int) -> None:
        self.model.observe(event, at)
        if self.invalidates(event):
            self._dirty = True
        self.on_event(event, at)

    def decide(self, now: int) -> Intent | None:
        if self._dirty or self._plan is None:
            self._plan = self.plan(now)
            self._dirty = False
        plan = self._plan
        if plan is None:
            return None
        at = max(plan.at, now, self._hold_until)
        return plan if at == plan.at else Intent(plan.command, at)

    def sent(self, command: Command, now: int) -> None:
        self._plan = None
        self._dirty = True
        if isinstance(command, Emit):
            # No event says what the floor will show next (R13), so remember the choice here.
            self._choice_before = self.model.choice
            self.model.choice = command.emoji
        self.on_sent(command, now)

    def refused(self, command: Command, error: Mapping[str, Any], now: int) -> None:
        """Take the table's word for it, and do not send the same thing again at once."""
        code = str(error.get("code"))
        if isinstance(command, Emit):
            self.model.choice = self._choice_before
        self.refusals.append((command, code))
        retry_in = error.get("retry_in")
        model = self.model
        if code == "cooldown" and isinstance(retry_in, int):
            model.swap_ready_at = now + retry_in
        elif code == "floor_cooldown" and isinstance(retry_in, int):
            model.floor_ready_at = now + retry_in
        elif code == "vote_refused":
            wait = retry_in if isinstance(retry_in, int) else model.timings.vote_gap
            model.last_vote_end = now + wait - model.timings.vote_gap
        self._hold_until = now + self.pace.quick(self.rng)
        self._dirty = True

    # -- the policy ---------------------------------------------------------------------------
    @abstractmethod
    def plan(self, now: int) -> Intent | None:
        """The next command and its time, from the model alone; must not consume randomness."""

    def invalidates(self, event: Mapping[str, Any]) -> bool:
        """Whether this event may change the plan (a policy may skip re-planning otherwise)."""
        return True

    def on_sync(self, now: int) -> None:
        """Draw whatever the policy needs after a snapshot."""
        return None

    def on_event(self, event: Mapping[str, Any], at: int) -> None:
        """Draw whatever the policy needs after an event (reaction times, for instance)."""
        return None

    def on_sent(self, command: Command, now: int) -> None:
        """Draw whatever the policy needs after it acted."""
        return None
