"""Bot levels: the host's `bot_level` setting (engine.settings) as a set of human limits — how
fast a bot moves, how soon it sees a card it wants in the centre, how soon after the evidence it
calls, how long it remembers who took what, how sure it must be to accuse — each level a promise
about how strong an opponent feels, measured against a newcomer by `python -m engine.tournament
--levels` (docs/performance.md, "Bot levels against a newcomer").

- relaxed: a slow, trusting table for newcomers. Bots move at 0.7 of a human pace, see a card
  they want 15 s after it arrives (median), call no sooner than 4 s after what they react to,
  forget who took a card within seconds, accuse only when nearly certain and never show decoys,
  so a newcomer has time to find a carré, show the sign and be heard.
- normal: a practised player (engine.bots.pacing's CALL, ACCUSE, NOTICE): sees a wanted card
  12 s after it arrives (median), calls 2 s or more after the evidence and accuses 3 s or more
  after it, remembers the takes of the last minute or so, accuses when fairly sure.
- sharp: twice a human pace, sees a wanted card within seconds, calls from 1.2 s, quick to
  accuse, remembers every take, more decoys.

Where a table starts (issue 46): a new private table and a Play-now table open at relaxed while
the player who opens it has won fewer than `engine.settings.NEWCOMER_WINS` (3) finished matches
(rated or not, never at a practice table), at normal after that; a creation that names a level
gets that one. The host sees it in the lobby and changes it there; a Play-now table has no
host, so its opener's count decides for it (docs/protocol.md, Tables).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.bots.pacing import ACCUSE, CALL, NOTICE, Reaction
from engine.bots.smart import CONTRE_THRESHOLD, DECOY_CHANCE, MEMORY_MS
from engine.settings import BOT_LEVELS, DEFAULT_BOT_LEVEL


@dataclass(frozen=True, slots=True)
class Level:
    pace: float  # the tempo of ordinary moves (engine.bots.pacing): < 1 is slower
    contre_threshold: float  # P(a team holds a carré) above which a smart bot calls Contre!
    decoy_chance: float  # rounds in which a smart bot shows a decoy on its floor
    call: Reaction = CALL  # from the partner's sign (or swap) to Quatro!
    accuse: Reaction = ACCUSE  # from the accused team's last swap or emission to Contre!
    notice: Reaction = NOTICE  # from a card's arrival in the centre to having seen it
    memory_ms: int | None = MEMORY_MS  # a seen take stays in mind this long on average; None: ever


LEVELS: dict[str, Level] = {
    "relaxed": Level(
        pace=0.7,
        contre_threshold=0.95,
        decoy_chance=0.0,
        call=Reaction(floor_ms=4_000, median_ms=4_500, sigma=0.35),
        accuse=Reaction(floor_ms=5_000, median_ms=7_500, sigma=0.45),
        notice=Reaction(floor_ms=4_000, median_ms=15_000, sigma=0.5),
        memory_ms=15_000,
    ),
    "normal": Level(pace=1.0, contre_threshold=CONTRE_THRESHOLD, decoy_chance=DECOY_CHANCE),
    "sharp": Level(
        pace=2.0,
        contre_threshold=0.45,
        decoy_chance=0.5,
        call=Reaction(floor_ms=1_200, median_ms=1_700, sigma=0.35),
        accuse=Reaction(floor_ms=1_300, median_ms=2_200, sigma=0.4),
        notice=Reaction(floor_ms=800, median_ms=2_500, sigma=0.5),
        memory_ms=None,
    ),
}
assert tuple(LEVELS) == BOT_LEVELS


def level(name: str = DEFAULT_BOT_LEVEL) -> Level:
    """The named level; ValueError for a name that is not one of BOT_LEVELS."""
    try:
        return LEVELS[name]
    except KeyError:
        raise ValueError(f"unknown bot level {name!r}; choose from {list(LEVELS)}") from None
