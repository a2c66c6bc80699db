"""Every Lua script and every pipeline of the code, run against a real Redis Cluster through the
code that runs it: a script or a transaction naming keys of two slots fails here with CROSSSLOT
(and on any Redis with `CrossSlot`, before it is sent). No script or pipeline escapes: they are
all registered in cluster/redis_ops.py (made anywhere else, the second test fails), and the
first test fails for any registered one it did not run.

Ray is not needed: the table's core runs here as its actor runs it, and the gateway's rooms are
called as its routes call them."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import redis

from actors import departures, keys, legacy_keys
from actors.cells import Registry
from actors.match_records import MatchRecords
from actors.parking import PARK
from actors.pool_list import TRIM_ONE, PoolList
from actors.protocol import Entry
from actors.rating_fix import RatingFix
from actors.ratings import RULE, RatingStore, Settled, match_id
from actors.ray_names import RayActors
from actors.rescue import HAND_OVER, MOVE_HERE
from actors.snapshot import record_json
from actors.table_core import TableCore
from actors.table_records import TableRecords
from cluster import redis_ops
from cluster.redis_client import AsyncRedis, RedisSettings, async_redis, sync_redis
from cluster.redis_cluster import LocalRedisCluster
from engine.ratings import ESTABLISHED_AFTER, MatchResult, SeatResult
from gateway.address_tags import AddressTags
from gateway.errors import ApiError
from gateway.guest_migration import GuestMigration
from gateway.guests import Guests
from gateway.leaderboards import Leaderboards
from gateway.lobbies import OpenLobbies
from gateway.passkeys import Passkeys, Site
from gateway.profiles import DELETED_NAME, Profiles
from gateway.quickplay import QuickQueue
from gateway.rate_limit import Bucket, RateLimits
from gateway.reports import Reports
from gateway.routes.replays import READ, READ_LEGACY, locate, read
from gateway.sessions import Sessions
from loadtests.players_scale import fill, player_id
from loadtests.rating_fix_scale import fill as fill_rated
from tests.actors.test_table_core import Clock, act
from tests.release_before import Match, older_matches, tree, wire
from tests.store.soft_passkey import SoftPasskey

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("actors", "gateway", "cluster")
Case = Callable[[AsyncRedis, str], Awaitable[None]]


def import_all() -> None:
    """Every module of the code, so that every script and pipeline is registered."""
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if not info.name.endswith("__main__"):
                importlib.import_module(info.name)


async def open_table(url: str, name: str, code: str) -> TableCore:
    core = TableCore(name, url, now=Clock())
    answer = await core.open(code, {"players": 4, "seed": 7}, "p0", "Ann", (600.0, 600.0))
    assert answer.ok, answer
    return core


async def table_case(client: AsyncRedis, url: str) -> None:
    """Open (the code's leftovers cleared, the save), restore, stop: a table's whole life."""
    core = await open_table(url, "table-0c1", "OPS2")
    try:
        await core.serve(act("p0", "add_bot", seat=1))
        assert await core.store.beat("OPS2", 1_234)  # the stall's start, for the next one
        assert await client.get(keys.alive("OPS2")) == "1234"
        again = TableCore("table-0c1", url, now=Clock())  # a restarted incarnation
        assert again.store.alive_at == 1_234
        assert again.table is not None
        assert again.feed.seq == core.feed.seq
        await again.stop()
        assert await client.get(keys.table("OPS2")) is None
        assert 0 < await client.ttl(keys.snapshot("OPS2")) <= 300
    finally:
        await core.stop()


async def reuse_case(client: AsyncRedis, url: str) -> None:
    """Its table stopped, the actor goes on to the next (actors/reuse.py): its record of the
    table goes (`records.delete-if-same`), the table id's stays for the replay, its name joins
    the pool."""
    core = TableCore("table-0c9", url, now=Clock())
    settings = {"players": 4, "seed": 7}
    opened = await core.open("OPS9", settings, "p0", "Ann", (600.0, 600.0), table_id="table-0t9")
    assert opened.ok, opened
    await core.stop()
    assert await client.get(keys.actor("table-0c9")) == "OPS9"
    assert await core.store.release("OPS9")
    assert await client.get(keys.actor("table-0c9")) is None
    assert await client.get(keys.actor("table-0t9")) == "OPS9"
    fresh = TableCore("table-0c9", url, now=Clock())
    assert fresh.table is None  # a restart of the pooled actor finds no table
    try:
        assert await fresh.store.pooled()
        assert "table-0c9" in await client.lrange(keys.pool(), 0, -1)
    finally:
        await fresh.store.close()


async def durable_case(client: AsyncRedis, url: str) -> None:
    """A save that scores a point waits for a replica, on the slot's primary."""
    core = await open_table(url, "table-0c2", "OPS3")
    try:
        seq = core.feed.seq + 1
        reveal = Entry(seq, "all", 0, {"type": "reveal", "scores": [1, 0]}, 0, "")
        assert core.table is not None
        written = await core.store.write("OPS3", core.snapshot(), [reveal], 4, 3600, core.feed.seq)
        assert written.ok, written
        assert written.replicated, written
        assert core.store.settings.replicas_to_wait() == 1
        assert json.loads((await client.lrange(keys.log("OPS3"), -1, -1))[0])[0] == seq
    finally:
        await core.stop()


async def heal_case(client: AsyncRedis, url: str) -> None:
    """A log that lost writes (a primary failed over before its replica had them) is given its
    events again at the next save, in order."""
    core = await open_table(url, "table-0c3", "OPS4")
    try:
        await core.serve(act("p0", "add_bot", seat=1))
        before = [json.loads(x)[0] for x in await client.lrange(keys.log("OPS4"), 0, -1)]
        await client.ltrim(keys.log("OPS4"), 0, 0)  # as if the last writes never reached it
        await core.serve(act("p0", "add_bot", seat=2))
        after = [json.loads(x)[0] for x in await client.lrange(keys.log("OPS4"), 0, -1)]
        assert after[: len(before)] == before
        assert after == sorted(set(after))
        assert after[-1] == core.feed.seq
    finally:
        await core.stop()


async def bury_case(client: AsyncRedis, url: str) -> None:
    await client.set(keys.actor("table-0c4"), "OPS5")
    await client.set(keys.snapshot("OPS5"), json.dumps({"format": 99}))
    core = TableCore("table-0c4", url)
    assert core.lost
    assert "unknown snapshot format" in str(await client.get(keys.lost("OPS5")))
    assert await client.get(keys.snapshot("OPS5")) is None


async def legacy_case(client: AsyncRedis, url: str) -> None:
    """A table saved by the release before hash tags: restored from the old names (its replay
    moved at once, across slots), saved under the new ones, the old ones gone."""
    core = await open_table(url, "table-0c5", "OPS6")
    await core.serve(act("p0", "add_bot", seat=1))
    seq = core.feed.seq
    await core.stop()
    r = sync_redis(url, decode=False)
    try:
        pairs = [
            (keys.snapshot("OPS6"), legacy_keys.snapshot("OPS6")),
            (keys.log("OPS6"), legacy_keys.log("OPS6")),
            (keys.replay("OPS6", "table-0c5"), legacy_keys.replay("table-0c5")),
            (keys.replay_meta("OPS6", "table-0c5"), legacy_keys.replay_meta("table-0c5")),
        ]
        for new, old in pairs:
            dumped = r.dump(new)
            assert dumped is not None
            r.restore(old, 0, dumped, replace=True)
            r.delete(new)
    finally:
        r.close()
    again = TableCore("table-0c5", url, now=Clock())
    try:
        assert again.table is not None
        assert again.feed.seq == seq
        assert await client.exists(keys.replay("OPS6", "table-0c5"))
        assert not await client.exists(legacy_keys.replay("table-0c5"))
        await again.serve(act("p0", "add_bot", seat=2))
        assert not await client.exists(legacy_keys.snapshot("OPS6"), legacy_keys.log("OPS6"))
        log = [json.loads(x)[0] for x in await client.lrange(keys.log("OPS6"), 0, -1)]
        assert log == list(range(1, again.feed.seq + 1))  # the old log came along, healed
        where = await locate(client, "table-0c5")
        assert where.read is READ
        meta, events = await read(client, where)
        assert meta is not None
        assert json.loads(meta)["code"] == "OPS6"
        assert events
    finally:
        await again.stop()


async def replay_legacy_case(client: AsyncRedis, url: str) -> None:
    """A replay of a table that stopped before the upgrade is read where it was left."""
    await client.set(legacy_keys.replay_meta("table-0c6"), json.dumps({"code": "OLD1"}))
    await client.rpush(legacy_keys.replay("table-0c6"), json.dumps([1]))
    where = await locate(client, "table-0c6")
    assert where.read is READ_LEGACY
    meta, events = await read(client, where)
    assert meta is not None
    assert events == [json.dumps([1])]


async def records_case(client: AsyncRedis, url: str) -> None:
    records = TableRecords(client, RayActors("ops", RedisSettings(url)))
    code, record = await records.claim("table-0c7", 4)
    assert (await records.record(code) or {})["actor"] == "table-0c7"
    assert not await records.lost(code)
    assert not await records.older_release(code, record)  # no table saved under old names
    assert "table-0c7" in [name async for name in records.actor_names(5)]
    await records.drop(code, record, keys.actor("table-0c7"))
    assert await records.record(code) is None
    # A table an older release still saves: found under its old name.
    await client.set(legacy_keys.table("OLD2"), json.dumps({"actor": "table-0c8"}))
    assert (await records.record("OLD2") or {})["actor"] == "table-0c8"
    await client.set(legacy_keys.lost("OLD3"), "gone")
    assert await records.lost("OLD3")


async def cells_case(client: AsyncRedis, url: str) -> None:
    a = Registry(client, "ops-a", "127.0.0.1:1", 4)
    b = Registry(client, "ops-b", "127.0.0.1:2", 4)
    await a.publish(10, 20)
    await b.publish(5, 20)
    assert set(await a.cells()) >= {"ops-a", "ops-b"}
    await client.set(keys.table("OPS8"), json.dumps({"actor": "table-0c9", "cell": "ops-a"}))
    await a.opened("OPS8")
    assert await b.move("OPS8", "ops-a")
    assert not await a.move("OPS8", "ops-a")  # moved already: follow the winner
    assert json.loads(str(await client.get(keys.table("OPS8"))))["cell"] == "ops-b"
    assert await b.tables_of("ops-b", 5) == ["OPS8"]
    assert await a.tables_of("ops-a", 5) == []


async def pool_case(client: AsyncRedis, url: str) -> None:
    pool = PoolList(client, RayActors("ops", RedisSettings(url)), "ops")
    for name in ("table-0d1", "table-0d2", "table-0d3"):
        await pool.push(name)
    assert await pool.head(2) == ["table-0d1", "table-0d2"]
    await pool.trim(target=5, live=0)  # announces its target; nothing past it to stop
    assert await TRIM_ONE.run(client, [pool.key], [2]) == "table-0d3"
    assert await TRIM_ONE.run(client, [pool.key], [2]) is None


async def sessions_case(client: AsyncRedis, url: str) -> None:
    sessions = Sessions(client, 3600)
    token, session = await sessions.create("Ann")
    assert await sessions.lookup(token) == session
    await sessions.seated(session.player_id, "OPS9", 2)
    assert await sessions.tables(session.player_id, 5) == {"OPS9": 2}
    await sessions.seated(session.player_id, "OPS9", None)
    assert await sessions.tables(session.player_id, 5) == {}
    # Where the player sat last, read by a table whose people may have gone on from it: a
    # pipeline over two players' keys, each of its own slot.
    _, other = await sessions.create("Bea")
    await sessions.seated(other.player_id, "OPS9", 1)
    assert await departures.all_gone(client, "OPS9", [session.player_id]) is True
    both = [session.player_id, other.player_id]
    assert await departures.all_gone(client, "OPS9", both) is False


async def lobbies_case(client: AsyncRedis, url: str) -> None:
    lobbies = OpenLobbies(client, limit=2, ttl_s=600)

    async def phase_of(code: str) -> str | None:
        return "lobby"

    ticket = await lobbies.reserve("p-ops", phase_of)
    await lobbies.opened("p-ops", ticket, "OPSA")
    assert await client.smembers(keys.open_lobbies("p-ops")) == {"OPSA"}
    await lobbies.release("p-ops", "OPSA")


async def quick_case(client: AsyncRedis, url: str) -> None:
    quick = QuickQueue(client)
    assert await quick.seat(4, "tok-1", 10_000) == ("tok-1", 0)
    assert await quick.seat(4, "tok-2", 10_000) == ("tok-1", 1)
    await quick.opened("tok-1", "OPSB")
    assert await quick.code_of("tok-1", 1.0) == "OPSB"
    assert await quick.claim("p-ops", 5.0)
    await quick.drop("p-ops", was="pending")
    assert await quick.mine("p-ops") is None


async def limits_case(client: AsyncRedis, url: str) -> None:
    limits = RateLimits(client, {"ops": Bucket(rate=1.0, burst=2.0)})
    await limits.take("ops", "127.0.0.9")
    await limits.take("ops", "127.0.0.9")
    with pytest.raises(ApiError) as refused:
        await limits.take("ops", "127.0.0.9")
    assert refused.value.status == 429


async def rated_match(
    client: AsyncRedis, table_id: str, a: str, b: str, store: RatingStore | None = None
) -> str:
    """A 4-seat match of `a` (who shows her ratings) and `b`, each with a bot partner, rated and
    recorded as a table actor does it (by `store`, or one that waits for no replica); its id.
    Each had nine rated matches before it: this one lists them on the leaderboard."""
    profiles, guests = Profiles(client), Guests(client, 3600)
    await guests.create(a, "Ann", "tag-a")
    await guests.create(b, "Bob", "tag-b")
    await profiles.change(a, None, True, None)
    nine = json.dumps({"mu": 25.0, "sigma": 8.0, "played": ESTABLISHED_AFTER - 1, "v": 1})
    await client.hset(keys.ratings(4), mapping={a: nine, b: nine})
    seats = (
        SeatResult(0, 0, a, "Ann"),
        SeatResult(1, 1, b, "Bob"),
        SeatResult(2, 0, None, "Bot 3"),
        SeatResult(3, 1, None, "Bot 4"),
    )
    result = MatchResult(1, 4, (5, 2), seats, "normal", False, 1_000)
    store = store or RatingStore(client)
    mid = match_id(table_id, 1)
    settled = await store.apply(mid, result, 1_000)
    assert settled.rated
    assert set(settled.changes) == {a, b}
    assert await store.apply(mid, result, 1_000) == settled  # sent again: applied once
    await MatchRecords(client).record(mid, table_id, "OPSC", result, settled)
    return mid


SITE = Site("localhost", "http://localhost:8000")


async def add_passkey(client: AsyncRedis, player: str) -> SoftPasskey:
    """A passkey registered as the browser's page does it: options, then the device's answer."""
    passkeys, device = Passkeys(client, ""), SoftPasskey(SITE.rp_id, SITE.origin)
    asked = await passkeys.register_options(SITE, player, "Kay")
    answer = device.create(asked["options"])
    await passkeys.register(SITE, player, asked["challenge_id"], answer, "")
    return device


async def sign_in(client: AsyncRedis, device: SoftPasskey) -> str:
    passkeys = Passkeys(client, "")
    asked = await passkeys.sign_in_options(SITE)
    return await passkeys.sign_in(SITE, asked["challenge_id"], device.get(asked["options"]))


async def ratings_case(client: AsyncRedis, url: str) -> None:
    """A match rated once (the profiles checked, the one script on the size's slot), its record
    and each player's history line."""
    mid = await rated_match(client, "table-0e1", "p-opsr1", "p-opsr2")
    a, b = await RatingStore(client).standings(4, ["p-opsr1", "p-opsr2"])
    assert (a.played, a.won, a.version, b.played, b.won) == (10, 1, 2, 10, 0)
    assert await client.zrange(keys.history("p-opsr2"), 0, -1) == [mid]
    assert json.loads(str(await client.get(keys.match(mid))))["rated"] is True
    assert await client.hget(keys.board_names(4), "p-opsr1") == "Ann"
    assert await client.hget(keys.board_names(4), "p-opsr2") is None  # Bob shows nothing


async def ratings_waited_case(client: AsyncRedis, url: str) -> None:
    """A table's update of a match's ratings waits for the size's replica (APPLY, then WAIT
    on the slot's primary), and so does the same update sent again."""
    store = RatingStore(client, RedisSettings(url))
    assert store.settings is not None
    assert store.settings.replicas_to_wait() == 1
    await rated_match(client, "table-0e4", "p-opsw1", "p-opsw2", store)
    assert store.unreplicated == 0, "no replica confirmed an update"
    (a,) = await store.standings(4, ["p-opsw1"])
    assert (a.played, a.version) == (10, 2)


async def profiles_case(client: AsyncRedis, url: str) -> None:
    """A profile made once, shown, renamed, reported until hidden, read, then deleted in every
    step: its boards, its name in its matches' records, its passkeys, its own keys."""
    a = "p-opsp1"
    mid = await rated_match(client, "table-0e2", a, "p-opsp2")
    device = await add_passkey(client, a)
    profiles = Profiles(client)
    await Guests(client, 3600).create(a, "Other", None)  # made already: nothing changes
    renamed = await profiles.change(a, "Anna", True, True)
    assert (renamed.name, renamed.ratings_public, renamed.history_public) == ("Anna", True, True)
    assert await client.hget(keys.board_names(4), a) == "Anna"
    standing = (await profiles.standings(a))[4]
    assert standing is not None
    assert standing["played"] == 10
    assert standing["rank"] >= 1
    assert [line["match"] for line in await profiles.history(a, own=False)] == [mid]
    reports = Reports(client, profiles)
    for n, reporter in enumerate(("p-opsq1", "p-opsq2", "p-opsq3")):
        await standing_reporter(client, reporter)
        await reports.report(reporter, a, f"tag-{n}")
    hidden = await profiles.get(a)
    assert hidden is not None
    assert hidden.name_hidden
    assert await client.hget(keys.board_names(4), a) is None
    assert [row["player_id"] for row in await reports.reported(5)] == [a]
    assert await reports.review(a, "clear")  # an operator's: shown again, reports cleared
    assert await client.hget(keys.board_names(4), a) == "Anna"
    assert await reports.review(a, "hide")
    await profiles.change(a, "Annie", None, None)  # a new name: shown again, reports cleared
    assert await client.hget(keys.board_names(4), a) == "Annie"
    assert not await client.exists(keys.reporters(a))
    await profiles.delete(a)
    assert await profiles.get(a) is None
    assert await client.zscore(keys.board(4), a) is None
    assert await client.hget(keys.ratings(4), a) is None
    seats = json.loads(str(await client.get(keys.match(mid))))["seats"]
    assert (seats[0]["player"], seats[0]["name"]) == (None, DELETED_NAME)
    with pytest.raises(ApiError, match="no profile has this passkey"):
        await sign_in(client, device)


async def standing_reporter(client: AsyncRedis, player: str) -> None:
    """A kept profile a week old with five rated matches: its reports count."""
    guests = Guests(client, 3600)
    await guests.create(player, "Rex", None)
    assert await guests.keep(player)
    week_ago = int(time.time() * 1000) - 7 * 24 * 3600 * 1000
    await client.hset(keys.profile(player), "created", week_ago)
    five = json.dumps({"mu": 25.0, "sigma": 8.0, "played": 5, "v": 1})
    await client.hset(keys.ratings(6), player, five)


async def guests_case(client: AsyncRedis, url: str) -> None:
    """A guest's profile made, renewed by its session's use (where it was seen noted), kept;
    profiles made before issue 47 judged by the migration (its lease, its pages of sessions
    and profiles) and by a session's use."""
    sessions = Sessions(client, 3600, AddressTags(b"k" * 32))
    token, session = await sessions.create("Gus")
    guests = Guests(client, 3600)
    await guests.create(session.player_id, "Gus", "tag-g")
    assert await sessions.lookup(token, "192.0.2.7") == session
    assert await client.zcard(keys.seen(session.player_id)) == 2
    assert await guests.expires(session.player_id) is not None
    assert await guests.keep(session.player_id)
    assert await guests.expires(session.player_id) is None
    # Made before issue 47: one with a session, one rated, one with neither.
    old = ("p-opso1", "p-opso2", "p-opso3")
    for pid in old:
        await client.hset(keys.profile(pid), mapping={"name": pid, "created": 1})
    await client.set(keys.session("ops-old"), json.dumps({"player_id": old[0]}), ex=600)
    await client.hset(keys.ratings(8), old[1], json.dumps({"mu": 25.0, "sigma": 8.0}))
    report = await GuestMigration(client, "gw-ops", 3600).run()
    assert report.ran
    assert (report.lasting, report.guests, report.deleted) == (1, 1, 1)  # Gus was kept
    assert await client.hget(keys.profile(old[0]), "lasting") == "0"
    assert await client.exists(keys.profile(old[2])) == 0
    assert not (await GuestMigration(client, "gw-ops", 3600).run()).ran
    await client.hset(keys.profile("p-opso4"), mapping={"name": "Old", "created": 1})
    assert await guests.judge("p-opso4", 0) == 3


async def passkeys_case(client: AsyncRedis, url: str) -> None:
    """A passkey stored, listed, used to sign in on another device (the same player), its
    challenges used once, then removed; a second one that reads like it numbered apart, and
    renamed by its owner only."""
    player = "p-opsk1"
    device = await add_passkey(client, player)
    passkeys = Passkeys(client, "")
    (mine,) = await passkeys.mine(player)
    await add_passkey(client, player)
    labels = {line["label"] for line in await passkeys.mine(player)}
    assert labels == {"Passkey", "Passkey (2)"}
    second = next(line for line in await passkeys.mine(player) if line["id"] != mine["id"])
    renamed = await passkeys.rename(player, second["id"], "Téléphone 👩‍💻")
    assert renamed == {**second, "label": "Téléphone 👩‍💻"}
    assert second["id"] in {line["id"] for line in await passkeys.mine(player)}
    with pytest.raises(ApiError, match="no such passkey"):
        await passkeys.rename("p-opsk2", second["id"], "Mine now")
    await passkeys.remove(player, second["id"])
    with pytest.raises(ApiError, match="no such passkey"):
        await passkeys.rename(player, second["id"], "Back")
    assert [line["id"] for line in await passkeys.mine(player)] == [mine["id"]]
    assert await sign_in(client, device) == player
    asked = await passkeys.sign_in_options(SITE)
    answer = device.get(asked["options"])
    assert await passkeys.sign_in(SITE, asked["challenge_id"], answer) == player
    with pytest.raises(ApiError, match="expired or was used"):
        await passkeys.sign_in(SITE, asked["challenge_id"], answer)
    await passkeys.remove(player, mine["id"])
    assert await passkeys.mine(player) == []
    with pytest.raises(ApiError, match="no profile has this passkey"):
        await sign_in(client, device)


async def leaderboards_case(client: AsyncRedis, url: str) -> None:
    """A page with the caller's own row, and a row alone: a player who hides their ratings is
    ranked without a name."""
    a, b = "p-opsl1", "p-opsl2"
    await rated_match(client, "table-0e3", a, b)
    boards = Leaderboards(client)
    page = await boards.page(4, 1, b)
    assert page["total"] >= 2
    assert page["rows"]
    assert page["me"] is not None
    assert page["me"]["me"]
    assert page["me"]["name"] is None
    row = await boards.row(4, a)
    assert row is not None
    assert (row["name"], row["profile"], row["played"]) == ("Ann", a, 10)
    assert await boards.row(4, "p-opsl9") is None


async def rescue_case(client: AsyncRedis, url: str) -> None:
    """A table moved off a lost node into a pooled actor: the count, then the hand-over."""
    await client.set(keys.table("OPSR"), record_json("table-0r1", 4), ex=60)
    assert await MOVE_HERE.run(client, [keys.table("OPSR")], ["table-0r1", 0, "table-0r2"]) == 1
    assert await HAND_OVER.run(client, [keys.table("OPSR")], ["table-0r2", 1, "0"]) == 1
    record = json.loads(str(await client.get(keys.table("OPSR"))))
    assert (record["actor"], record["table_id"], record["moves"]) == ("table-0r2", "table-0r1", 1)


async def park_case(client: AsyncRedis, url: str) -> None:
    """A table parks (actors/parking.py): its record marked and counted, every key of its slot
    set to expire at once; then a wake's move and hand-over unmark it."""
    code = "OPSP"
    await client.set(keys.table(code), record_json("table-0p1", 4, table_id="t-0p"), ex=60)
    await client.set(keys.snapshot(code), "{}", ex=60)
    until = int(time.time() * 1000) + 30_000
    names = [keys.table(code), keys.snapshot(code), keys.log(code), keys.alive(code)]
    assert await PARK.run(client, names, ["", 0, "table-0p1", "1", until]) == 1
    assert 0 < await client.pttl(keys.snapshot(code)) <= 30_000
    assert await MOVE_HERE.run(client, [keys.table(code)], ["table-0p1", 1, "table-0p2"]) == 2
    assert await HAND_OVER.run(client, [keys.table(code)], ["table-0p2", 2, "0"]) == 1
    record = json.loads(str(await client.get(keys.table(code))))
    assert "parked" not in record
    assert (record["actor"], record["moves"]) == ("table-0p2", 2)


async def rating_fix_case(client: AsyncRedis, url: str) -> None:
    """Issue 46's putting right, on a cluster: the release before settles a match against bots
    alone and one of people on two teams (tests/release_before.py), then a fix: its lease, its
    reads of the size and of the records, its writes, each record's patch, its release."""
    a, b = "p-opsf1", "p-opsf2"
    for pid in (a, b):
        await Guests(client, 3600).create(pid, pid, None)
    first = int(time.time() * 1000) - 120_000
    with tempfile.TemporaryDirectory() as where:
        matches = wire([Match((a, None, None, None), (0, 5)), Match((a, b, None, None), (5, 1))])
        for m in matches:
            m["mid"] = f"ops-{m['mid']}"
        older_matches(tree(Path(where)), url, [{**m, "ended_at": first} for m in matches])
    before = await RatingStore(client).standings(4, [a])
    assert before[0].played == 2
    assert (await RatingFix(client, "gw-ops").check(4)).ran
    (after,) = await RatingStore(client).standings(4, [a])
    assert after.played == 1
    bots = json.loads(str(await client.get(keys.match("ops-t-0000.1"))))
    assert (bots["rated"], bots["reason"]) == (False, "bots")
    assert not (await RatingFix(client, "gw-ops").check(4)).ran


async def rating_fix_scale_case(client: AsyncRedis, url: str) -> None:
    """The fix's benchmark fill (matches as the release before left them), on a cluster, and
    the fix that puts them right: no entry of the rule before is left."""
    await fill_rated(client, 20, 6, 0.5, 46)
    assert (await RatingFix(client, "gw-ops").check(4)).ran
    entries = await client.hvals(keys.rated(4))
    assert entries
    assert all(Settled.read(e).rule == RULE for e in entries)


async def players_scale_case(client: AsyncRedis, url: str) -> None:
    """The 1,000,000-profile script's fill, on a cluster (a few players)."""
    await fill(client, 30, 36)
    assert await client.hget(keys.profile(player_id(29)), "name") == "Player 29"
    assert await client.hget(keys.ratings(4), player_id(29)) is not None
    for pid in await client.zrange(keys.board(4), 0, -1):  # the established only
        raw = await client.hget(keys.ratings(4), str(pid))
        assert json.loads(str(raw))["played"] >= ESTABLISHED_AFTER


CASES: list[Case] = [
    table_case,
    reuse_case,
    durable_case,
    heal_case,
    bury_case,
    legacy_case,
    replay_legacy_case,
    records_case,
    cells_case,
    rescue_case,
    park_case,
    pool_case,
    sessions_case,
    lobbies_case,
    quick_case,
    limits_case,
    ratings_case,
    ratings_waited_case,
    profiles_case,
    guests_case,
    passkeys_case,
    leaderboards_case,
    players_scale_case,
    rating_fix_case,
    rating_fix_scale_case,
]


async def test_every_script_and_pipeline_runs_on_a_cluster(
    redis_cluster: LocalRedisCluster,
) -> None:
    import_all()
    ran = redis_ops.record()
    client = async_redis(redis_cluster.url)
    try:
        for case in CASES:
            await case(client, redis_cluster.url)
    finally:
        # The session's cluster is left as found: the cases write old-named keys on purpose,
        # which a later test (test_upgrade's copy) would take for its own.
        await client.flushall()
        await client.aclose()
    registered = set(redis_ops.SCRIPTS) | set(redis_ops.PIPELINES)
    missing = sorted(registered - ran)
    assert not missing, f"never run on a cluster here (give each a case): {missing}"
    assert len(registered) >= 20  # every one of the code's is found, not an empty registry


# A script, a pipeline or a raw EVAL made anywhere but cluster/redis_ops.py would escape the
# registry (and so the test above), and the slot check.
MADE_ELSEWHERE = re.compile(r"register_script\(|\.pipeline\(|\.evalsha?\(|\.transaction\(")
# Registered at import: a module-level name, so that importing the module registers it.
DEFINED = re.compile(r"\b(Script|Pipeline)\(\s*\n?\s*\"")


def test_no_script_or_pipeline_is_made_outside_the_registry() -> None:
    offenders = []
    for package in (*PACKAGES, "loadtests"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "cluster" / "redis_ops.py":
                continue
            text = path.read_text()
            rel = path.relative_to(ROOT)
            for n, line in enumerate(text.splitlines(), 1):
                if MADE_ELSEWHERE.search(line) and not line.lstrip().startswith("#"):
                    offenders.append(f"{rel}:{n}: {line.strip()}")
            for match in DEFINED.finditer(text):
                line_start = text.rfind("\n", 0, match.start()) + 1
                head = text[line_start : match.start()]
                if not re.fullmatch(r"[A-Z][A-Z0-9_]* = ", head):
                    offenders.append(f"{rel}: {match.group(0)!r} not at module level")
    assert not offenders, "\n".join(offenders)


def test_a_script_across_slots_is_refused_before_it_is_sent() -> None:
    redis_ops.one_slot("one", [keys.snapshot("AB12CD"), keys.log("AB12CD"), keys.table("AB12CD")])
    with pytest.raises(redis_ops.CrossSlot, match="2 slots"):
        redis_ops.one_slot("two", [keys.snapshot("AB12CD"), keys.actor("table-1")])
    assert redis.crc.key_slot(keys.tag("AB12CD").encode()) == redis.crc.key_slot(b"AB12CD")
