"""Bot policies: pure players that see exactly what their seat sees (R30).

    bot = make_bot("smart", seat=2, players=4, seed=7)
    bot.sync(table.view(2), now)                 # or the `welcome.table` snapshot
    bot.observe(event.to_wire(), outbound.at)    # every event whose audience includes seat 2
    intent = bot.decide(now)                     # Intent(command, at) or None
    # at intent.at: bot.sent(intent.command, at), then apply it; on a Refusal,
    # bot.refused(intent.command, refusal.to_wire(), at)

Over the WebSocket, send `client_frame(intent.command)` and pass an `error` answer to
`bot.refused`. The runner decides when time passes (an actor's timers, the tournament's
simulated clock, a Locust user's loop); the policy never reads a clock and draws only from its
own seeded RNG. Give a bot the table's `timings` and, at a `time_scale` s, `speed = 1 / s`.
"""

from __future__ import annotations

from engine.bots.base import Bot, Intent
from engine.bots.levels import LEVELS, Level, level
from engine.bots.newcomer import NewcomerBot
from engine.bots.random_bot import RandomBot
from engine.bots.scripted import ScriptedBot
from engine.bots.smart import SmartBot
from engine.config import Timings
from engine.settings import DEFAULT_BOT_LEVEL
from engine.wire import client_frame

POLICIES: dict[str, type[Bot]] = {
    "random": RandomBot,
    "smart": SmartBot,
    "newcomer": NewcomerBot,
    "tutorial": ScriptedBot,  # the guided round's script (engine.tutorial); no level applies
}


def make_bot(
    policy: str,
    seat: int,
    players: int,
    *,
    seed: int,
    speed: float = 1.0,
    timings: Timings | None = None,
    bot_level: str = DEFAULT_BOT_LEVEL,
) -> Bot:
    """A bot of the named policy for one seat. `timings` are the table's (its time_scale);
    `bot_level` (engine.bots.levels) scales its pace and, for a smart bot, sets its reaction
    times, its memory, and how readily it accuses and bluffs. A newcomer plays as a newcomer
    whatever the level."""
    try:
        cls = POLICIES[policy]
    except KeyError:
        raise ValueError(f"unknown bot policy {policy!r}; choose from {sorted(POLICIES)}") from None
    tuning = level(bot_level)
    if cls is ScriptedBot:
        return ScriptedBot(seat, players, seed=seed, speed=speed, timings=timings)
    if cls is NewcomerBot:
        return NewcomerBot(seat, players, seed=seed, speed=speed, timings=timings)
    if cls is SmartBot:
        return SmartBot(
            seat,
            players,
            seed=seed,
            speed=speed,
            timings=timings,
            contre_threshold=tuning.contre_threshold,
            decoy_chance=tuning.decoy_chance,
            tempo=tuning.pace,
            call=tuning.call,
            accuse=tuning.accuse,
            memory_ms=tuning.memory_ms,
            notice=tuning.notice,
        )
    return cls(seat, players, seed=seed, speed=speed * tuning.pace, timings=timings)


__all__ = [
    "LEVELS",
    "POLICIES",
    "Bot",
    "Intent",
    "Level",
    "NewcomerBot",
    "RandomBot",
    "ScriptedBot",
    "SmartBot",
    "client_frame",
    "level",
    "make_bot",
]
