"""The table: one state machine per game. Commands stamped with a time go in, events come out.

    table.advance(now)          fire whatever the clock made due (round opening, emissions, …)
    table.apply(command, now)   judge one command; raises Refusal, changing nothing, if refused
    table.next_deadline()       when `advance` next has something to do, or None
    table.resume(stalled, now)  give back the `stalled` ms a fault held the table (engine.stall)
    table.view(seat)            the snapshot that seat may see

The table never reads a clock: `now` is integer milliseconds given by the caller, and time never
runs backwards inside it (an earlier `now` counts as the latest one seen).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from engine import calls, coach, latejoin, lobby, play, rounds, snapshot, stall, vote
from engine.commands import (
    SEATLESS,
    AddBot,
    AnswerClaim,
    CallContre,
    CallQuatro,
    CancelClaim,
    CastVote,
    ChangeSettings,
    ChooseSign,
    ClaimSeat,
    Command,
    Connect,
    Disconnect,
    Emit,
    EndTutorial,
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
    TakeSeat,
)
from engine.config import TableConfig
from engine.errors import ErrorCode, Refusal
from engine.events import Audience, Outbound, Wire
from engine.phase import Phase
from engine.ratings import MatchResult, SeatResult
from engine.seating import team_of
from engine.settings import TableSettings
from engine.state import HOST_SEAT, TableState
from engine.view import summary, view

Handler = Callable[[TableState, Any, int], list[Outbound]]

# One line per command: what the rules do with it lives in the module named.
_HANDLERS: dict[type[Command], Handler] = {
    TakeSeat: lambda s, c, t: lobby.take_seat(s, c.seat, c.player_id, c.name, t),
    LeaveSeat: lambda s, c, t: lobby.leave_seat(s, c.seat, c.target, t),
    AddBot: lambda s, c, t: lobby.add_bot(s, c.seat, c.target, t),
    RemoveBot: lambda s, c, t: lobby.remove_bot(s, c.seat, c.target, t),
    FillBots: lambda s, c, t: lobby.fill_bots(s, c.seat, t),
    ChangeSettings: lambda s, c, t: lobby.change_settings(
        s, c.seat, c.bot_level, c.hints, c.late_join, c.watchers, t
    ),
    ClaimSeat: lambda s, c, t: latejoin.claim_seat(s, c.seat, c.player_id, c.name, c.watching, t),
    CancelClaim: lambda s, c, t: latejoin.cancel_claim(s, c.player_id, t),
    AnswerClaim: lambda s, c, t: latejoin.answer_claim(s, c.seat, c.target, c.accept, t),
    StartMatch: lambda s, c, t: lobby.start(s, c.seat, t),
    Rematch: lambda s, c, t: lobby.rematch(s, c.seat, t),
    Connect: lambda s, c, t: lobby.connect(s, c.seat, t),
    Disconnect: lambda s, c, t: lobby.disconnect(s, c.seat, t),
    Ready: lambda s, c, t: rounds.ready(s, c.seat, t),
    ChooseSign: lambda s, c, t: rounds.choose_sign(s, c.seat, c.emoji, t),
    NextRound: lambda s, c, t: rounds.next_round(s, c.seat, t),
    Swap: lambda s, c, t: play.swap(s, c.seat, c.card, c.slot, c.expect, t),
    SetFloor: lambda s, c, t: play.set_floor(s, c.seat, c.open, t),
    Emit: lambda s, c, t: play.emit(s, c.seat, c.emoji, t),
    CallQuatro: lambda s, c, t: calls.quatro(s, c.seat, t),
    CallContre: lambda s, c, t: calls.contre(s, c.seat, c.team, t),
    RequestVote: lambda s, c, t: vote.request(s, c.seat, t),
    CastVote: lambda s, c, t: vote.cast(s, c.seat, c.accept, t),
    EndTutorial: lambda s, c, t: coach.end(s, c.seat, t),
}


class Table:
    """One Quatro table. Not thread-safe: give it one command at a time."""

    __slots__ = ("_now", "_state")

    def __init__(self, config: TableConfig) -> None:
        self._state = TableState.new(config)
        self._now = 0

    # -- reading ------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        """The latest time the table was given: when it last let time pass or judged a command."""
        return self._now

    @property
    def running(self) -> bool:
        """Whether a clock the players see is counting (a phase's deadline, a vote)."""
        return stall.running(self._state)

    @property
    def config(self) -> TableConfig:
        return self._state.config

    @property
    def players(self) -> int:
        return self._state.players

    @property
    def phase(self) -> Phase:
        return self._state.phase

    @property
    def round(self) -> int:
        return self._state.round

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(self._state.scores)

    @property
    def settings(self) -> TableSettings:
        """The host's settings (bot level, hints); a copy: change them with ChangeSettings."""
        st = self._state.settings
        return TableSettings(st.bot_level, st.hints, st.watchers, st.late_join)

    @property
    def host(self) -> int | None:
        """Seat 0 hosts; a public (quick-play) table has no host."""
        return None if self._state.public else HOST_SEAT

    @property
    def public(self) -> bool:
        return self._state.public

    def seat_of(self, player_id: str) -> int | None:
        return next(
            (s for s, st in enumerate(self._state.seats) if st.player_id == player_id), None
        )

    def claim_of(self, player_id: str) -> int | None:
        """The bot seat `player_id` asked for during the match (engine.latejoin), if any."""
        return latejoin.claim_of(self._state, player_id)

    def seat_kind(self, seat: int) -> str | None:
        return self._state.seats[seat].kind

    def bot_seats(self) -> tuple[int, ...]:
        return tuple(s for s, st in enumerate(self._state.seats) if st.kind == "bot")

    def is_connected(self, seat: int) -> bool:
        return self._state.seats[seat].connected

    def owners(self) -> tuple[str | None, ...]:
        """Who holds each seat: the player's id, "bot", or None when empty. A change between
        two calls means a seat changed hands (R30: its old holder must see nothing more)."""
        return tuple("bot" if st.kind == "bot" else st.player_id for st in self._state.seats)

    def holders(self, to: Audience) -> tuple[str, ...]:
        """The players (by id) an audience reaches right now; () for the whole table, whose
        events are public. Stamped on private events so that a connection is checked against
        the player who held the seat when the event happened, not only the seat number."""
        if to.scope == "all":
            return ()
        n = self.players
        return tuple(
            st.player_id
            for s, st in enumerate(self._state.seats)
            if st.player_id is not None and to.includes(s, n)
        )

    def view(self, seat: int | None) -> dict[str, Wire]:
        return view(self._state, seat)

    def summary(self) -> dict[str, Wire]:
        return summary(self._state)

    @property
    def match(self) -> int:
        """The matches begun at this table: 1 during the first, 2 after a rematch…"""
        return self._state.match

    def result(self) -> MatchResult | None:
        """The match just finished (engine.ratings), or None while none is over."""
        s = self._state
        if s.phase is not Phase.OVER:
            return None
        n = s.players
        lineup = s.lineup or tuple(st.player_id for st in s.seats)
        seats = tuple(
            SeatResult(
                seat=seat,
                team=team_of(seat, n),
                # Rated: a human who held the seat since the match's first round.
                player_id=st.player_id
                if st.is_human and st.player_id is not None and lineup[seat] == st.player_id
                else None,
                name=st.name or "",
            )
            for seat, st in enumerate(s.seats)
        )
        return MatchResult(
            match=s.match,
            players=n,
            scores=tuple(s.scores),
            seats=seats,
            bot_level=s.settings.bot_level,
            practice=s.config.practice,
            ended_at=s.ended_at,
        )

    def next_deadline(self) -> int | None:
        s = self._state
        due = s.deadline
        if s.phase is Phase.PLAYING:
            if s.vote is not None and (due is None or s.vote.deadline < due):
                due = s.vote.deadline
            for st in s.seats:
                at = st.next_emission_at
                if at is not None and (due is None or at < due):
                    due = at
        return due

    # -- changing -----------------------------------------------------------------------------
    def advance(self, now: int) -> list[Outbound]:
        """Fire, in time order and each at its own due time, everything due by `now`."""
        if now > self._now:
            self._now = now
        events: list[Outbound] = []
        while (t := self.next_deadline()) is not None and t <= self._now:
            events += self._stamp(self._fire(t))
        return events + self._coach() if events else events

    def apply(self, command: Command, now: int) -> list[Outbound]:
        """Advance to `now`, then judge `command`. Raises Refusal (with the clock's events in
        `Refusal.events`) when the rules say no; the command then changed nothing."""
        events = self.advance(now)
        handler = _HANDLERS.get(type(command))
        try:
            if handler is None:
                raise Refusal(ErrorCode.BAD_MESSAGE, f"unknown command {type(command).__name__}")
            if not isinstance(command, SEATLESS):
                self._check_actor(command.seat)
            if self._state.config.tutorial:
                coach.check(self._state, command)
            return events + self._stamp(handler(self._state, command, self._now)) + self._coach()
        except Refusal as refusal:
            refusal.events = events
            raise

    def resume(self, stalled: int, now: int) -> list[Outbound]:
        """The table stood still `stalled` ms until `now` (a fault: the caller measured it):
        every clock of the table moves on by as much (engine.stall), and everyone is told the
        new deadlines. Call it before `advance` lets anything fall due at `now`."""
        if isinstance(stalled, bool) or not isinstance(stalled, int):
            raise TypeError("stalled is whole milliseconds")
        if now > self._now:
            self._now = now
        return self._stamp(stall.shift(self._state, stalled, self._now))

    def _coach(self) -> list[Outbound]:
        """At a tutorial table, the learner's next instruction when it changed (engine.coach)."""
        if not self._state.config.tutorial:
            return []
        return self._stamp(coach.update(self._state, self._now))

    def _stamp(self, events: list[Outbound]) -> list[Outbound]:
        """Each step's events carry the players their audience reached as the step ended: a
        later step of the same batch may give a seat to someone else (engine.latejoin), who must
        not be counted among an earlier event's holders (R30). Within one step the seats change
        before any event of the new holder's (a new round's signing)."""
        return [
            o if o.to.public else dataclasses.replace(o, holders=self.holders(o.to)) for o in events
        ]

    def _check_actor(self, seat: object) -> None:
        s = self._state
        if (
            not isinstance(seat, int)
            or isinstance(seat, bool)
            or not 0 <= seat < s.players
            or s.seats[seat].kind is None
        ):
            raise Refusal(ErrorCode.BAD_SEAT, "that seat is not yours to play")

    def _fire(self, t: int) -> list[Outbound]:
        s = self._state
        events: list[Outbound] = []
        if s.phase is Phase.PLAYING:
            for seat, st in enumerate(s.seats):
                if st.next_emission_at is not None and st.next_emission_at <= t:
                    events += play.fire_emission(s, seat, t)
            if s.vote is not None and s.vote.deadline <= t:
                events += vote.expire(s, t)
        if s.deadline is not None and s.deadline <= t:
            if s.phase is Phase.LOBBY:
                events += lobby.fill_with_bots(s, t)  # quick play's fill deadline
            else:
                events += rounds.phase_deadline_reached(s, t)
        return events

    # -- persistence --------------------------------------------------------------------------
    def to_snapshot(self) -> dict[str, Any]:
        return {"now": self._now, "state": snapshot.dump(self._state)}

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> Table:
        table = cls.__new__(cls)
        table._state = snapshot.load(data["state"])
        table._now = data["now"]
        return table
