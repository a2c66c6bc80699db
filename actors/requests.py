"""A gateway's requests of a table (actors/protocol.py): a command, a connection joining or
leaving, and fresh views; and what it reads without changing anything (a seat's view, the
table's summary, a player's seat). Each change goes through the core's one path
(`TableCore.change`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from actors.answered import Answered
from actors.applied import Applied
from actors.feed import Feed
from actors.protocol import (
    WATCHING,
    Act,
    Entry,
    ErrorBody,
    Join,
    Joined,
    Leave,
    Outcome,
    Overview,
    Reply,
    Request,
    Seated,
    Unreadable,
    Views,
    ViewSet,
)
from actors.results import Results
from actors.watchers import Watchers
from engine import ClaimSeat, Command, Table
from engine.errors import ErrorCode
from engine.seating import team_of
from engine.wire import asks_from_a_seat, for_seat

# Made-up codes the gateway maps like the engine's: the player holds no seat here.
NO_SEAT = ErrorBody(ErrorCode.NO_SEAT, "you hold no seat at this table")
NOT_OPEN = ErrorBody(ErrorCode.UNKNOWN_TABLE, "this table is not open")
EXPIRED = ErrorBody(ErrorCode.EXPIRED, "this action arrived after its expiry and was not applied")
WATCHING_OFF = ErrorBody(ErrorCode.WATCHING_OFF, "the host does not let anyone watch this table")

R = TypeVar("R")


class Asked(Protocol):
    """What a gateway's requests need of the table."""

    table: Table | None
    feed: Feed
    watchers: Watchers
    answered: Answered
    results: Results

    def now(self) -> int: ...

    def apply(self, command: Command, now: int, origin: str = "") -> Applied: ...

    def connect(self, seat: int, conn: str, origin: str, now: int) -> list[Entry]: ...

    def disconnect(self, seat: int, origin: str, now: int) -> list[Entry]: ...

    def seat_held_by(self, conn: str) -> int | None: ...

    @property
    def table_id(self) -> str: ...

    async def change(
        self, step: Callable[[], R], *, touch: bool, save: Callable[[R], bool] | None = None
    ) -> R: ...


class Requests:
    def __init__(self, core: Asked) -> None:
        self.core = core

    async def serve(self, request: Request) -> Reply:
        if isinstance(request, Act):
            return await self._act(request)
        if isinstance(request, Join):
            return await self._join(request)
        if isinstance(request, Leave):
            return await self._leave(request)
        return self._views(request)

    async def _act(self, req: Act) -> Outcome:
        """Judge one command of a seated player. The answer: `ok`, the `error` (wire) when
        refused, and the events it caused (those go to its gateway here, not through its
        stream)."""
        core = self.core
        answered = core.answered.recall(req.cmd_id)
        if answered is not None:
            return answered
        if core.table is None:
            return Outcome(False, NOT_OPEN)
        t = core.table
        now = core.now()
        if req.expires is not None and now > req.expires:
            # Held in a dead link, delivered late: its player was told it did not happen.
            late = Outcome(False, EXPIRED, t.seat_of(req.player_id))
            core.answered.remember(req.cmd_id, late)
            return late
        if isinstance(req.command, Unreadable):
            return Outcome(False, req.command.error)
        seat = t.seat_of(req.player_id)
        command = self._bound(req.command, req.player_id, seat)
        if command is None:
            return Outcome(False, NO_SEAT)
        # Saved when it caused events or was applied; a plain refusal changed nothing.
        return await core.change(
            lambda: self._judge(req, command, t, now),
            touch=True,
            save=lambda reply: bool(reply.events) or reply.ok,
        )

    def _judge(self, req: Act, command: Command, t: Table, now: int) -> Outcome:
        entries, error = self.core.apply(command, now, req.origin)
        # Remembered before saving, so the saved snapshot knows this id if we die right after.
        reply = Outcome(error is None, error, t.seat_of(req.player_id), tuple(entries))
        self.core.answered.remember(req.cmd_id, reply)
        return reply

    def _bound(self, command: Command, player_id: str, seat: int | None) -> Command | None:
        """The command as this table judges it: played from the asker's seat (None when they
        hold none here); a request for a bot's seat knows whether a watching connection of the
        asker is here to be handed the seat (4411), since leaving ends the request."""
        if asks_from_a_seat(command):
            return None if seat is None else for_seat(command, seat)
        if isinstance(command, ClaimSeat):
            return dataclasses.replace(command, watching=self.core.watchers.watches(player_id))
        return command

    async def _join(self, req: Join) -> Joined | Outcome:
        """A player's connection (re)takes their seat (R25): the answer is their snapshot and
        the seq it stands at. An older connection to the same seat is told to go (4409)."""
        core = self.core
        if core.table is None:
            return Outcome(False, NOT_OPEN)
        t = core.table
        if req.watch:
            # Nothing changes at the table: a watcher is no seat's connection (R30: it gets the
            # public view, and the stream's public and watchers' events only). Gateways of today
            # ask with Views instead, once for many watchers.
            if not t.settings.watchers:
                return Outcome(False, WATCHING_OFF)
            core.watchers.join(req.conn, req.origin, req.player_id)
            # Theirs only: which bot's seat they asked for (joining late), so a reload knows.
            view = {**self.view(None), "my_claim": t.claim_of(req.player_id)}
            return Joined(WATCHING, WATCHING, view, core.feed.seq)
        seat = t.seat_of(req.player_id)
        if seat is None:
            return Outcome(False, NO_SEAT)
        entries = await core.change(
            lambda: core.connect(seat, req.conn, req.origin, core.now()), touch=True
        )
        return Joined(
            seat, team_of(seat, t.players), self.view(seat), core.feed.seq, tuple(entries)
        )

    async def _leave(self, req: Leave) -> Outcome:
        core = self.core
        if req.conn in core.watchers.conns:
            # A watcher's request for a bot's seat ends only after a grace (`stop_watching`),
            # so nothing is committed here: nothing to save unless it did.
            now = core.now()
            entries = await core.change(
                lambda: core.watchers.stop_watching(req.conn, now), touch=False, save=bool
            )
            return Outcome(True, events=tuple(entries))
        seat = core.seat_held_by(req.conn)
        if seat is None or core.table is None:
            return Outcome(True)
        entries = await core.change(
            lambda: core.disconnect(seat, req.origin, core.now()), touch=True
        )
        return Outcome(True, events=tuple(entries))

    # -- reads: nothing changes ----------------------------------------------------------------
    def view(self, seat: int | None) -> dict[str, Any]:
        """A `welcome` snapshot: the engine's view of a seat (None: the public one), with
        **(ext)** `table_id` (the name of this table's replay) and how many watch."""
        t, core = self.core.table, self.core
        assert t is not None
        return {
            **t.view(seat),
            "table_id": core.table_id,
            "watching": core.watchers.count(),
            # **(ext)** the last match's rating changes, once told (actors/results.py)
            "ratings": core.results.last if t.result() is not None else None,
        }

    def summary(self) -> Overview | None:
        """The table's public summary (REST), None when there is no table."""
        t = self.core.table
        if t is None:
            return None
        return Overview.of({**t.summary(), "watching": self.core.watchers.count()})

    def seat_of(self, player_id: str) -> Seated | None:
        """Where `player_id` sits here; None when they hold no seat (or there is no table)."""
        t = self.core.table
        seat = None if t is None else t.seat_of(player_id)
        if t is None or seat is None:
            return None
        return Seated(seat, t.players, str(t.phase))

    def _views(self, req: Views) -> ViewSet:
        """Fresh snapshots for a gateway that lost track, all at one seq: one per (seat,
        player) asked for, and only while that player still holds that seat (R30)."""
        core = self.core
        if core.table is None:
            return ViewSet(core.feed.seq, core.now())
        t = core.table
        if req.watching is not None and req.origin:
            core.watchers.counted(req.origin, req.watching)
        seats = {s for s, player in req.wanted if t.seat_of(player) == s}
        owners = t.owners()
        seq = core.feed.seq
        joined = {s: Joined(s, team_of(s, t.players), self.view(s), seq) for s in seats}
        if t.settings.watchers and any(s == WATCHING for s, _ in req.wanted):
            joined[WATCHING] = Joined(WATCHING, WATCHING, self.view(None), seq)
        return ViewSet(seq, core.now(), joined, {s: str(owners[s]) for s in seats})
