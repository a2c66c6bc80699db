"""A stand-in for a new player, to measure bot levels against (`engine.tournament --levels`).

It plays as the hints tell a newcomer to (engine.hints) — collect four of a rank, then take the
floor and show the team's sign, straight after the swap that completed the carré — and calls
Quatro! when its partner shows the sign, whatever its own hand holds (the call judges the
partner's hand, R15; the hints say so too). What makes it a person rather than a slow bot:

- its own reaction times (engine.bots.pacing): a little slower than a practised player at the
  ordinary moves; a little quicker to see a card it wants in the centre, which is all it
  watches (a practised player reads the others' floors and signs too); its Quatro!, once it
  has noticed the sign, as quick as a prompted person's (the hint says "call Quatro!"), with a
  long tail;
- misses: each time the partner shows the sign, it may not notice (MISS); it may notice the
  next emission, 5 s later;
- slips: now and then a swap that helps nothing (SLIP), a card taken and put down for no gain;
- it does not read the table: it keeps no track of who took what beyond a few seconds, does not
  work out its partner's carré from the swaps, never calls Contre!, never shows a decoy, never
  asks for a reshuffle and never answers a vote (silence refuses it, R19).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.bots.base import Intent
from engine.bots.pacing import Reaction
from engine.bots.smart import SmartBot, has_carre
from engine.config import Timings

NEVER = 2.0  # a Contre! threshold no chance reaches
PACE = 0.8  # a little slower than a practised player at the ordinary moves
CALL = Reaction(floor_ms=900, median_ms=1_900, sigma=0.55)
MISS = 0.3  # the partner's sign goes unnoticed this often, each time it is shown
SLIP = 0.1  # swaps that help nothing
MEMORY_MS = 8_000  # who took what, on average: it hardly tracks the swaps
NOTICE = Reaction(floor_ms=2_500, median_ms=10_000, sigma=0.6)  # a card it wants, in the centre


class NewcomerBot(SmartBot):
    kind = "newcomer"

    def __init__(
        self,
        seat: int,
        players: int,
        *,
        seed: int,
        speed: float = 1.0,
        timings: Timings | None = None,
    ) -> None:
        super().__init__(
            seat,
            players,
            seed=seed,
            speed=speed,
            timings=timings,
            contre_threshold=NEVER,
            decoy_chance=0.0,
            tempo=PACE,
            call=CALL,
            memory_ms=MEMORY_MS,
            notice=NOTICE,
        )
        self._slip = False
        self._slip_pick = 0

    def _heard_sign(self, at: int) -> None:
        if self.rng.random() >= MISS:
            super()._heard_sign(at)

    def _partner_surely_has_carre(self) -> bool:
        return False

    def _swapped(self, event: Mapping[str, Any], at: int) -> None:
        super()._swapped(event, at)
        self._one_away_at = None  # a newcomer takes the floor once the carré is there
        if has_carre(self.model.hand):
            self._carre_at = at + self.pace.reaction(self.rng)
        self._draw_slip()

    def _new_deal(self, at: int) -> None:
        super()._new_deal(at)
        self._draw_slip()

    def _draw_slip(self) -> None:
        self._slip = self.rng.random() < SLIP
        self._slip_pick = self.rng.getrandbits(32)

    def _plan_swap(self) -> list[Intent]:
        m = self.model
        if not self._slip or len(m.center) != 4 or has_carre(m.hand):
            return super()._plan_swap()
        target = self.target
        wasted = [
            (card, slot)
            for card in m.hand
            if card.rank != target
            for slot, there in enumerate(m.center)
            if there.rank not in (target, card.rank)
        ]
        if not wasted:
            return super()._plan_swap()
        card, slot = random.Random(self._slip_pick).choice(wasted)
        at = max(m.swap_ready_at + self._swap_gap, self._slot_seen[slot])
        return [Intent(self._swap(card, slot), at)]

    def _plan_reshuffle(self) -> list[Intent]:
        return []
