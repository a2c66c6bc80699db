"""What a finished match leaves besides its ratings (issues 36 and 46): its record, a history line
for each of its people, and each winner's count of wins. Written by the table that settles the
match (actors/results.py), after its ratings (actors/ratings.py), in single-slot steps that each
write the same thing however often they run: a table restarted in the middle runs them again.

- **The record** (`quatro:{m-<match id>}:match`, 180 days): teams, scores, seats, the level its
  bots played at, whether it was rated and, if not, why (`engine.ratings.UNRATED`'s names),
  each rated seat's change. A seat keeps its player's id when that player held it from the
  first round (the others are bots, or joined late). Records written before issue 46 have no
  `bot_level` and no `reason` (actors/rating_fix.py says what it assumes of them).
- **A history line** (the player's sorted set, their last 50 matches) for every person who held
  a seat from the first round, rated or not, so that a player's history says a match against
  bots was not rated, and why; written only while their profile lives (one script on the
  player's slot), so that a deletion finished meanwhile is never followed by a history of
  nobody's. A match that rated the player makes their profile lasting, if it was a guest's
  (issue 47, actors/profile_keys.py); a guest's line expires with the rest of it.
- **A win** for each of them whose team won, unless at a practice table, rated or not: a newcomer
  who only plays bots graduates from the relaxed start too (engine.settings.start_level). A set
  of match ids, so that a retry counts nothing twice, which stops growing at NEWCOMER_WINS: all
  the starting level ever asks of it. Deleted with the profile (gateway/profiles.py).
"""

from __future__ import annotations

import json
from typing import Any

from actors import keys
from actors.profile_keys import LUA, OWNED
from actors.ratings import Settled
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Script
from engine.ratings import MatchResult
from engine.settings import NEWCOMER_WINS

HISTORY = 50  # matches kept in a player's history
MATCH_TTL_S = 180 * 24 * 3600  # a match's record (history lines point at it)

# KEYS: the player's own keys (`keys.owned`: profile, history, wins, …), then its tombstone.
# ARGV: match id, when it ended (ms), the lines kept, '1' for a win to count, the most wins
# kept, '1' when the match rated the player. Returns 1 written, 0 no profile. A script: the
# profile's check and the writes must see no deletion between them. A rated match makes the
# profile lasting (issue 47: every key it holds kept); a guest's new line and win expire with
# it (actors/profile_keys.py).
PLAYER_LINE = Script(
    "records.player-line",
    LUA
    + f"""
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[{OWNED + 1}]) == 1 then
  return 0
end
redis.call('ZADD', KEYS[2], tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[3]) - 1)
if ARGV[4] == '1' and redis.call('SCARD', KEYS[3]) < tonumber(ARGV[5]) then
  redis.call('SADD', KEYS[3], ARGV[1])
end
if ARGV[6] == '1' then
  keep()
else
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then expire(ttl) end
end
return 1
""",
)


class MatchRecords:
    def __init__(self, redis: AsyncRedis) -> None:
        self.redis = redis

    async def record(
        self, mid: str, table_id: str, code: str, result: MatchResult, settled: Settled
    ) -> None:
        """The match's record, then each person's history line and win."""
        record = match_record(mid, table_id, code, result, settled)
        await self.redis.set(keys.match(mid), json.dumps(record), ex=MATCH_TTL_S)
        for player_id in result.rated():
            won = result.won(player_id) and not result.practice
            rated = "1" if player_id in settled.changes else "0"
            await PLAYER_LINE.run(
                self.redis,
                [*keys.owned(player_id), keys.profile_gone(player_id)],
                [mid, result.ended_at, HISTORY, "1" if won else "0", NEWCOMER_WINS, rated],
            )

    async def wins(self, player_id: str) -> int:
        """The player's finished matches won (counted up to NEWCOMER_WINS)."""
        return int(await self.redis.scard(keys.wins(player_id)))


def match_record(
    mid: str, table_id: str, code: str, result: MatchResult, settled: Settled
) -> dict[str, Any]:
    """What a finished match leaves: enough for a history line, a replay's list of players and
    the ratings' replay (actors/rating_fix.py)."""
    changes = settled.changes
    return {
        "match": mid,
        "table_id": table_id,
        "code": code,  # to tell whether its table is still open (gateway/profiles.py)
        "number": result.match,
        "players": result.players,
        "ended_at": result.ended_at,
        "scores": list(result.scores),
        "winners": list(result.winners),
        "bot_level": result.bot_level,
        "rated": settled.rated,
        "reason": settled.reason,
        # Issue 47: the share of a whole match it counted for (1/k, the k-th of its opponents'
        # day); null when not rated.
        "weight": settled.weight if settled.rated else None,
        "seats": [
            {
                "seat": s.seat,
                "team": s.team,
                "name": s.name,
                "player": s.player_id,
                "before": changes.get(s.player_id or "", {}).get("before"),
                "after": changes.get(s.player_id or "", {}).get("after"),
                "played": changes.get(s.player_id or "", {}).get("played"),
            }
            for s in result.seats
        ],
    }
