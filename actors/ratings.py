"""Ratings in Redis (issue 36): each table size's ratings, leaderboard and applied matches. The
maths and the rule of what counts are the engine's (engine.ratings); this is where a match is
applied, exactly once. What a match leaves besides (its record, its players' history lines and
wins) is actors/match_records.py's; the putting right of matches rated by the rule before issue
46 is actors/rating_fix.py's.

Keys (actors/keys.py): every rating of one table size lives under one hash tag, `{ratings:N}`,
with its leaderboard and the ids of the matches already applied, so that applying a match is
one script on one slot: it checks that the match was not applied yet, that no player's rating
moved since it was read (another match of theirs ended meanwhile: read and compute again), that
no player deleted their profile, that the size's ratings are not being put right (a live freeze
of actors/rating_fix.py: try again later), then writes every rating, the leaderboard's scores
and what was applied at once. Run twice — a table actor restarted after the script ran, the
script's answer lost and sent again, a Redis failover after which the actor retries — it finds
the match applied and answers what it stored the first time.

A match that does not count (`engine.ratings.why_unrated`: a practice table, people on fewer
than two teams; issue 47: two of its people seen at one address, the same opponents past their
day's count, judged on what actors/rating_facts.py reads) never reaches the script: settling it
says why, and nothing is written here. A match that counts weighs 1/k as the k-th of its
opponents' day: the script checks that their count is still the one read, and adds the match to
it with the ratings. A match found applied is answered as it was applied before anything is
judged again (the facts may have moved since).
The leaderboard lists established players only: a player whose rating is still provisional
(fewer than `ESTABLISHED_AFTER` rated matches at the size) is rated, and not on the board.

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
from actors.rating_facts import met_keys, read_facts
from actors.store import NO_REPLICA_BACKOFF_S
from cluster.redis_client import AsyncRedis, RedisSettings
from cluster.redis_ops import Pipeline, Script, run_waited
from engine.ratings import (
    NEW,
    REPEAT_WINDOW_MS,
    MatchResult,
    Rating,
    provisional,
    rate,
    weight,
    why_unrated,
)

RATED_KEPT_MS = 30 * 24 * 3600 * 1000  # how long an applied match's id is remembered
TRIM_AT_ONCE = 100  # applied ids forgotten per script at most (bounded work per call)
ATTEMPTS = 20  # reads and computations when other matches of the same players keep ending

log = logging.getLogger("quatro.table")

# The rule a match was applied by, in what `rated` stores of it: 2 is issue 46's (people on two
# teams), 3 issue 47's (and not one person twice, the same opponents weighed by their day's
# count). What the release before issue 46 stored carries none, and is put right
# (actors/rating_fix.py).
RULE = 3

# KEYS: ratings, board, board names, rated, rated-at, unrated, fix, then each two opponents'
# count of the day (`keys.met`).
# ARGV: match id, now (ms), how long applied ids are kept, what is applied (`Settled`'s JSON),
# the opponents' count read (`Facts.met`), where their window starts and when the match ended
# (ms), then for each player: id, the version read ('0': none yet), the new rating's JSON
# (without its version), the leaderboard's score ('': not listed, the rating still
# provisional), and the name the leaderboard shows ('' for none).
# Returns {1, applied} applied (now or before), {0, ''} a rating or the opponents' count moved
# since it was read, {2, ''} a player deleted their profile, {3, ''} the size's ratings are
# being put right. A script because it is the one atomic step: the check that nothing moved
# and every write must see no other match's apply between them.
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
local freeze = redis.call('HGET', KEYS[7], 'freeze')
if freeze then
  local t = redis.call('TIME')
  local clock = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  if (tonumber(string.match(freeze, '(%d+)$')) or 0) > clock then return {3, ''} end
end
for i = 8, #ARGV, 5 do
  if redis.call('ZSCORE', KEYS[6], ARGV[i]) then return {2, ''} end
  local raw = redis.call('HGET', KEYS[1], ARGV[i])
  local v = 0
  if raw then v = tonumber(cjson.decode(raw)['v']) or 0 end
  if v ~= tonumber(ARGV[i + 1]) then return {0, ''} end
end
local met = 0
for k = 8, #KEYS do
  local n = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[k], ARGV[6], '+inf')) do
    if id ~= ARGV[1] then n = n + 1 end
  end
  if n > met then met = n end
end
if met ~= tonumber(ARGV[5]) then return {0, ''} end
for k = 8, #KEYS do
  redis.call('ZADD', KEYS[k], tonumber(ARGV[7]), ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', '(' .. ARGV[6])
  redis.call('PEXPIRE', KEYS[k], tonumber(ARGV[7]) - tonumber(ARGV[6]))
end
for i = 8, #ARGV, 5 do
  local rec = cjson.decode(ARGV[i + 2])
  rec['v'] = tonumber(ARGV[i + 1]) + 1
  redis.call('HSET', KEYS[1], ARGV[i], cjson.encode(rec))
  if ARGV[i + 3] == '' then
    redis.call('ZREM', KEYS[2], ARGV[i])
  else
    redis.call('ZADD', KEYS[2], tonumber(ARGV[i + 3]), ARGV[i])
  end
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


@dataclass(frozen=True, slots=True)
class Settled:
    """What settling a match did: each rated player's change ({before, after} as displayed, and
    `played`, their rated matches at the size once it counted), or why it rated nobody
    (`engine.ratings.Unrated`'s names). What `rated` stores of an applied match is its JSON."""

    changes: dict[str, dict[str, int]]
    reason: str | None = None
    rule: int = RULE  # 0: applied by the rule of the release before issue 46
    # Issue 47: the share of a whole match's move it was applied with (1/k for the k-th match
    # of its opponents' day, `engine.ratings.weight`); 1 for every entry before issue 47.
    weight: float = 1.0

    @property
    def rated(self) -> bool:
        return self.reason is None and bool(self.changes)

    def provisional(self, player_id: str) -> bool:
        """Whether the player's rating was still provisional after this match (an entry of
        the release before does not say: not marked)."""
        played = self.changes.get(player_id, {}).get("played")
        return played is not None and provisional(played)

    def to_json(self) -> str:
        data: dict[str, Any] = {"rule": self.rule, "changes": self.changes, "reason": self.reason}
        if self.weight != 1.0:
            data["weight"] = self.weight
        return json.dumps(data)

    @classmethod
    def read(cls, raw: str | bytes) -> Settled:
        """What `rated` holds: this release's shape, or the release before's (its changes by
        player id alone, rated by the rule before issue 46: `rule` 0)."""
        data = json.loads(raw)
        if "rule" not in data:
            return cls({str(p): dict(c) for p, c in data.items()}, None, 0)
        reason = data.get("reason")
        changes = {str(p): dict(c) for p, c in data["changes"].items()}
        return cls(
            changes,
            None if reason is None else str(reason),
            int(data["rule"]),
            float(data.get("weight", 1.0)),
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

    async def apply(self, mid: str, result: MatchResult, now_ms: int) -> Settled:
        """Apply the match's ratings once (the script above): each rated player's change, or
        why nobody was rated (the engine's reason; "profile" for a player without a profile,
        or who deleted it). Raises RuntimeError while the size's ratings are being put right,
        or when its players' ratings keep moving: the table tries again later."""
        reason = why_unrated(result)
        if reason is not None:
            return Settled({}, reason)
        ids = result.rated()
        if not await self.profiles_live(ids):
            return Settled({}, "profile")
        names = await self.listed_names(ids)
        n = result.players
        for _ in range(ATTEMPTS):
            if await self.redis.hexists(keys.rated(n), mid):
                # Applied already (this is a retry): answered as it was, whatever the facts
                # say now. The script answers it, so that its WAIT covers the first apply.
                status, stored, unconfirmed = await self._apply(n, [mid, now_ms, 0, "", 0, 0, 0])
            else:
                facts = await read_facts(self.redis, mid, result)
                reason = why_unrated(result, facts)
                if reason is not None:
                    return Settled({}, reason)
                share = weight(facts)
                before = await self.standings(n, list(ids))
                after = rate(result, {p: s.rating for p, s in zip(ids, before, strict=True)}, share)
                changes = {
                    p: {
                        "before": s.rating.display,
                        "after": after[p].display,
                        "played": s.played + 1,
                    }
                    for p, s in zip(ids, before, strict=True)
                }
                entry = Settled(changes, weight=share).to_json()
                start = result.ended_at - REPEAT_WINDOW_MS
                args: list[str | int | float] = [
                    *(mid, now_ms, RATED_KEPT_MS, entry, facts.met, start, result.ended_at)
                ]
                for p, s in zip(ids, before, strict=True):
                    won = 1 if result.won(p) else 0
                    new = Standing(after[p], s.played + 1, s.won + won, s.version)
                    listed = "" if provisional(new.played) else after[p].display
                    args += [p, s.version, new.to_json(), listed, names.get(p, "")]
                status, stored, unconfirmed = await self._apply(n, args, met_keys(result))
            if int(status) == 1:
                if unconfirmed is not None:
                    self._not_replicated(mid, now_ms, unconfirmed)
                self._unconfirmed = None
                return Settled.read(stored)
            if int(status) == 2:
                return Settled({}, "profile")
            if int(status) == 3:
                raise RuntimeError(f"match {mid}: the size's ratings are being put right")
        raise RuntimeError(f"match {mid}: its players' ratings kept moving; will try again")

    async def _apply(
        self, n: int, args: list[str | int | float], met: list[str] | None = None
    ) -> tuple[Any, Any, str | None]:
        """APPLY, followed by a WAIT when the store has replicas to wait for: its status, its
        answer, and None when the replicas have it (or none is waited for), else why not.
        `met`: the opponents' counts of the day (`keys.met`)."""
        names = [
            keys.ratings(n),
            keys.board(n),
            keys.board_names(n),
            keys.rated(n),
            keys.rated_at(n),
            keys.unrated(n),
            keys.rating_fix(n),
            *(met or []),
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
