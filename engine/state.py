"""The table's mutable state. Only the engine's handlers touch it; everything leaves through events
and views, which pick what each seat may see."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from engine.cards import Card, deck_for
from engine.config import TableConfig, Timings
from engine.errors import ErrorCode, Refusal
from engine.events import Coached, Reveal
from engine.phase import Phase
from engine.seating import partner, team_of, team_seats, teams
from engine.settings import TableSettings

HOST_SEAT = 0  # the creator sits in seat 0 and hosts (PROTOCOL.md: `host` is always a seat)


@dataclass(slots=True)
class SeatState:
    kind: str | None = None  # "human", "bot", or None for an empty seat
    player_id: str | None = None
    name: str | None = None
    connected: bool = False
    ready: bool = False
    hand: list[Card] = field(default_factory=list)
    swap_ready_at: int = 0
    floor_open: bool = False
    floor_ready_at: int = 0
    choice: str | None = None  # the emoji this seat emits while it holds the floor
    next_emission_at: int | None = None
    last_emission_at: int | None = None
    last_emitted: str | None = None
    # Cards of each rank this seat took from the centre minus those it put there, since its hand
    # was dealt (a round's deal or a reshuffle); ranks at zero are left out. Public: every swap
    # is seen by the whole table (R9). A carré needs two of its rank from the centre (R4), so
    # this is what the table can know of who might hold one (engine.hints).
    net_taken: dict[str, int] = field(default_factory=dict)

    @property
    def is_human(self) -> bool:
        return self.kind == "human"

    def reset_for_round(self) -> None:
        """R23: cooldowns and floors start afresh with every round."""
        self.ready = self.kind == "bot"
        self.hand = []
        self.net_taken = {}
        self.swap_ready_at = 0
        self.floor_open = False
        self.floor_ready_at = 0
        self.choice = None
        self.next_emission_at = None
        self.last_emission_at = None
        self.last_emitted = None

    def close_floor(self) -> None:
        self.floor_open = False
        self.choice = None
        self.next_emission_at = None


@dataclass(slots=True)
class Claim:
    """A request for a bot's seat during the match (engine.latejoin)."""

    player_id: str
    name: str
    approved: bool = False


@dataclass(slots=True)
class VoteState:
    by: int
    voters: tuple[int, ...]
    deadline: int
    accepted: set[int] = field(default_factory=set)


RECENT_EMISSIONS = 8  # of the round, in views


@dataclass(slots=True)
class TableState:
    config: TableConfig
    rng: random.Random
    seats: list[SeatState]
    phase: Phase = Phase.LOBBY
    round: int = 0
    center: list[Card] = field(default_factory=list)
    signs: list[str | None] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    deadline: int | None = None  # the phase's own deadline (signing, round, pause)
    vote: VoteState | None = None
    reshuffled: bool = False
    last_vote_end: int | None = None
    deals_used: int = 0
    last_reveal: Reveal | None = None
    winners: tuple[int, ...] | None = None
    # The round's latest emissions, oldest first: (seat, emoji, at). Public (R13: everyone sees
    # them), kept so that a reloaded page shows what it had shown.
    emissions: list[tuple[int, str, int]] = field(default_factory=list)
    settings: TableSettings = field(default_factory=TableSettings)
    claims: dict[int, Claim] = field(default_factory=dict)  # bot seat -> the request for it
    # The matches begun at this table (a rematch begins the next), and who held each seat when
    # the present one began (a player id, None for a bot): a seat whose holder differs at the
    # end was taken during the match (engine.ratings rates only those who played it all).
    match: int = 0
    lineup: tuple[str | None, ...] = ()
    ended_at: int = 0  # when the last match ended (the table's clock)
    # A tutorial's last instruction to its learner (engine.coach): a new one is told when it
    # differs.
    coached: Coached | None = None

    @classmethod
    def new(cls, config: TableConfig) -> TableState:
        n = config.players
        return cls(
            config=config,
            rng=random.Random(config.seed),
            seats=[SeatState() for _ in range(n)],
            signs=[None] * teams(n),
            scores=[0] * teams(n),
            settings=TableSettings(bot_level=config.bot_level),
        )

    @property
    def players(self) -> int:
        return self.config.players

    @property
    def timings(self) -> Timings:
        return self.config.timings

    @property
    def deck(self) -> tuple[Card, ...]:
        return deck_for(self.config.players)

    def team_of(self, seat: int) -> int:
        return team_of(seat, self.players)

    def partner(self, seat: int) -> int:
        return partner(seat, self.players)

    def team_seats(self, team: int) -> tuple[int, int]:
        return team_seats(team, self.players)

    def due(self, t: int, duration: int) -> int | None:
        """When a phase that starts at `t` and lasts `duration` ends; None at a tutorial table,
        whose phases have no clock (engine.tutorial, docs/rules.md)."""
        return None if self.config.tutorial else t + duration

    def connected_humans(self) -> list[int]:
        return [s for s, st in enumerate(self.seats) if st.is_human and st.connected]

    def require_phase(self, *phases: Phase) -> None:
        if self.phase not in phases:
            raise Refusal(
                ErrorCode.WRONG_PHASE,
                f"not now: the table is in {self.phase}, this needs {' or '.join(phases)}",
            )

    @property
    def public(self) -> bool:
        return self.config.public

    def require_host(self, seat: int) -> None:
        if self.public:
            # Quick play: nobody hosts a public table, so nobody adds or removes bots, frees
            # another's seat, changes the settings, starts or restarts the match.
            raise Refusal(ErrorCode.NOT_ALLOWED, "a public table has no host")
        if seat != HOST_SEAT:
            raise Refusal(ErrorCode.NOT_HOST, "only the host may do this")

    @staticmethod
    def require_player(player_id: object, name: object) -> tuple[str, str]:
        """Who takes a seat (in the lobby, or a bot's when joining late): a player and a name."""
        if (
            not isinstance(player_id, str)
            or not player_id
            or not isinstance(name, str)
            or not name.strip()
        ):
            raise Refusal(ErrorCode.BAD_MESSAGE, "a seat needs a player and a name")
        return player_id, name

    def require_seat_number(self, seat: object) -> int:
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < self.players:
            raise Refusal(ErrorCode.BAD_SEAT, f"seats are numbered 0 to {self.players - 1}")
        return seat
