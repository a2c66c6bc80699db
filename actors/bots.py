"""Bot seats, played on the table actor's own clock with `engine.bots` policies (R29: the same
rules and cooldowns as humans, no votes). A bot is fed exactly what its seat may see: a
`table.view(seat)` snapshot, then the events whose audience includes it (R30).

Policy `idle` (a test hook) keeps bots seated and ready but silent, so rigged scenarios stay
exactly as rigged. The host's `bot_level` (engine.settings) tunes every bot of the table when the
match starts; a level changed between two matches (engine.lobby) gives the next match new bots.
"""

from __future__ import annotations

from engine import Command, Outbound, Table
from engine.bots import POLICIES, Bot, make_bot
from engine.phase import Phase

IDLE = "idle"
BOT_POLICIES = (*POLICIES, IDLE)


class BotDriver:
    def __init__(self, table: Table, policy: str = "smart") -> None:
        self._table = table
        self.policy = policy
        self._bots: dict[int, Bot] = {}
        self._level: str | None = None  # the level the bots in `_bots` were made at

    def _drop_gone(self) -> None:
        """Joining late: a bot whose seat a player took is gone for good; it must never act for
        that seat again, nor be fed its events (the seat's hand is the player's now)."""
        if self._bots:
            kept = set(self._table.bot_seats())
            for seat in [s for s in self._bots if s not in kept]:
                del self._bots[seat]

    def _ensure(self, now: int) -> None:
        """Bots join when the match starts (lobby seats may still change before that)."""
        self._drop_gone()
        if self.policy == IDLE or self._table.phase is Phase.LOBBY:
            return
        level = self._table.settings.bot_level
        if level != self._level:
            # Only between matches can the level change (engine.lobby): nothing is under way.
            self._bots.clear()
            self._level = level
        for seat in self._table.bot_seats():
            if seat not in self._bots:
                bot = make_bot(
                    self.policy,
                    seat,
                    self._table.players,
                    seed=self._table.config.seed * 31 + seat,
                    # At a test time_scale the cooldowns shrink; the bots' pace shrinks with them.
                    speed=1.0 / self._table.config.time_scale,
                    timings=self._table.config.timings,
                    bot_level=self._table.settings.bot_level,
                )
                bot.sync(self._table.view(seat), now)
                self._bots[seat] = bot

    def observe(self, outs: list[Outbound]) -> None:
        self._drop_gone()
        if not self._bots:
            return
        players = self._table.players
        for o in outs:
            wire = None
            for seat, bot in self._bots.items():
                if o.to.includes(seat, players):
                    wire = wire or o.event.to_wire()
                    bot.observe(wire, o.at)

    def next_due(self, now: int) -> int | None:
        self._ensure(now)
        dues = [i.at for b in self._bots.values() if (i := b.decide(now)) is not None]
        return min(dues, default=None)

    def next_turn(self, now: int) -> tuple[Bot, Command] | None:
        """The bot whose intent is due first, with what it means to send. Asked again after every
        applied command, so no bot acts on a table that changed under it."""
        self._ensure(now)
        best: tuple[int, Bot, Command] | None = None
        for bot in self._bots.values():
            intent = bot.decide(now)
            if intent is not None and intent.at <= now and (best is None or intent.at < best[0]):
                best = (intent.at, bot, intent.command)
        return None if best is None else (best[1], best[2])
