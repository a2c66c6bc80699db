"""A stand-in for a new player, to measure bot levels against (`engine.tournament --levels`):
it plays as the hints tell a newcomer to — collect four of a rank, then show the team's sign —
and calls Quatro! when its partner shows the sign, whatever its own hand holds (the call judges
the partner's hand, R15; the hints say so too), all at a beginner's pace. It never calls
Contre!, never shows a decoy and never asks for a reshuffle: a newcomer does not read the table
yet.
"""

from __future__ import annotations

from engine.bots.base import Intent
from engine.bots.smart import SmartBot
from engine.config import Timings

NEVER = 2.0  # a Contre! threshold no chance reaches
PACE = 0.5  # half a practised human's pace


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
            speed=speed * PACE,
            timings=timings,
            contre_threshold=NEVER,
            decoy_chance=0.0,
        )

    def _plan_reshuffle(self) -> list[Intent]:
        return []
