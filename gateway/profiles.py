"""Player profiles (issue 36): the first session becomes a profile, which its owner may rename,
show or hide, and delete; what anyone else may read of it; reports of a name.

A profile is the player's id, a name, when it was made, and whether it lasts (issue 47: a
guest's expires with its last session, gateway/guests.py); its owner chooses what others see:
`ratings` (the name, the rating and matches played and won at each table size, and the name on
leaderboards) and `history` (the last matches, with their replays). Nothing else about a player
is ever public: not their sessions, passkeys, where they were seen, or the tables they sit at
now. Reports of a name are gateway/reports.py's.

Every write here touches one player's keys (one slot) or one table size's (`{ratings:N}`); an
operation over several (a rename shown on three leaderboards, a deletion) is a sequence of
such steps, each of them safe to run again, so a gateway that dies halfway leaves nothing a
second attempt cannot finish.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from actors import keys
from actors.ratings import Standing
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Pipeline, Script
from engine.cards import PLAYER_COUNTS
from engine.errors import ErrorCode
from engine.ratings import provisional, to_establish
from gateway.errors import ApiError
from gateway.guests import now_ms

DELETED_NAME = "deleted player"  # what a deleted player's seat in a match record says
GONE_TTL_S = 60 * 24 * 3600  # a deleted profile's tombstone outlives every session of it
HISTORY_PAGE = 20

# KEYS: a size's ratings, its leaderboard's names. ARGV: player, name ('' to remove). A name is
# listed only for a player rated at that size (the leaderboard lists only them): a script, so
# that a rating removed meanwhile (a deletion's FORGET) cannot be followed by its name coming back.
LIST_NAME = Script(
    "profiles.list-name",
    """
if ARGV[2] == '' then return redis.call('HDEL', KEYS[2], ARGV[1]) end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 0
""",
)

# KEYS: a size's unrated, ratings, board, names. ARGV: player, now (ms), keep (ms). The player
# is marked deleted first, so that a match of theirs applied meanwhile is refused (APPLY): a
# script, so that no APPLY runs between the mark and the removals and leaves a rating behind.
FORGET = Script(
    "profiles.forget",
    """
redis.call('ZADD', KEYS[1], tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return 1
""",
)

# KEYS: a match record. ARGV: player, the name to show instead. The seat keeps its place. A
# script: a read, a change and a write of one JSON value, which nothing may overwrite between.
SCRUB = Script(
    "profiles.scrub",
    """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
local changed = 0
for _, seat in ipairs(rec['seats']) do
  if seat['player'] == ARGV[1] then
    seat['player'] = cjson.null
    seat['name'] = ARGV[2]
    changed = 1
  end
end
if changed == 1 then
  redis.call('SET', KEYS[1], cjson.encode(rec), 'KEEPTTL')
end
return changed
""",
)

# KEYS: the player's profile, then its reports (`keys.reports`, `reporters`, `report_tags`).
# ARGV: '1' when renamed (its reports cleared), then field, value pairs. A script: a report
# counted between the new name and the clearing would hide the new name for what was said of
# the old one.
CHANGE = Script(
    "profiles.change",
    """
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if ARGV[1] == '1' then redis.call('DEL', KEYS[2], KEYS[3], KEYS[4]) end
return 1
""",
)


def report_keys(player_id: str) -> list[str]:
    """What a profile holds of reports of its name: the rule's before issue 47, and its."""
    return [keys.reports(player_id), keys.reporters(player_id), keys.report_tags(player_id)]


# A profile and its tombstone, read (one slot). Not atomic, and need not be: a deletion writes
# the tombstone before it removes the profile, and the tombstone is read after it here, so a
# read between finds the profile alive or the tombstone.
READ = Pipeline("profiles.read")
# A player's rating and rank at one table size (one slot, `{ratings:N}`): two reads, no write.
STANDING = Pipeline("profiles.standing")


@dataclass(frozen=True, slots=True)
class Profile:
    player_id: str
    name: str
    created: int
    ratings_public: bool
    history_public: bool
    name_hidden: bool  # reported by enough players: not shown until it changes
    lasting: bool  # issue 47: kept for good; False: a guest's, expiring with its sessions

    @property
    def public(self) -> bool:
        return self.ratings_public or self.history_public

    @classmethod
    def of(cls, player_id: str, raw: dict[str, Any]) -> Profile:
        return cls(
            player_id,
            str(raw["name"]),
            int(raw.get("created", 0)),
            raw.get("ratings_public") == "1",
            raw.get("history_public") == "1",
            raw.get("name_hidden") == "1",
            # Not judged yet (made before issue 47): its session's lookup judges it first.
            raw.get("lasting") != "0",
        )


class Profiles:
    def __init__(self, redis: AsyncRedis) -> None:
        self.redis = redis

    # -- the owner's ----------------------------------------------------------------------------
    async def get(self, player_id: str) -> Profile | None:
        """The profile, or None: never made, or deleted."""
        pipe = READ.on(self.redis)
        pipe.hgetall(keys.profile(player_id))
        pipe.exists(keys.profile_gone(player_id))
        raw, gone = await READ.run(pipe)
        if not raw or "name" not in raw or int(gone):
            return None
        return Profile.of(player_id, raw)

    async def gone(self, player_id: str) -> bool:
        return bool(await self.redis.exists(keys.profile_gone(player_id)))

    async def mine(self, player_id: str) -> Profile:
        found = await self.get(player_id)
        if found is None:
            raise ApiError(ErrorCode.UNKNOWN_PROFILE, "your profile was deleted")
        return found

    async def change(
        self,
        player_id: str,
        name: str | None,
        ratings_public: bool | None,
        history_public: bool | None,
    ) -> Profile:
        """Rename (which clears the name's reports) and show or hide; then each leaderboard
        shows the name, or not, as the profile now says."""
        before = await self.get(player_id)
        if before is None:
            raise ApiError(ErrorCode.UNKNOWN_PROFILE, "your profile was deleted")
        fields: dict[str, str] = {}
        if name is not None and name != before.name:
            fields |= {"name": name, "name_hidden": "0"}
        if ratings_public is not None:
            fields["ratings_public"] = "1" if ratings_public else "0"
        if history_public is not None:
            fields["history_public"] = "1" if history_public else "0"
        if fields:
            pairs = [x for field, value in fields.items() for x in (field, value)]
            await CHANGE.run(
                self.redis,
                [keys.profile(player_id), *report_keys(player_id)],
                ["1" if "name" in fields else "0", *pairs],
            )
        if "name" in fields:
            await self.redis.zrem(keys.REPORTED, player_id)  # a new name: nothing to review
        after = await self.get(player_id)
        if after is None:
            raise ApiError(ErrorCode.UNKNOWN_PROFILE, "your profile was deleted")
        await self.list_names(after)
        return after

    async def list_names(self, profile: Profile) -> None:
        """Each leaderboard shows the name of a player who shows their ratings (one step per
        table size)."""
        listed = profile.ratings_public and not profile.name_hidden
        for players in PLAYER_COUNTS:
            await LIST_NAME.run(
                self.redis,
                [keys.ratings(players), keys.board_names(players)],
                [profile.player_id, profile.name if listed else ""],
            )

    async def delete(self, player_id: str) -> None:
        """The profile goes, in steps each safe to repeat: the tombstone first (its sessions are
        refused and its pending matches not rated from now on), then its place on every
        leaderboard, its name in the records of its matches, its passkeys, its own keys."""
        await self.redis.set(keys.profile_gone(player_id), "1", ex=GONE_TTL_S)
        now = now_ms()
        for players in PLAYER_COUNTS:
            await FORGET.run(
                self.redis,
                [
                    keys.unrated(players),
                    keys.ratings(players),
                    keys.board(players),
                    keys.board_names(players),
                ],
                [player_id, now, GONE_TTL_S * 1000],
            )
        for match in await self.redis.zrange(keys.history(player_id), 0, -1):
            await SCRUB.run(self.redis, [keys.match(str(match))], [player_id, DELETED_NAME])
        for raw in (await self.redis.hgetall(keys.passkeys(player_id))).values():
            await self.redis.delete(keys.passkey(json.loads(raw)["credential"]))
        await self.redis.zrem(keys.REPORTED, player_id)
        await self.redis.delete(*keys.owned(player_id))

    async def level(self, player_id: str, players: int) -> int:
        """The player's level at a table size, for quick play (a new player's: 1000)."""
        return Standing.read(await self.redis.hget(keys.ratings(players), player_id)).rating.level

    # -- what a profile shows -----------------------------------------------------------------
    async def standings(self, player_id: str) -> dict[int, dict[str, Any] | None]:
        """The player's rating, played, won and rank at each table size (None: not rated),
        whether it is still provisional, and how many rated matches remain before it is
        listed (the rank is None until then)."""
        out: dict[int, dict[str, Any] | None] = {}
        for players in PLAYER_COUNTS:
            pipe = STANDING.on(self.redis)
            pipe.hget(keys.ratings(players), player_id)
            pipe.zrevrank(keys.board(players), player_id)
            raw, rank = await STANDING.run(pipe)
            if raw is None:
                out[players] = None
                continue
            s = Standing.read(raw)
            out[players] = {
                "rating": s.rating.display,
                "played": s.played,
                "won": s.won,
                "rank": None if rank is None else int(rank) + 1,
                "provisional": provisional(s.played),
                "remaining": to_establish(s.played),
            }
        return out

    async def history(self, player_id: str, own: bool) -> list[dict[str, Any]]:
        """The player's last matches, newest first. Another's view leaves out a match whose
        table is still open (a rematch under way would say where the player is now)."""
        ids = await self.redis.zrevrange(keys.history(player_id), 0, HISTORY_PAGE - 1)
        shown: dict[str, bool] = {}
        lines = []
        for mid in ids:
            raw = await self.redis.get(keys.match(str(mid)))
            if raw is None:
                continue  # expired
            record = json.loads(raw)
            if not own and await self._live(record):
                continue
            lines.append(await self._line(record, player_id, shown))
        return lines

    async def match_players(self, mid: str, shown: dict[str, bool]) -> list[dict[str, Any]] | None:
        """A finished match's seats as its record keeps them (a deleted player's as "deleted
        player"), each linked to its player's profile when that profile shows something; None
        when the match left no record (not rated, or expired)."""
        raw = await self.redis.get(keys.match(mid))
        if raw is None:
            return None
        record = json.loads(raw)
        return list((await self._line(record, "", shown))["seats"])

    async def _live(self, record: dict[str, Any]) -> bool:
        code = record.get("code")
        if not code:
            return False
        raw = await self.redis.get(keys.table(str(code)))
        if raw is None:
            return False
        try:
            return bool(json.loads(raw).get("table_id") == record["table_id"])
        except ValueError:
            return False

    async def _line(
        self, record: dict[str, Any], player_id: str, shown: dict[str, bool]
    ) -> dict[str, Any]:
        mine = next((s for s in record["seats"] if s["player"] == player_id), None)
        seats = []
        for s in record["seats"]:
            other = s["player"]
            if other is not None and other not in shown:
                found = await self.get(other)
                shown[other] = found is not None and found.public
            seats.append(
                {
                    "seat": s["seat"],
                    "team": s["team"],
                    "name": s["name"],
                    # A link to another's profile only when its owner shows one.
                    "profile": other if other is not None and shown.get(other) else None,
                }
            )
        team = None if mine is None else int(mine["team"])
        delta, played = None, None
        if mine is not None and mine.get("after") is not None:
            delta = int(mine["after"]) - int(mine["before"])
            played = mine.get("played")
        return {
            "match": record["match"],
            "table_id": record["table_id"],
            "players": record["players"],
            "ended_at": record["ended_at"],
            "scores": record["scores"],
            "winners": record["winners"],
            "team": team,
            "won": team is not None and team in record["winners"],
            "delta": delta,
            # Records before issue 46 say whether a match was rated, not why not.
            "rated": bool(record.get("rated", delta is not None)),
            "reason": record.get("reason"),
            "weight": record.get("weight"),
            "provisional": played is not None and provisional(int(played)),
            "seats": seats,
        }
