"""The floor of strength: a legal move drawn at random every few seconds, at a human pace.

It swaps mostly, plays with the floor and emojis now and then, and rarely calls or asks for a
reshuffle. Its choices are drawn from `engine.legal`, so it tries everything a player may do.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.bots.base import Bot, Intent
from engine.commands import (
    CallContre,
    CallQuatro,
    CastVote,
    ChooseSign,
    Command,
    Emit,
    NextRound,
    Ready,
    RequestVote,
    SetFloor,
    Swap,
)
from engine.config import Timings
from engine.legal import legal_for
from engine.phase import Phase

# Relative weights of each kind of move while playing. Calls are rare: a random call is almost
# always wrong, and one ends the round.
WEIGHTS: dict[type[Command], float] = {
    Swap: 80.0,
    SetFloor: 8.0,
    Emit: 7.0,
    RequestVote: 0.6,
    CallQuatro: 0.15,
    CallContre: 0.15,
    CastVote: 0.0,  # bots never vote (R19)
    Ready: 50.0,
    ChooseSign: 30.0,
    NextRound: 100.0,
}


class RandomBot(Bot):
    kind = "random"

    def __init__(
        self,
        seat: int,
        players: int,
        *,
        seed: int,
        speed: float = 1.0,
        timings: Timings | None = None,
    ) -> None:
        super().__init__(seat, players, seed=seed, speed=speed, timings=timings)
        self._think_at = 0
        self._pick_seed = 0
        self._next_think(0)

    def on_sync(self, now: int) -> None:
        self._next_think(now)

    def invalidates(self, event: Mapping[str, Any]) -> bool:
        """Another seat's floor or emission never changes what it may do; another seat's swap
        matters only when it changes the slot this bot means to swap with."""
        kind = event.get("type")
        if kind in ("floor", "emission", "ready", "voted"):
            return event.get("seat") == self.seat
        if kind == "swapped" and event.get("seat") != self.seat:
            planned = self._plan.command if self._plan is not None else None
            return isinstance(planned, Swap) and planned.slot == event.get("slot")
        return True

    def on_event(self, event: Mapping[str, Any], at: int) -> None:
        kind = event.get("type")
        if kind in ("round", "signing", "reshuffled", "pause"):
            self._next_think(at)

    def on_sent(self, command: Command, now: int) -> None:
        self._next_think(now)

    def _next_think(self, now: int) -> None:
        self._think_at = now + self.pace.think(self.rng)
        self._pick_seed = self.rng.getrandbits(32)

    def plan(self, now: int) -> Intent | None:
        if self.model.phase in (Phase.LOBBY, Phase.OVER):
            return None
        at = max(self._think_at, now)
        if self.model.phase is Phase.PLAYING:
            at = max(at, self.model.swap_ready_at)  # mostly it swaps: wait until it may
        options = [
            c for c in legal_for(self.model.seat_view(), at) if WEIGHTS.get(type(c), 0.0) > 0
        ]
        if not options:
            return None
        # Weights per kind, shared among that kind's commands.
        per_kind: dict[type[Command], int] = {}
        for c in options:
            per_kind[type(c)] = per_kind.get(type(c), 0) + 1
        weights = [WEIGHTS[type(c)] / per_kind[type(c)] for c in options]
        pick = random.Random(self._pick_seed).choices(options, weights)[0]
        return Intent(pick, at)
