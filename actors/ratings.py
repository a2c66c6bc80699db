"""Ratings in Redis (issue 36): each table size's ratings, leaderboard and applied matches, and
the record and histories of a finished match. The maths is the engine's (engine.ratings); this
is where it is applied, exactly once per match.

Keys (actors/keys.py): every rating of one table size lives under one hash tag, `{ratings:N}`,
with its leaderboard and the ids of the matches already applied, so that applying a match is
one script on one slot: it checks that the match was not applied yet, that no player's rating
moved since it was read (another match of theirs ended meanwhile: read and compute again), that
no player deleted their profile, then writes every rating, the leaderboard's scores and the
match's changes at once. Run twice — a table actor restarted after the script ran, the script's
answer lost and sent again, a Redis failover after which the actor retries — it finds the match
applied and answers the changes it stored the first time. What touches several players' own
keys (the match's record, each player's history) follows as single-slot steps that can each run
any number of times.

Where the store has replicas to wait for (`RedisSettings.replicas_to_wait`), the script is
followed by a WAIT on its connection, as a scoring save is (actors/store.py): a match whose
update no replica confirmed is not settled (`Unreplicated`), so the table keeps it owed and
sends it again; a primary lost before its replica had the update then loses nothing for good.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from actors import keys
from actors.store import NO_REPLICA_BACKOFF_S
from cluster.redis_client import AsyncRedis, RedisSettings
from cluster.redis_ops import Pipeline, Script, run_waited
from engine.ratings import NEW, MatchResult, Rating, counts, rate

HISTORY = 50  # matches kept in a player's history
MATCH_TTL_S = 180 * 24 * 3600  # a match's record (history lines point at it)
RATED_KEPT_MS = 30 * 24 * 3600 * 1000  # how long an applied match's id is remembered
TRIM_AT_ONCE = 100  # applied ids forgotten per script at most (bounded work per call)
ATTEMPTS = 20  # reads and computations when other matches of the same players keep ending

log = logging.getLogger("quatro.table")

# KEYS: ratings, board, board names, rated, rated-at, unrated.
# ARGV: match id, now (ms), how long applied ids are kept, the changes' JSON, then for each
# player: id, the version read ('0': none yet), the new rating's JSON (without its version),
# the leaderboard's score, and the name the leaderboard shows ('' for none).
# Returns {1, changes} applied (now or before), {0, ''} a rating moved since it was read,
# {2, ''} a player deleted their profile. A script because it is the one atomic step: the check
# that nothing moved and every write must see no other match's apply between them.
# A match applied before is written again as it is: a write of this connection, so that the
# WAIT after it (APPLY_WAITED) counts only replicas that have the first apply too. WAIT is
# promised for the connection's own writes (Redis 7.0 counts every earlier write of the
# server, later releases need not), and a retry is often on another connection than the first
# apply (a pooled one, a restarted actor's).
APPLY = Script(
    "ratings.apply",
    """
local done = redis.call('HGET', KEYS[4], ARGV[1])
if done then
  redis.call('HSET', KEYS[4], ARGV[1], done)
  return {1, done}
end
for i = 5, #ARGV, 5 do
  if redis.call('ZSCORE', KEYS[6], ARGV[i]) then return {2, ''} end
  local raw = redis.call('HGET', KEYS[1], ARGV[i])
  local v = 0
  if raw then v = tonumber(cjson.decode(raw)['v']) or 0 end
  if v ~= tonumber(ARGV[i + 1]) then return {0, ''} end
end
for i = 5, #ARGV, 5 do
  local rec = cjson.decode(ARGV[i + 2])
  rec['v'] = tonumber(ARGV[i + 1]) + 1
  redis.call('HSET', KEYS[1], ARGV[i], cjson.encode(rec))
  redis.call('ZADD', KEYS[2], tonumber(ARGV[i + 3]), ARGV[i])
  if ARGV[i + 4] ~= '' then redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 4]) end
end
local now = tonumber(ARGV[2])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[4])
redis.call('ZADD', KEYS[5], now, ARGV[1])
local old = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now - tonumber(ARGV[3]), 'LIMIT', 0, 100)
for _, id in ipairs(old) do
  redis.call('HDEL', KEYS[4], id)
  redis.call('ZREM', KEYS[5], id)
end
return {1, ARGV[4]}
""",
)
# APPLY, then WAIT for the store's replicas, on one connection (cluster.redis_ops.run_waited).
APPLY_WAITED = Pipeline("ratings.apply-waited")
# A player's profile and its tombstone, read (one slot). Not atomic, and need not be: a deletion
# writes the tombstone before it removes the profile, and the tombstone is read after it here.
PROFILE_LIVE = Pipeline("ratings.profile-live")
# A history line added and the history trimmed to its last HISTORY (one key). Not atomic, and
# need not be: each step leaves the newest lines whatever runs between, and runs again the same.
HISTORY_LINE = Pipeline("ratings.history-line")


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's rating at one table size, with what it counts."""

    rating: Rating
    played: int
    won: int
    version: int

    def to_json(self) -> str:
        r = self.rating
        return json.dumps({"mu": r.mu, "sigma": r.sigma, "played": self.played, "won": self.won})

    @classmethod
    def read(cls, raw: str | bytes | None) -> Standing:
        if raw is None:
            return cls(NEW, 0, 0, 0)
        data = json.loads(raw)
        return cls(
            Rating(float(data["mu"]), float(data["sigma"])),
            int(data.get("played", 0)),
            int(data.get("won", 0)),
            int(data.get("v", 0)),
        )


def match_id(table_id: str, match: int) -> str:
    """A match's id: its table's (never reused) and its number there."""
    return f"{table_id}.{match}"


class Unreplicated(RuntimeError):
    """The match was applied on the primary, but no replica confirmed it in time: it stays
    owed, and is sent again (the script then answers what it stored)."""


class RatingStore:
    """`settings`: the store's, to wait for its replicas after a match's update (a table's);
    None waits for none (reads, and the scripts that fill a store)."""

    def __init__(self, redis: AsyncRedis, settings: RedisSettings | None = None) -> None:
        self.redis = redis
        self.settings = settings
        self.unreplicated = 0  # updates no replica confirmed in time
        # The match whose update no replica has confirmed yet, and when that was first seen.
        self._unconfirmed: tuple[str, int] | None = None

    async def standings(self, players: int, ids: list[str]) -> list[Standing]:
        if not ids:
            return []
        raw = await self.redis.hmget(keys.ratings(players), ids)
        return [Standing.read(x) for x in raw]

    async def profiles_live(self, ids: tuple[str, ...]) -> bool:
        """Every player has a profile that is not deleted (one step per player's slot)."""
        for player_id in ids:
            pipe = PROFILE_LIVE.on(self.redis)
            pipe.exists(keys.profile(player_id))
            pipe.exists(keys.profile_gone(player_id))
            has, gone = await PROFILE_LIVE.run(pipe)
            if not int(has) or int(gone):
                return False
        return True

    async def listed_names(self, ids: tuple[str, ...]) -> dict[str, str]:
        """The names the leaderboard shows for these players: those who show their ratings
        and whose name was not hidden after reports."""
        names: dict[str, str] = {}
        for player_id in ids:
            raw = await self.redis.hmget(
                keys.profile(player_id), ["name", "ratings_public", "name_hidden"]
            )
            name, public, hidden = raw
            if name is not None and public == "1" and hidden != "1":
                names[player_id] = str(name)
        return names

    async def apply(self, mid: str, result: MatchResult, now_ms: int) -> dict[str, Any] | None:
        """Apply the match's ratings once (the script above); the changes by player id
        ({before, after} as displayed, and the new mu and sigma), or None when the match does
        not count (a practice table, nobody to rate, a player without a profile)."""
        if not counts(result):
            return None
        ids = result.rated()
        if not await self.profiles_live(ids):
            return None
        names = await self.listed_names(ids)
        n = result.players
        for _ in range(ATTEMPTS):
            before = await self.standings(n, list(ids))
            after = rate(result, {p: s.rating for p, s in zip(ids, before, strict=True)})
            changes = {
                p: {"before": s.rating.display, "after": after[p].display}
                for p, s in zip(ids, before, strict=True)
            }
            args: list[str | int | float] = [mid, now_ms, RATED_KEPT_MS, json.dumps(changes)]
            for p, s in zip(ids, before, strict=True):
                won = 1 if result.won(p) else 0
                new = Standing(after[p], s.played + 1, s.won + won, s.version)
                args += [p, s.version, new.to_json(), after[p].display, names.get(p, "")]
            status, stored, unconfirmed = await self._apply(n, args)
            if int(status) == 1:
                if unconfirmed is not None:
                    self._not_replicated(mid, now_ms, unconfirmed)
                self._unconfirmed = None
                applied: dict[str, Any] = json.loads(stored)
                return applied
            if int(status) == 2:
                return None
        raise RuntimeError(f"match {mid}: its players' ratings kept moving; will try again")

    async def _apply(self, n: int, args: list[str | int | float]) -> tuple[Any, Any, str | None]:
        """APPLY, followed by a WAIT when the store has replicas to wait for: its status, its
        answer, and None when the replicas have it (or none is waited for), else why not."""
        names = [
            keys.ratings(n),
            keys.board(n),
            keys.board_names(n),
            keys.rated(n),
            keys.rated_at(n),
            keys.unrated(n),
        ]
        wanted = 0 if self.settings is None else self.settings.replicas_to_wait()
        if self.settings is None or wanted == 0:
            status, stored = await APPLY.run(self.redis, names, args)
            return status, stored, None
        waited = await run_waited(
            APPLY_WAITED, APPLY, self.redis, names, args, wanted, self.settings.wait_ms
        )
        status, stored = waited.answer
        if waited.replicated:
            return status, stored, None
        return status, stored, f"within {self.settings.wait_ms} ms: {waited.why()}"

    def _not_replicated(self, mid: str, now_ms: int, why: str) -> None:
        """No replica confirmed the match's update: raise Unreplicated (the table keeps the
        match owed and sends it again, with its backoff), unless none has confirmed it for
        NO_REPLICA_BACKOFF_S. The replica is then taken as gone, as a scoring save takes it
        (TableStore._durable publishes its point anyway, and stops waiting for that long):
        the match is settled on its primary's word, with a warning. Held for good, it would
        never be told, recorded or put in its players' histories, and a table that stops
        drops its outbox; the update itself is on the primary either way."""
        self.unreplicated += 1
        if self._unconfirmed is None or self._unconfirmed[0] != mid:
            self._unconfirmed = (mid, now_ms)
        waited_s = (now_ms - self._unconfirmed[1]) / 1000
        if waited_s < NO_REPLICA_BACKOFF_S:
            raise Unreplicated(f"no replica confirmed the update ({why}); kept owed")
        log.warning(
            "match %s: no replica confirmed its ratings' update for %.0f s (%s); settled on "
            "the primary alone",
            mid,
            waited_s,
            why,
        )

    async def record(
        self,
        mid: str,
        table_id: str,
        code: str,
        result: MatchResult,
        changes: dict[str, Any] | None,
    ) -> None:
        """The match's record, then each rated player's history line: single-slot steps, each
        the same whenever it runs again."""
        record = match_record(mid, table_id, code, result, changes)
        await self.redis.set(keys.match(mid), json.dumps(record), ex=MATCH_TTL_S)
        if changes is None:
            return
        for player_id in result.rated():
            pipe = HISTORY_LINE.on(self.redis)
            pipe.zadd(keys.history(player_id), {mid: result.ended_at})
            pipe.zremrangebyrank(keys.history(player_id), 0, -HISTORY - 1)
            await HISTORY_LINE.run(pipe)


def match_record(
    mid: str, table_id: str, code: str, result: MatchResult, changes: dict[str, Any] | None
) -> dict[str, Any]:
    """What a finished match leaves: enough for a history line and a replay's list of players.
    A player's id is kept for the rated only (the others are bots, or joined late)."""
    changes = changes or {}
    return {
        "match": mid,
        "table_id": table_id,
        "code": code,  # to tell whether its table is still open (gateway/profiles.py)
        "number": result.match,
        "players": result.players,
        "ended_at": result.ended_at,
        "scores": list(result.scores),
        "winners": list(result.winners),
        "rated": bool(changes),
        "seats": [
            {
                "seat": s.seat,
                "team": s.team,
                "name": s.name,
                "player": s.player_id,
                "before": changes.get(s.player_id or "", {}).get("before"),
                "after": changes.get(s.player_id or "", {}).get("after"),
            }
            for s in result.seats
        ],
    }
