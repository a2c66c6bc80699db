"""How long a table waits, doing nothing, before it stops and its actor serves the next table
(actors/reuse.py), or parks (actors/parking.py): the gateway's settings (`QUATRO_OVER_IDLE`,
`QUATRO_LOBBY_IDLE`, `QUATRO_ABANDONED_IDLE`, `QUATRO_LEFT_IDLE`, `QUATRO_PARK_AFTER`) given to
the table when it opens, kept in its snapshot, and judged by its clock (`Clock.idle_due`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass


@dataclass(frozen=True, slots=True)
class IdleLimits:
    """Seconds a table waits after its last change by someone: `over_s` once its match is over,
    `lobby_s` in its lobby, `abandoned_s` in a match nobody is connected to, and `left_s` once
    every person of a started or finished table has gone from it for good
    (actors/departures.py), whichever of those applies is shorter. `park_s`: how long no
    person may be connected before the table parks (actors/parking.py; 0: never, and so for a
    table opened by a gateway of a release before parking, which could not wake it); it does
    not end the table, whose own wait above goes on while it is parked."""

    over_s: float = 600.0
    lobby_s: float = 600.0
    abandoned_s: float = 1800.0
    left_s: float = 20.0
    park_s: float = 0.0

    @classmethod
    def of(cls, values: Sequence[float]) -> IdleLimits:
        """From the values in that order; an older gateway or snapshot gives fewer (the rest
        keep their defaults), and a newer one may give more (ignored)."""
        given = [float(v) for v in values[: len(astuple(cls()))]]
        return cls(*given, *astuple(cls())[len(given) :])

    def values(self) -> tuple[float, ...]:
        """The values in that order: what `open` takes and the snapshot keeps."""
        return astuple(self)
