"""What a watcher of the whole table can time in each round, for `engine.tournament --levels`:
how long each round's play lasted, the longest stretch in which nobody took a centre card, who
asked for a reshuffle, and how long after the evidence each call came.

A call's reaction time runs from the latest public event the call can be reacting to: for
Quatro!, the caller's partner's last swap or emission before the call (the sign, or the swap that
completed a carré, R15); for Contre!, the last swap or emission by either player of the accused
team (R17). When that seat or team did nothing since the deal, it runs from the deal. Only public
events are read (the watchers' stream), so nothing here needs a hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.events import Outbound
from engine.seating import partner, team_seats


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), interpolated between the nearest ranks; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass(frozen=True, slots=True)
class CallTiming:
    kind: str  # "quatro" or "contre"
    seat: int
    reaction_ms: int


@dataclass(frozen=True, slots=True)
class Ending:
    reason: str  # "quatro", "contre" or "timeout"
    by: int | None
    target_team: int | None
    correct: bool | None
    carres: tuple[int, ...]  # the seats that held a carré when the round ended


@dataclass(slots=True)
class RoundWatch:
    """Fed every outbound event of one table (`listen`)."""

    players: int
    round_ms: list[int] = field(default_factory=list)
    still_ms: list[int] = field(default_factory=list)  # per round: longest stretch with no swap
    calls: list[CallTiming] = field(default_factory=list)
    endings: list[Ending] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)  # who asked for each reshuffle vote (R19)
    _opened_at: int | None = None
    _moved_at: int = 0
    _still: int = 0
    _dealt_at: int = 0
    _last_public: dict[int, int] = field(default_factory=dict)  # seat -> its last swap/emission

    def listen(self, o: Outbound, wire: dict[str, Any]) -> None:
        if not o.to.public:
            return  # each private event has a public twin, or says nothing a watcher may time
        kind = wire["type"]
        at = o.at
        if kind == "round":
            self._opened_at = at
            self._deal(at)
            self._moved_at = at
            self._still = 0
        elif self._opened_at is None:
            return
        elif kind == "reshuffled":
            self._moved(at)
            self._deal(at)
        elif kind == "swapped":
            self._moved(at)
            self._last_public[int(wire["seat"])] = at
        elif kind == "emission":
            self._last_public[int(wire["seat"])] = at
        elif kind == "vote":
            self.requests.append(int(wire["by"]))
        elif kind == "reveal":
            self._moved(at)
            self.round_ms.append(at - self._opened_at)
            self.still_ms.append(self._still)
            self.endings.append(
                Ending(
                    reason=str(wire["reason"]),
                    by=wire["by"],
                    target_team=wire["target_team"],
                    correct=wire["correct"],
                    carres=tuple(wire["carres"]),
                )
            )
            self._call(wire, at)
            self._opened_at = None

    def _deal(self, at: int) -> None:
        self._dealt_at = at
        self._last_public = {}

    def _moved(self, at: int) -> None:
        self._still = max(self._still, at - self._moved_at)
        self._moved_at = at

    def _call(self, wire: dict[str, Any], at: int) -> None:
        reason = wire["reason"]
        if reason not in ("quatro", "contre"):
            return
        by = int(wire["by"])
        if reason == "quatro":
            watched: tuple[int, ...] = (partner(by, self.players),)
        else:
            watched = team_seats(int(wire["target_team"]), self.players)
        evidence = max((self._last_public.get(s, self._dealt_at) for s in watched), default=at)
        self.calls.append(CallTiming(reason, by, at - evidence))
