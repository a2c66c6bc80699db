"""Sessions in Redis: token -> player, and player -> (table, seat). Tokens are bearer secrets:
only their SHA-256 is stored, and they are never logged.

Each session names a player, whose profile (gateway/profiles.py) holds the name: a session made
on another device by a passkey names the same player, and a rename reaches them all. A profile
deleted ends every session of it (its tombstone is read with the name).

Issue 47: every use of a session notes where it came from (an address tag, never the address:
gateway/address_tags.py) on its profile, the newest few only, and renews a guest's profile with
the session (gateway/guests.py): a guest's profile expires with its last session. A profile
made before issue 47 is judged when one of its sessions is next used."""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from dataclasses import dataclass

from actors import keys
from actors.profile_keys import LUA, OWNED, SEEN_MOST, SEEN_TTL_S
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Pipeline, Script
from gateway.address_tags import AddressTags
from gateway.guests import Guests, now_ms

# A session read and its lifetime renewed (one key).
LOOKUP = Pipeline("sessions.lookup")
# A player's seat at a table recorded or forgotten, and their record renewed; a seat taken
# (or said hello to) also names that table as the player's latest (two keys, two slots).
SEATED = Pipeline("sessions.seated")

# KEYS: the session's player's own keys (`keys.owned`), then their tombstone. ARGV: a session's
# lifetime (ms), the address tag it is used from ('' for none), now (ms), the most tags kept.
# Returns {name or nil, 1 when deleted, lasting or nil}: the name and tombstone read, where it
# was seen noted, a guest's keys renewed with its session. A script: a guest's keys renewed
# after a keep (which persists them) would set them expiring again.
TOUCH = Script(
    "sessions.touch",
    LUA
    + f"""
if redis.call('EXISTS', KEYS[{OWNED + 1}]) == 1 then return {{false, 1, false}} end
local name = redis.call('HGET', KEYS[1], 'name')
if not name then return {{false, 0, false}} end
local lasting = redis.call('HGET', KEYS[1], 'lasting')
if ARGV[2] ~= '' then
  redis.call('ZADD', KEYS[{OWNED}], tonumber(ARGV[3]), ARGV[2])
  redis.call('ZREMRANGEBYRANK', KEYS[{OWNED}], 0, -tonumber(ARGV[4]) - 1)
end
if lasting == '0' then
  expire(tonumber(ARGV[1]))
elseif ARGV[2] ~= '' then
  redis.call('PEXPIRE', KEYS[{OWNED}], {SEEN_TTL_S * 1000})
end
return {{name, 0, lasting}}
""",
)


@dataclass(frozen=True, slots=True)
class Session:
    player_id: str
    name: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Sessions:
    """`tags`: how addresses are tagged (none: tags off); a guest's profile follows `ttl_s`."""

    def __init__(self, redis: AsyncRedis, ttl_s: int, tags: AddressTags | None = None) -> None:
        self.redis = redis
        self.ttl_s = ttl_s
        self.tags = tags or AddressTags(None)
        self.guests = Guests(redis, ttl_s)

    async def create(self, name: str, player_id: str | None = None) -> tuple[str, Session]:
        """A new session: of a new player (whose profile the caller makes), or of `player_id`
        (a passkey's sign-in on another device)."""
        token = secrets.token_urlsafe(32)  # 256 random bits
        session = Session(player_id=player_id or f"p-{uuid.uuid4().hex}", name=name)
        value = json.dumps({"player_id": session.player_id, "name": name})
        await self.redis.set(keys.session(token_hash(token)), value, ex=self.ttl_s)
        return token, session

    async def lookup(self, token: str, address: str = "") -> Session | None:
        """The session of `token`, its lifetime renewed, used from `address` (the client's;
        "": none known); None for an unknown token."""
        if not token or len(token) > 256:
            return None
        key = keys.session(token_hash(token))
        pipe = LOOKUP.on(self.redis)
        pipe.get(key)
        pipe.expire(key, self.ttl_s)
        raw, _ = await LOOKUP.run(pipe)
        if raw is None:
            return None
        data = json.loads(raw)
        player_id = str(data["player_id"])
        tag = self.tags.tag(address)
        # The player's own keys: one slot, one round trip.
        name, gone, lasting = await TOUCH.run(
            self.redis,
            [*keys.owned(player_id), keys.profile_gone(player_id)],
            [self.ttl_s * 1000, tag or "", now_ms(), SEEN_MOST],
        )
        if int(gone):
            return None  # the profile was deleted: none of its sessions goes on
        if name is None:
            # A session older than profiles (or one whose profile was not written yet): it
            # becomes the player's profile now, as the first session of a new player does.
            name = str(data["name"])
            await self.guests.create(player_id, name, tag)
        elif lasting is None:
            # A profile made before issue 47, not judged yet: judged now, its session just
            # renewed.
            await self.guests.judge(player_id, now_ms() + self.ttl_s * 1000)
        return Session(player_id=player_id, name=str(name))

    async def seated(self, player_id: str, code: str, seat: int | None) -> None:
        """`player_id` holds `seat` at `code` now (and that table is their latest: a table
        every player of which went on to another stops soon, actors/departures.py), or none
        there any more (`seat` None: they left it, or its match is over)."""
        key = keys.player_tables(player_id)
        pipe = SEATED.on(self.redis)
        if seat is None:
            pipe.hdel(key, code)
        else:
            pipe.hset(key, code, seat)
            pipe.set(keys.player_latest(player_id), code, ex=self.ttl_s)
        pipe.expire(key, self.ttl_s)
        await SEATED.run(pipe)

    async def tables(self, player_id: str, most: int) -> dict[str, int]:
        """Up to `most` tables `player_id` took a seat at, code -> seat, as last recorded here
        (the table itself has the last word: a host may have freed the seat since)."""
        raw = await self.redis.hgetall(keys.player_tables(player_id))
        rows = sorted((_text(code), int(seat)) for code, seat in raw.items())
        return dict(rows[:most])


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
