"""What a player's socket tells it, and how each exchange reaches Locust's statistics: the half
of `QuatroPlayer` (loadtests/users/player.py) that runs in its reader greenlet (nothing here
yields) and folds each frame into the player's state — the policy's view (`engine.bots`), its
commands in flight, the table's phase, the soak's ledger — then wakes the player's task."""

from __future__ import annotations

import random
import time
from typing import Any

from gevent.event import Event

from engine.bots import Bot, make_bot
from engine.commands import CastVote, Rematch
from engine.config import Timings
from engine.phase import Phase
from loadtests.frames import kind_of
from loadtests.users.link import Link, Pending
from loadtests.users.options import GAME_REFUSALS, ExchangeError, Options, now_ms
from loadtests.users.soak_board import SOAK
from loadtests.users.tables import LOBBY, SEEN, Group


class Listening:
    """Frames in, exchanges out; the state it reads and changes is the player's own."""

    environment: Any  # Locust's (its hooks are untyped)
    opts: Options
    rng: random.Random
    wake: Event
    link: Link | None
    bot: Bot | None
    table_group: Group | None
    code: str
    seat: int
    pending: dict[str, Pending]
    hello_sent: float
    call_sent: float | None
    rounds: int
    phase: Phase
    over_at: int | None
    vote_at: int | None
    vote_accept: bool
    leave: bool
    echo: tuple[frozenset[str], bool] | None
    arrived: float | None

    # -- reporting ----------------------------------------------------------------------------
    def _report(self, kind: str, name: str, ms: float, exc: BaseException | None = None) -> None:
        """One exchange into Locust's statistics (and the raw samples), with since when its
        table has been in play."""
        group = self.table_group
        self.environment.events.request.fire(
            request_type=kind,
            name=name,
            response_time=ms,
            response_length=0,
            exception=exc,
            context={"live_since": None if group is None else group.live_since},
        )

    def _fire(self, name: str, ms: float, exc: BaseException | None = None) -> None:
        self._report("WS", name, ms, exc)

    def _lost(self, name: str) -> None:
        """A socket or a connection lost (with `--hosts`): not a failure by itself; the soak
        counts it as one when no fault of its own explains it."""
        self._report("LOST", name, 0.0)

    def _refused(self, name: str, ms: float) -> None:
        self._report("REFUSED", name, ms)

    # -- frames (in the reader greenlet; nothing here yields) ---------------------------------
    def on_frame(self, link: Link, frame: dict[str, Any]) -> None:
        if link is not self.link:
            return
        problem = link.order.take(frame)
        if problem is not None:
            self._fire("ws:seq", 0.0, ExchangeError(problem))
        if kind_of(frame) == "event":
            self._on_event(link, frame)
            SOAK.event(self.code, self.phase, frame)
        else:
            self._on_answer(frame)
        self.wake.set()

    def on_lost(self, link: Link, exc: BaseException) -> None:
        if link is self.link and self.opts.hosts:
            self._lost(f"ws:lost@{link.port}")
        elif link is self.link:
            code = getattr(link.ws, "status", None)
            self._fire("ws:closed", 0.0, ExchangeError(f"socket lost ({exc!r}, status {code})"))

    def _on_event(self, link: Link, e: dict[str, Any]) -> None:
        kind = e.get("type")
        now = now_ms()
        if kind == "welcome":
            if not link.welcomed:
                link.welcomed = True
                LOBBY.connected += 1
                self._fire(f"{link.kind}→welcome", (time.perf_counter() - self.hello_sent) * 1000)
                if self.arrived is not None and link.kind == "hello":
                    # From asking for a seat (a table, a friend's seat, Play now) to seated.
                    self._fire("arrival→seated", (time.perf_counter() - self.arrived) * 1000)
                    self.arrived = None
                if self.table_group is not None and link.kind == "hello":
                    self.table_group.connected.add(self.seat)
                    if len(self.table_group.connected) >= self.table_group.players:
                        self.table_group.all_connected.set()
            table = e["table"]
            self.phase = Phase(table["phase"])
            SOAK.note(
                self.code,
                self.seat,
                "welcome",
                e,
                scores=table.get("scores"),
                round=table.get("round"),
                phase=table["phase"],
            )
            if self.bot is None:
                self.bot = make_bot(
                    "smart",
                    int(e["you"]["seat"]),
                    int(table["players"]),
                    seed=self.rng.randrange(2**31),
                    speed=self.opts.pace,
                    timings=Timings.scaled(self.opts.time_scale),
                    bot_level=self.opts.level,
                )
            self.bot.sync(table, now)
            return
        if self.bot is None:
            return
        self.bot.observe(e, now)
        echo = self.echo
        if echo is not None and kind in echo[0] and (not echo[1] or e.get("seat") == self.seat):
            self.echo = None
        if kind == "swapped":
            seat = int(e["seat"])
            if seat != self.seat:
                key = (
                    self.code,
                    seat,
                    str(e["placed"]["id"]),
                    int(e["slot"]),
                    str(e["taken"]["id"]),
                )
                ms = SEEN.seen(key)
                if ms is not None:
                    self._fire("swap→seen", ms)
        elif kind == "reveal":
            SOAK.note(self.code, self.seat, "reveal", e, scores=e.get("scores"))
            self.phase = Phase.PAUSE
            self.rounds += 1
            if self.call_sent is not None and e.get("by") == self.seat:
                self._fire("call→reveal", (time.perf_counter() - self.call_sent) * 1000)
            self.call_sent = None
            self.vote_at = None
            limit = self.opts.match_rounds
            if limit and self.rounds >= limit:
                self.leave = True
        elif kind == "vote":
            voters = [int(v) for v in e.get("voters", [])]
            if self.seat in voters:
                self.vote_at = now + self.bot.pace.reaction(self.rng)
                self.vote_accept = self.rng.random() < self.opts.vote_accept
        elif kind == "vote_result":
            self.vote_at = None
        elif kind == "over":
            SOAK.note(self.code, self.seat, "over", e, scores=e.get("scores"))
            self.phase = Phase.OVER
            self.over_at = now + self.bot.pace.linger(self.rng)
        elif kind == "signing":
            SOAK.note(self.code, self.seat, "signing", e, round=e.get("round"))
            self.phase = Phase.SIGNING
            self.over_at = None
        elif kind == "round":
            self.phase = Phase.PLAYING

    def _on_answer(self, a: dict[str, Any]) -> None:
        fid = a.get("id")
        p = self.pending.pop(str(fid), None) if fid is not None else None
        if p is None:
            if a.get("type") == "error":
                self._fire("ws:error", 0.0, ExchangeError(f"unsolicited error {a.get('code')}"))
            return
        ms = (time.perf_counter() - p.sent) * 1000
        if a.get("type") != "error":
            self._fire(p.name, ms)
            return
        self.echo = None
        if p.key is not None:
            SEEN.drop(p.key)
        if p.name.startswith(("quatro", "contre")):
            self.call_sent = None
        code = str(a.get("code"))
        verb = p.name.split("→", 1)[0]
        if self.bot is not None and not isinstance(p.command, CastVote | Rematch):
            self.bot.refused(p.command, a, now_ms())
        if code in GAME_REFUSALS:
            self._refused(f"{verb}:{code}", ms)
        else:
            self._fire(p.name, ms, ExchangeError(f"{code}: {a.get('message')}"))
