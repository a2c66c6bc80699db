"""The host's table settings (an extension, not in the rule book): how hard the bots play and
whether players get hints. Chosen in the lobby, or between matches for the next one (never
during a match: engine.lobby.change_settings); no rule of R1–R30 reads them.

    bot_level   "relaxed" | "normal" | "sharp": engine.bots.levels turns it into the bots'
                pace and policy parameters. A table starts at its `TableConfig.bot_level`:
                the server picks `start_level` for a newcomer's tables (issue 46)
    hints       whether each player's screen points out what their own view shows (a carré in
                their hand, their team's sign, a tip in the first round): engine.hints
    watchers    whether people without a seat may watch the table (the public view only, R30);
                the only setting the host may change during the match too
    late_join   "ask" | "always" | "never": whether someone who arrives after the start may take
                a bot's seat (engine.latejoin, an extension of R29): the host answers each
                request, every request is granted, or none may be made
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import ErrorCode, Refusal
from engine.events import Wire

BOT_LEVELS = ("relaxed", "normal", "sharp")
DEFAULT_BOT_LEVEL = "normal"
NEWCOMER_LEVEL = "relaxed"
# Finished matches a player must have won (rated or not, never at a practice table) before the
# tables they open stop starting at NEWCOMER_LEVEL. Three: a win against relaxed bots means the
# player found a carré and was heard, or caught one; three of them are no longer luck, and at
# a newcomer's first-week pace (a match or two a day) the relaxed start lasts days, not weeks.
NEWCOMER_WINS = 3
LATE_JOIN = ("ask", "always", "never")
DEFAULT_LATE_JOIN = "ask"


@dataclass(slots=True)
class TableSettings:
    bot_level: str = DEFAULT_BOT_LEVEL
    hints: bool = True
    watchers: bool = True
    late_join: str = DEFAULT_LATE_JOIN

    def to_wire(self) -> dict[str, Wire]:
        return {
            "bot_level": self.bot_level,
            "hints": self.hints,
            "watchers": self.watchers,
            "late_join": self.late_join,
        }

    @classmethod
    def from_wire(cls, raw: object) -> TableSettings:
        """A snapshot's settings; a snapshot saved before settings existed gets the defaults."""
        if not isinstance(raw, dict):
            return cls()
        return cls(
            bot_level=str(raw["bot_level"]),
            hints=bool(raw["hints"]),
            # Saved before watchers or late joining could be set: the defaults.
            watchers=bool(raw.get("watchers", True)),
            late_join=str(raw.get("late_join", DEFAULT_LATE_JOIN)),
        )


def start_level(wins: int) -> str:
    """The bot level a new table of a player who has won `wins` finished matches starts at,
    unless its creator names one: NEWCOMER_LEVEL until NEWCOMER_WINS, then the default. The host
    changes it in the lobby as any setting (engine.lobby)."""
    return NEWCOMER_LEVEL if wins < NEWCOMER_WINS else DEFAULT_BOT_LEVEL


def check_bot_level(value: object) -> str:
    """The level named, or Refusal `bad_message` for anything but one of BOT_LEVELS."""
    if not isinstance(value, str) or value not in BOT_LEVELS:
        raise Refusal(ErrorCode.BAD_MESSAGE, f"bot_level is one of {', '.join(BOT_LEVELS)}")
    return value


def check_hints(value: object) -> bool:
    if not isinstance(value, bool):
        raise Refusal(ErrorCode.BAD_MESSAGE, "hints is true or false")
    return value


def check_watchers(value: object) -> bool:
    if not isinstance(value, bool):
        raise Refusal(ErrorCode.BAD_MESSAGE, "watchers is true or false")
    return value


def check_late_join(value: object) -> str:
    if not isinstance(value, str) or value not in LATE_JOIN:
        raise Refusal(ErrorCode.BAD_MESSAGE, f"late_join is one of {', '.join(LATE_JOIN)}")
    return value
