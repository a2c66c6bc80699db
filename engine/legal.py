"""What one seat may do now, from what that seat can see: one answer for bots, benchmarks and
the client's hints.

`legal_commands(view, seat, now)` reads only `table.view(seat)` (the `welcome.table` snapshot of
PROTOCOL.md), so it can never depend on another hand or another team's sign (R30). It is exact
for everything the view shows; two refusals stay possible because the view cannot show them:

- `stale`: another player takes the expected card between the view and the swap (R11), a race;
- `vote_refused` with reason `too_soon`: the view does not carry when the last vote ended (R20),
  unless a `vote_ready_at` field is present, which is honoured when it is.

At 4 players Contre! may leave out the team; the list always names it. Presence commands
(Connect, Disconnect) and TakeSeat (it needs a player id) are not game choices and are never
listed. Lobby commands are listed only with `lobby=True`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.commands import (
    AddBot,
    CallContre,
    CallQuatro,
    CastVote,
    ChooseSign,
    Command,
    Emit,
    FillBots,
    LeaveSeat,
    NextRound,
    Ready,
    Rematch,
    RemoveBot,
    RequestVote,
    SetFloor,
    StartMatch,
    Swap,
)
from engine.phase import Phase
from engine.seating import partner, team_of, teams
from engine.signs import EMOJIS
from engine.state import HOST_SEAT

CENTER_SLOTS = 4


@dataclass(frozen=True, slots=True)
class CardView:
    id: str
    rank: str
    suit: str

    @classmethod
    def parse(cls, raw: Any) -> CardView:
        return cls(id=str(raw["id"]), rank=str(raw["rank"]), suit=str(raw["suit"]))


@dataclass(frozen=True, slots=True)
class SeatRow:
    seat: int
    team: int
    kind: str | None
    connected: bool
    ready: bool
    floor: bool
    emoji: str | None


@dataclass(frozen=True, slots=True)
class VoteView:
    by: int
    voters: tuple[int, ...]
    deadline: int
    accepted: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SeatView:
    """The snapshot one seat sees, typed. Built from the view dict, never from table state."""

    seat: int
    players: int
    phase: Phase
    round: int
    seats: tuple[SeatRow, ...]
    scores: tuple[int, ...]
    hand: tuple[CardView, ...]
    center: tuple[CardView, ...]
    sign: str | None
    deadline: int | None
    swap_ready_at: int
    floor_ready_at: int
    choice: str | None
    vote: VoteView | None
    reshuffled: bool
    vote_ready_at: int | None

    @property
    def team(self) -> int:
        return team_of(self.seat, self.players)

    @property
    def partner(self) -> int:
        return partner(self.seat, self.players)

    @property
    def me(self) -> SeatRow:
        return self.seats[self.seat]

    @property
    def is_host(self) -> bool:
        return self.seat == HOST_SEAT

    def opposing_teams(self) -> tuple[int, ...]:
        own = self.team
        return tuple(k for k in range(teams(self.players)) if k != own)

    @classmethod
    def parse(cls, view: Mapping[str, Any], seat: int) -> SeatView:
        seats = tuple(
            SeatRow(
                seat=int(row["seat"]),
                team=int(row["team"]),
                kind=row.get("kind"),
                connected=bool(row.get("connected", False)),
                ready=bool(row.get("ready", False)),
                floor=bool(row.get("floor", False)),
                emoji=row.get("emoji"),
            )
            for row in view["seats"]
        )
        raw_vote = view.get("vote")
        vote = (
            None
            if raw_vote is None
            else VoteView(
                by=int(raw_vote["by"]),
                voters=tuple(int(v) for v in raw_vote.get("voters", ())),
                deadline=int(raw_vote["deadline"]),
                accepted=tuple(int(v) for v in raw_vote.get("accepted", ())),
            )
        )
        vote_ready_at = view.get("vote_ready_at")
        return cls(
            seat=seat,
            players=int(view["players"]),
            phase=Phase(view["phase"]),
            round=int(view.get("round", 0)),
            seats=seats,
            scores=tuple(int(x) for x in view.get("scores", ())),
            hand=tuple(CardView.parse(c) for c in view.get("hand", ())),
            center=tuple(CardView.parse(c) for c in view.get("center", ())),
            sign=view.get("sign"),
            deadline=view.get("deadline"),
            swap_ready_at=int(view.get("swap_ready_at") or 0),
            floor_ready_at=int(view.get("floor_ready_at") or 0),
            choice=view.get("choice"),
            vote=vote,
            reshuffled=bool(view.get("reshuffled", False)),
            vote_ready_at=None if vote_ready_at is None else int(vote_ready_at),
        )


def swaps(hand: Sequence[CardView], center: Sequence[CardView], seat: int) -> list[Swap]:
    """Every swap of a hand card with a centre slot, each expecting the card now in that slot."""
    return [
        Swap(seat=seat, card=card.id, slot=slot, expect=taken.id)
        for card in hand
        for slot, taken in enumerate(center)
    ]


def legal_for(sv: SeatView, now: int, *, lobby: bool = False) -> list[Command]:
    """Every command `sv.seat` may send at `now` that the table will accept, as far as the view
    shows (see the module docstring for the two races it cannot see)."""
    seat = sv.seat
    out: list[Command] = []
    phase = sv.phase
    if phase is Phase.LOBBY:
        if lobby:
            out += _lobby(sv)
    elif phase is Phase.SIGNING:
        if not sv.me.ready:
            out.append(Ready(seat=seat))
        if sv.sign is None:
            out += [ChooseSign(seat=seat, emoji=e) for e in EMOJIS]
    elif phase is Phase.PLAYING:
        if now >= sv.swap_ready_at and len(sv.center) == CENTER_SLOTS:
            out += swaps(sv.hand, sv.center, seat)
        if now >= sv.floor_ready_at:
            out.append(SetFloor(seat=seat, open=not sv.me.floor))
        if sv.me.floor:
            out += [Emit(seat=seat, emoji=e) for e in EMOJIS]
        out.append(CallQuatro(seat=seat))
        out += [CallContre(seat=seat, team=k) for k in sv.opposing_teams()]
        if (
            sv.vote is None
            and not sv.reshuffled
            and (sv.vote_ready_at is None or now >= sv.vote_ready_at)
        ):
            out.append(RequestVote(seat=seat))
        if sv.vote is not None and seat in sv.vote.voters and seat not in sv.vote.accepted:
            out += [CastVote(seat=seat, accept=True), CastVote(seat=seat, accept=False)]
    elif phase is Phase.PAUSE:
        if sv.is_host:
            out.append(NextRound(seat=seat))
    elif phase is Phase.OVER and sv.is_host:
        out.append(Rematch(seat=seat))
    return out


def legal_commands(
    view: Mapping[str, Any], seat: int, now: int, *, lobby: bool = False
) -> list[Command]:
    """`legal_for` on the raw `table.view(seat)` dict."""
    return legal_for(SeatView.parse(view, seat), now, lobby=lobby)


def _lobby(sv: SeatView) -> list[Command]:
    seat = sv.seat
    out: list[Command] = []
    if sv.is_host:
        for row in sv.seats:
            if row.kind is None:
                out.append(AddBot(seat=seat, target=row.seat))
            elif row.kind == "bot":
                out.append(RemoveBot(seat=seat, target=row.seat))
            elif row.seat != HOST_SEAT:
                out.append(LeaveSeat(seat=seat, target=row.seat))
        if all(row.kind is not None for row in sv.seats):
            out.append(StartMatch(seat=seat))
        else:  # accepted at a full table too, but it would change nothing there
            out.append(FillBots(seat=seat))
    elif sv.me.kind == "human":
        out.append(LeaveSeat(seat=seat, target=seat))
    return out
