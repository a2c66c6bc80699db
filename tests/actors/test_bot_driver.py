"""The table actor's bots (actors/bots.py) across matches: a level the host changed between two
matches (engine.lobby) gives the next match bots of that level (issue 46: the level is always
changeable by the host). Pure: the engine's table on its own clock, no Ray."""

from __future__ import annotations

from actors.bots import BotDriver
from engine import (
    AddBot,
    CallQuatro,
    ChangeSettings,
    Connect,
    NextRound,
    Phase,
    Rematch,
    StartMatch,
    Table,
    TableConfig,
    TakeSeat,
)
from engine.bots import LEVELS
from engine.bots.smart import SmartBot


def thresholds(driver: BotDriver, table: Table, now: int) -> set[float]:
    driver.next_due(now)  # the driver makes its bots when it is next asked
    bots = driver._bots.values()
    assert bots
    assert all(isinstance(b, SmartBot) for b in bots)
    return {b.contre_threshold for b in bots if isinstance(b, SmartBot)}


def test_a_level_changed_between_matches_tunes_the_next_matchs_bots() -> None:
    table = Table(TableConfig(players=4, seed=3))
    table.apply(TakeSeat(seat=0, player_id="host", name="Host"), 0)
    table.apply(Connect(seat=0), 0)
    for seat in (1, 2, 3):
        table.apply(AddBot(seat=0, target=seat), 0)
    table.apply(ChangeSettings(seat=0, bot_level="relaxed"), 0)
    driver = BotDriver(table)
    now = 1
    driver.observe(table.apply(StartMatch(seat=0), now))
    assert thresholds(driver, table, now) == {LEVELS["relaxed"].contre_threshold}
    # The host's partner (seat 2) is a bot: the host's wrong Quatro! gives the point away.
    while table.phase is not Phase.OVER:
        now += 1_000
        if table.phase is Phase.PAUSE:
            driver.observe(table.apply(NextRound(seat=0), now))
        elif table.phase is Phase.SIGNING:
            driver.observe(table.advance(now + 60_000))
            now += 60_000
        else:
            driver.observe(table.apply(CallQuatro(seat=0), now))
    driver.observe(table.apply(ChangeSettings(seat=0, bot_level="sharp"), now))
    driver.observe(table.apply(Rematch(seat=0), now))
    assert thresholds(driver, table, now) == {LEVELS["sharp"].contre_threshold}
