"""Where a new table's bots start (issue 46): a newcomer's tables at relaxed.

A player who has won fewer than `engine.settings.NEWCOMER_WINS` finished matches (rated or not,
never at a practice table; actors/match_records.py counts them) opens tables whose bots start
at relaxed: a new private table, whose host sees the level in the lobby and changes it there,
and a Play-now table they open. A Play-now table has no host, so its opener's count decides it
for everyone who joins; quick play seats players by rating level (a newcomer's is 1000), so the
people at a newcomer's table are mostly new too. A creation that names a level gets that level.
The rule is the engine's (`engine.settings.start_level`); this only reads the count.
"""

from __future__ import annotations

from actors.match_records import MatchRecords
from cluster.redis_client import AsyncRedis
from engine.settings import start_level


class Newcomers:
    def __init__(self, redis: AsyncRedis) -> None:
        self.records = MatchRecords(redis)

    async def wins(self, player_id: str) -> int:
        """The player's finished matches won, counted up to NEWCOMER_WINS."""
        return await self.records.wins(player_id)

    async def level(self, player_id: str, asked: str | None = None) -> str:
        """The level a table the player opens starts at: `asked` when they named one."""
        if asked is not None:
            return asked
        return start_level(await self.wins(player_id))
