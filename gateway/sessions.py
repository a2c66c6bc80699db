"""Sessions in Redis: token -> player, and player -> (table, seat). Tokens are bearer secrets:
only their SHA-256 is stored, and they are never logged.

Each session names a player, whose profile (gateway/profiles.py) holds the name: a session made
on another device by a passkey names the same player, and a rename reaches them all. A profile
deleted ends every session of it (its tombstone is read with the name)."""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from dataclasses import dataclass

from actors import keys
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Pipeline
from gateway import profiles

# A session read and its lifetime renewed (one key).
LOOKUP = Pipeline("sessions.lookup")
# A player's seat at a table recorded or forgotten, and their record renewed (one key).
SEATED = Pipeline("sessions.seated")
# A session's player's name and profile tombstone read (the player's slot, one round trip). Not
# atomic, and need not be: a deletion writes the tombstone before it removes the profile, and
# the tombstone is read after the name here.
PLAYER = Pipeline("sessions.player")


@dataclass(frozen=True, slots=True)
class Session:
    player_id: str
    name: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Sessions:
    def __init__(self, redis: AsyncRedis, ttl_s: int) -> None:
        self.redis = redis
        self.ttl_s = ttl_s

    async def create(self, name: str, player_id: str | None = None) -> tuple[str, Session]:
        """A new session: of a new player (whose profile the caller makes), or of `player_id`
        (a passkey's sign-in on another device)."""
        token = secrets.token_urlsafe(32)  # 256 random bits
        session = Session(player_id=player_id or f"p-{uuid.uuid4().hex}", name=name)
        value = json.dumps({"player_id": session.player_id, "name": name})
        await self.redis.set(keys.session(token_hash(token)), value, ex=self.ttl_s)
        return token, session

    async def lookup(self, token: str) -> Session | None:
        """The session of `token`, its lifetime renewed; None for an unknown token."""
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
        # The player's own keys: one slot, one round trip.
        pipe = PLAYER.on(self.redis)
        pipe.hget(keys.profile(player_id), "name")
        pipe.exists(keys.profile_gone(player_id))
        name, gone = await PLAYER.run(pipe)
        if int(gone):
            return None  # the profile was deleted: none of its sessions goes on
        if name is None:
            # A session older than profiles (or one whose profile was not written yet): it
            # becomes the player's profile now, as the first session of a new player does.
            name = str(data["name"])
            await profiles.create(self.redis, player_id, name)
        return Session(player_id=player_id, name=str(name))

    async def seated(self, player_id: str, code: str, seat: int | None) -> None:
        key = keys.player_tables(player_id)
        pipe = SEATED.on(self.redis)
        if seat is None:
            pipe.hdel(key, code)
        else:
            pipe.hset(key, code, seat)
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
