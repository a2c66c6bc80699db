"""Bot levels: the host's `bot_level` setting (engine.settings) as the bots' pace knob and
policy parameters. Measured by `python -m engine.tournament --levels`.

- relaxed: a slow, trusting table for newcomers. Bots move at under half a human pace (their
  swaps, reactions and calls all wait longer), accuse only when nearly certain, and never show
  decoys, so a newcomer has time to find a carré, show the sign and be heard.
- normal: the bots as they always played.
- sharp: faster than a human pace, quicker to accuse, more decoys.

Where a table starts (issue 46): a new private table and a Play-now table open at relaxed while
the player who opens it has won fewer than `engine.settings.NEWCOMER_WINS` (3) finished matches
(rated or not, never at a practice table), at normal after that; a creation that names a level
gets that one. The host sees it in the lobby and changes it there; a Play-now table has no
host, so its opener's count decides for it (docs/protocol.md, Tables).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.bots.smart import CONTRE_THRESHOLD, DECOY_CHANCE
from engine.settings import BOT_LEVELS, DEFAULT_BOT_LEVEL


@dataclass(frozen=True, slots=True)
class Level:
    pace: float  # multiplies the bot's speed knob (engine.bots.pacing): < 1 is slower
    contre_threshold: float  # P(a team holds a carré) above which a smart bot calls Contre!
    decoy_chance: float  # rounds in which a smart bot shows a decoy on its floor


LEVELS: dict[str, Level] = {
    "relaxed": Level(pace=0.4, contre_threshold=0.95, decoy_chance=0.0),
    "normal": Level(pace=1.0, contre_threshold=CONTRE_THRESHOLD, decoy_chance=DECOY_CHANCE),
    "sharp": Level(pace=1.5, contre_threshold=0.45, decoy_chance=0.5),
}
assert tuple(LEVELS) == BOT_LEVELS


def level(name: str = DEFAULT_BOT_LEVEL) -> Level:
    """The named level; ValueError for a name that is not one of BOT_LEVELS."""
    try:
        return LEVELS[name]
    except KeyError:
        raise ValueError(f"unknown bot level {name!r}; choose from {list(LEVELS)}") from None
