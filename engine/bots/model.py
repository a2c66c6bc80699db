"""What a bot knows: its seat's view, kept current from the events addressed to it, plus what it
can deduce from public swaps about where each card is.

The model is fed only `table.view(seat)` (or the `welcome` snapshot) and the wire dicts of events
whose audience includes the seat, so by construction it never holds another seat's hand or
another team's sign before the reveal (R30). Every swap is public (R9), so a card taken from the
centre is known to sit in its taker's hand until that seat puts it down again — or until the bot
forgets it: a policy that plays like a person gives each take it sees a span (`remember`), and
`fade` drops what has outlived it, so what the estimate and the plan read is what a person at
that level would still have in mind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.config import Timings
from engine.legal import CardView, SeatRow, SeatView, VoteView
from engine.phase import Phase
from engine.seating import partner, team_of, team_seats, teams

Wire = Mapping[str, Any]


@dataclass(slots=True)
class Emission:
    at: int
    seat: int
    emoji: str


@dataclass(slots=True)
class SwapSeen:
    at: int
    seat: int
    placed: CardView
    taken: CardView


@dataclass(slots=True)
class Model:
    seat: int
    players: int
    timings: Timings
    phase: Phase = Phase.LOBBY
    round: int = 0
    hand: list[CardView] = field(default_factory=list)
    center: list[CardView] = field(default_factory=list)
    sign: str | None = None
    deadline: int | None = None
    swap_ready_at: int = 0
    floor_ready_at: int = 0
    choice: str | None = None
    last_emission_at: int | None = None
    floors: list[bool] = field(default_factory=list)
    kinds: list[str | None] = field(default_factory=list)
    connected: list[bool] = field(default_factory=list)
    ready: list[bool] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    vote: VoteView | None = None
    reshuffled: bool = False
    last_vote_end: int | None = None
    vote_round: int | None = None  # the round of the last reshuffle vote anyone asked for
    opened_at: int = 0  # when this round opened, or its cards were last dealt
    dealt_at: int = 0
    # Deduced from public swaps since the last deal: card id -> seat known to hold it.
    holder: dict[str, int] = field(default_factory=dict)
    # When each remembered holding is forgotten (a card absent here is remembered for good).
    forget_at: dict[str, int] = field(default_factory=dict)
    # Ranks each seat has put down since the last deal (a seat that lets go of a rank is not
    # chasing it).
    placed_ranks: list[set[str]] = field(default_factory=list)
    emissions: list[Emission] = field(default_factory=list)
    swaps: list[SwapSeen] = field(default_factory=list)
    last_swap_at: list[int | None] = field(default_factory=list)
    revealed: Wire | None = None
    # Whether this bot saw the cards dealt (rather than joining from a snapshot mid-round): then
    # every hand started without three of a rank (R4), and what a seat took since is all known.
    saw_deal: bool = False
    # Over the whole match: how often each seat's take had the rank of its previous take. A
    # player who collects a rank repeats it; one who swaps at random rarely does.
    takes_alike: list[int] = field(default_factory=list)
    takes_seen: list[int] = field(default_factory=list)
    last_taken_rank: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = self.players
        self.floors = [False] * n
        self.kinds = [None] * n
        self.connected = [False] * n
        self.ready = [False] * n
        self.scores = [0] * teams(n)
        self.takes_alike = [0] * n
        self.takes_seen = [0] * n
        self._reset_deal(0)

    # -- geometry -----------------------------------------------------------------------------
    @property
    def team(self) -> int:
        return team_of(self.seat, self.players)

    @property
    def partner(self) -> int:
        return partner(self.seat, self.players)

    def team_seats(self, team: int) -> tuple[int, int]:
        return team_seats(team, self.players)

    def opposing_teams(self) -> tuple[int, ...]:
        return tuple(k for k in range(teams(self.players)) if k != self.team)

    # -- feeding ------------------------------------------------------------------------------
    def sync(self, view: Mapping[str, Any], now: int) -> None:
        """Take a whole snapshot as the truth (R25); deductions from swaps start again."""
        sv = SeatView.parse(view, self.seat)
        self.phase = sv.phase
        self.round = sv.round
        self.hand = list(sv.hand)
        self.center = list(sv.center)
        self.sign = sv.sign
        self.deadline = sv.deadline
        self.swap_ready_at = sv.swap_ready_at
        self.floor_ready_at = sv.floor_ready_at
        self.choice = sv.choice
        self.floors = [row.floor for row in sv.seats]
        self.kinds = [row.kind for row in sv.seats]
        self.connected = [row.connected for row in sv.seats]
        self.ready = [row.ready for row in sv.seats]
        self.scores = list(sv.scores) or [0] * teams(self.players)
        self.vote = sv.vote
        self.vote_round = sv.round if sv.vote is not None else None
        self.reshuffled = sv.reshuffled
        if sv.phase is Phase.PLAYING:
            self.opened_at = now
        self._reset_deal(now)
        self.saw_deal = False

    def observe(self, event: Wire, at: int) -> None:
        """Fold one event addressed to this seat into what it knows."""
        kind = event.get("type")
        handler = _HANDLERS.get(str(kind))
        if handler is not None:
            handler(self, event, at)

    def remember(self, card_id: str, until: int) -> None:
        """Forget at `until` which seat holds this card (if it is still known by then)."""
        if card_id in self.holder:
            self.forget_at[card_id] = until

    def fade(self, at: int) -> None:
        """Drop every remembered holding whose span ended by `at`."""
        for card_id, until in list(self.forget_at.items()):
            if until <= at:
                del self.forget_at[card_id]
                self.holder.pop(card_id, None)

    def _reset_deal(self, at: int) -> None:
        self.dealt_at = at
        self.holder = {}
        self.forget_at = {}
        self.placed_ranks = [set() for _ in range(self.players)]
        self.swaps = []
        self.last_swap_at = [None] * self.players
        self.last_taken_rank = [None] * self.players

    def _on_seat(self, e: Wire, at: int) -> None:
        s = int(e["seat"])
        self.kinds[s] = e.get("kind")
        self.connected[s] = bool(e.get("connected"))

    def _on_signing(self, e: Wire, at: int) -> None:
        self.phase = Phase.SIGNING
        self.round = int(e["round"])
        self.deadline = _deadline(e)
        self.sign = None
        self.hand = []
        self.center = []
        self.vote = None
        self.reshuffled = False
        self.revealed = None
        self.ready = [k == "bot" for k in self.kinds]
        self.floors = [False] * self.players
        self.choice = None
        self.swap_ready_at = 0
        self.floor_ready_at = 0
        self.last_emission_at = None
        self.emissions = []

    def _on_ready(self, e: Wire, at: int) -> None:
        self.ready[int(e["seat"])] = True

    def _on_sign(self, e: Wire, at: int) -> None:
        self.sign = str(e["emoji"])

    def _on_round(self, e: Wire, at: int) -> None:
        self.phase = Phase.PLAYING
        self.round = int(e["round"])
        self.hand = [CardView.parse(c) for c in e["hand"]]
        self.center = [CardView.parse(c) for c in e["center"]]
        self.deadline = _deadline(e)
        self.opened_at = at
        self._reset_deal(at)
        self.saw_deal = True

    def _on_swapped(self, e: Wire, at: int) -> None:
        s = int(e["seat"])
        slot = int(e["slot"])
        placed = CardView.parse(e["placed"])
        taken = CardView.parse(e["taken"])
        if 0 <= slot < len(self.center):
            self.center[slot] = placed
        if s == self.seat:
            self.hand = [taken if c.id == placed.id else c for c in self.hand]
            self.swap_ready_at = at + self.timings.swap_cooldown
        else:
            self.holder.pop(placed.id, None)
            self.forget_at.pop(placed.id, None)
            self.holder[taken.id] = s
        if taken.rank != placed.rank:
            self.placed_ranks[s].add(placed.rank)
            self.placed_ranks[s].discard(taken.rank)
        previous = self.last_taken_rank[s]
        if previous is not None:
            self.takes_seen[s] += 1
            self.takes_alike[s] += int(previous == taken.rank)
        self.last_taken_rank[s] = taken.rank
        self.swaps.append(SwapSeen(at, s, placed, taken))
        self.last_swap_at[s] = at

    def _on_floor(self, e: Wire, at: int) -> None:
        s = int(e["seat"])
        is_open = bool(e["open"])
        self.floors[s] = is_open
        if s == self.seat:
            self.floor_ready_at = at + self.timings.floor_cooldown
            if not is_open:
                self.choice = None

    def _on_emission(self, e: Wire, at: int) -> None:
        s = int(e["seat"])
        self.emissions.append(Emission(at, s, str(e["emoji"])))
        if s == self.seat:
            self.last_emission_at = at

    def _on_vote(self, e: Wire, at: int) -> None:
        self.vote_round = self.round
        self.vote = VoteView(
            by=int(e["by"]),
            voters=tuple(int(v) for v in e["voters"]),
            deadline=int(e["deadline"]),
            accepted=(),
        )

    def _on_vote_result(self, e: Wire, at: int) -> None:
        self.vote = None
        self.last_vote_end = at

    def _on_reshuffled(self, e: Wire, at: int) -> None:
        self.hand = [CardView.parse(c) for c in e["hand"]]
        self.center = [CardView.parse(c) for c in e["center"]]
        self.reshuffled = True
        self._reset_deal(at)
        self.saw_deal = True

    def _on_reveal(self, e: Wire, at: int) -> None:
        self.revealed = e
        self.scores = [int(x) for x in e["scores"]]
        self.floors = [False] * self.players
        self.choice = None
        self.vote = None
        self.phase = Phase.PAUSE

    def _on_pause(self, e: Wire, at: int) -> None:
        self.phase = Phase.PAUSE
        self.deadline = _deadline(e)

    def _on_resumed(self, e: Wire, at: int) -> None:
        """The table stood still (engine.stall): every clock this seat knows moves on as the
        table's did, so that the stall counts neither as thinking time nor as silence."""
        by = int(e["shift"])
        if self.deadline is not None:
            self.deadline += by
        if self.vote is not None:
            self.vote = dataclasses.replace(self.vote, deadline=self.vote.deadline + by)
        if self.last_vote_end is not None:
            self.last_vote_end += by
        if self.last_emission_at is not None:
            self.last_emission_at += by
        self.swap_ready_at += by
        self.floor_ready_at += by
        self.opened_at += by
        self.dealt_at += by
        self.last_swap_at = [None if x is None else x + by for x in self.last_swap_at]
        self.forget_at = {cid: until + by for cid, until in self.forget_at.items()}
        self.emissions = [dataclasses.replace(x, at=x.at + by) for x in self.emissions]
        self.swaps = [dataclasses.replace(x, at=x.at + by) for x in self.swaps]

    def _on_over(self, e: Wire, at: int) -> None:
        self.phase = Phase.OVER
        self.deadline = None

    # -- reading ------------------------------------------------------------------------------
    def seat_view(self) -> SeatView:
        """The model as the typed view `engine.legal` reads."""
        return SeatView(
            seat=self.seat,
            players=self.players,
            phase=self.phase,
            round=self.round,
            seats=tuple(
                SeatRow(
                    seat=s,
                    team=team_of(s, self.players),
                    kind=self.kinds[s],
                    connected=self.connected[s],
                    ready=self.ready[s],
                    floor=self.floors[s],
                    emoji=None,
                )
                for s in range(self.players)
            ),
            scores=tuple(self.scores),
            hand=tuple(self.hand),
            center=tuple(self.center),
            sign=self.sign,
            deadline=self.deadline,
            swap_ready_at=self.swap_ready_at,
            floor_ready_at=self.floor_ready_at,
            choice=self.choice,
            vote=self.vote,
            reshuffled=self.reshuffled,
            vote_ready_at=self.vote_ready_at,
        )

    @property
    def vote_ready_at(self) -> int | None:
        if self.last_vote_end is None:
            return None
        return self.last_vote_end + self.timings.vote_gap

    @property
    def centre_moved_at(self) -> int:
        """When a card last left the centre: the last swap anyone made, or the deal."""
        return max((t for t in self.last_swap_at if t is not None), default=self.dealt_at)

    def known_hand(self, seat: int) -> list[str]:
        """Card ids this seat is known (from its swaps) to hold now."""
        return [cid for cid, s in self.holder.items() if s == seat]

    def collects(self, seat: int) -> float:
        """How much this seat plays like a collector: the share of its takes that repeated the
        rank of its previous one (smoothed; 0.5 before anything is seen)."""
        return (self.takes_alike[seat] + 1) / (self.takes_seen[seat] + 2)

    def hand_ranks(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for c in self.hand:
            counts[c.rank] = counts.get(c.rank, 0) + 1
        return counts


def _deadline(e: Wire) -> int | None:
    """A phase's deadline; null where the phase has no clock (a tutorial, engine.tutorial)."""
    raw = e.get("deadline")
    return None if raw is None else int(raw)


_HANDLERS = {
    "seat": Model._on_seat,
    "signing": Model._on_signing,
    "ready": Model._on_ready,
    "sign": Model._on_sign,
    "round": Model._on_round,
    "swapped": Model._on_swapped,
    "floor": Model._on_floor,
    "emission": Model._on_emission,
    "vote": Model._on_vote,
    "vote_result": Model._on_vote_result,
    "reshuffled": Model._on_reshuffled,
    "reveal": Model._on_reveal,
    "pause": Model._on_pause,
    "over": Model._on_over,
    "resumed": Model._on_resumed,
}
