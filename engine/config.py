"""A table's configuration: its size, its seed, the rules' durations, and rigged deals for tests.

`time_scale` and `deals` are how the cluster's test hooks reach the rules: they enter here, so no
other layer needs a special path for them. `tutorial` makes the guided round (engine.tutorial):
its fixed deals come from its script, never from the caller.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields

from engine.cards import PLAYER_COUNTS, ranks_for
from engine.settings import BOT_LEVELS, DEFAULT_BOT_LEVEL
from engine.tutorial import DEALS as TUTORIAL_DEALS


class ScenarioError(ValueError):
    """A configuration the rules cannot play: bad size or scale, or a rigged deal breaking R3/R4."""


@dataclass(frozen=True, slots=True)
class Timings:
    """Every duration of the rules, in milliseconds."""

    signing: int = 30_000  # R6
    swap_cooldown: int = 2_000  # R10
    emission_period: int = 5_000  # R13
    floor_cooldown: int = 2_000  # R14
    vote: int = 20_000  # R19
    vote_gap: int = 30_000  # R20
    round: int = 180_000  # R22
    pause: int = 30_000  # R23

    @classmethod
    def scaled(cls, scale: float) -> Timings:
        base = cls()
        return cls(*(max(1, round(getattr(base, f.name) * scale)) for f in fields(cls)))


WINNING_SCORE = 5  # R28


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ranks_list(value: object, size: int) -> bool:
    return (
        isinstance(value, tuple | list)
        and len(value) == size
        and all(isinstance(rank, str) for rank in value)
    )


def _ranks_lists(value: object, count: int, size: int) -> bool:
    return (
        isinstance(value, tuple | list)
        and len(value) == count
        and all(_ranks_list(hand, size) for hand in value)
    )


@dataclass(frozen=True, slots=True)
class DealSpec:
    """A rigged deal: one hand of four ranks per seat, and four ranks for the centre."""

    hands: tuple[tuple[str, ...], ...]
    center: tuple[str, ...]

    def check(self, players: int) -> None:
        """Raise ScenarioError unless this deal uses exactly the deck of R2 and obeys R3 and R4."""
        if not _ranks_lists(self.hands, players, 4) or not _ranks_list(self.center, 4):
            raise ScenarioError(f"a deal is {players} hands of 4 ranks and 4 centre ranks")
        used = Counter(rank for hand in self.hands for rank in hand)
        used.update(self.center)
        if used != Counter({rank: 4 for rank in ranks_for(players)}):
            raise ScenarioError("a deal must use each rank of the deck exactly four times")
        for seat, hand in enumerate(self.hands):
            if max(Counter(hand).values()) >= 3:
                raise ScenarioError(f"hand {seat} holds three of a rank (R4)")


@dataclass(frozen=True, slots=True)
class TableConfig:
    players: int
    seed: int = 0
    time_scale: float = 1.0
    deals: tuple[DealSpec, ...] = ()
    code: str = ""
    # Quick play (an extension of R29): a public table has no host. It starts by itself once
    # every seat is taken, and `fill_after_ms` after its first player sat down the engine seats
    # bots in the seats still empty and starts it (engine.lobby).
    public: bool = False
    fill_after_ms: int = 60_000
    # A practice table (the home page's: a newcomer and a bot partner against relaxed bots):
    # its matches change nobody's rating (engine.ratings).
    practice: bool = False
    # The level the table's settings start at (engine.settings.start_level picks it for a
    # newcomer's table); the host changes it in the lobby like any setting.
    bot_level: str = DEFAULT_BOT_LEVEL
    # The guided practice round (engine.tutorial): its deals, a practice table's rating (none)
    # and no clock on its phases come with it; a learner in seat 0 and the script's bots.
    tutorial: bool = False
    timings: Timings = field(init=False)

    def __post_init__(self) -> None:
        if not _is_int(self.players) or self.players not in PLAYER_COUNTS:
            raise ScenarioError(f"Quatro is played by 4, 6 or 8 players, not {self.players!r}")
        if not _is_int(self.seed):
            raise ScenarioError("the seed is an integer")
        scale = self.time_scale
        if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale <= 10:
            raise ScenarioError("time_scale must be a number in (0, 10]")
        if not isinstance(self.public, bool):
            raise ScenarioError("public is true or false")
        if not isinstance(self.practice, bool):
            raise ScenarioError("practice is true or false")
        if self.bot_level not in BOT_LEVELS:
            raise ScenarioError(f"bot_level is one of {', '.join(BOT_LEVELS)}")
        if not _is_int(self.fill_after_ms) or not 0 < self.fill_after_ms <= 3_600_000:
            raise ScenarioError("fill_after_ms is an integer in (0, 3600000]")
        if not isinstance(self.tutorial, bool):
            raise ScenarioError("tutorial is true or false")
        if self.tutorial:
            if self.players != 4 or self.public:
                raise ScenarioError("a tutorial is a private table of 4 seats")
            object.__setattr__(self, "practice", True)
            # Its bots are the script's, as slow as the learner: the table says so.
            object.__setattr__(self, "bot_level", "relaxed")
            if not self.deals:
                object.__setattr__(self, "deals", tutorial_deals())
        if not isinstance(self.deals, tuple | list):
            raise ScenarioError("deals are a sequence of DealSpec")
        for deal in self.deals:
            if not isinstance(deal, DealSpec):
                raise ScenarioError("deals are a sequence of DealSpec")
            deal.check(self.players)
        object.__setattr__(self, "timings", Timings.scaled(self.time_scale))


def tutorial_deals() -> tuple[DealSpec, ...]:
    return tuple(DealSpec(hands=hands, center=center) for hands, center in TUTORIAL_DEALS)
