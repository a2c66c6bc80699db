"""Issue 47's migration on a store filled by the release before it (d26b374, its own code: its
sessions, profiles, rating store, match records and passkeys, run in a subprocess on a real
redis-server): profiles with a rated match or a passkey become lasting, with all they hold;
the others become guests expiring with their newest session, their history and wins with
them, or go at once when no session is left; a second pass changes nothing; a profile the
release before makes after the pass (a roll's older gateway) is judged when its session is
next used by this release."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from actors import keys
from cluster.procs import RedisServer
from cluster.redis_client import async_redis
from gateway.guest_migration import GuestMigration
from gateway.sessions import Sessions
from tests.actors.test_rating_fix import everything
from tests.conftest import ROOT
from tests.release_before import BEFORE_GUESTS, tree

TTL_S = 600  # the release before's sessions here; one player has a second, of twice that

# Run in the release before's tree, as its routes and its table's results task do it.
_FILL = """
import asyncio, json, sys
sys.path.append(sys.argv[2])  # this repository's software passkey, nothing else of it
from actors.match_records import MatchRecords
from actors.ratings import RatingStore
from cluster.redis_client import async_redis
from engine.ratings import MatchResult, SeatResult
from gateway import profiles
from gateway.passkeys import Passkeys, Site
from gateway.sessions import Sessions
from tests.store.soft_passkey import SoftPasskey

async def main() -> None:
    plan = json.loads(sys.stdin.read())
    redis = async_redis(sys.argv[1])
    try:
        out = {}
        for name in plan["people"]:
            token, s = await Sessions(redis, plan["ttl"]).create(name)
            await profiles.create(redis, s.player_id, name)
            out[name] = {"id": s.player_id, "token": token}
        for name in plan["second_session"]:
            await Sessions(redis, 2 * plan["ttl"]).create(name, out[name]["id"])
        store, records = RatingStore(redis), MatchRecords(redis)
        for n, (people, scores) in enumerate(plan["matches"]):
            seats = tuple(
                SeatResult(s, s % 2, out[p]["id"] if p else None, p or f"Bot {s + 1}")
                for s, p in enumerate(people)
            )
            result = MatchResult(1, 4, tuple(scores), seats, "normal", False, 1_000 + n)
            mid = f"t-old{n}.1"
            settled = await store.apply(mid, result, 1_000 + n)
            await records.record(mid, f"t-old{n}", "OLDREL", result, settled)
        site = Site("localhost", "http://localhost:8000")
        for name in plan["passkeys"]:
            passkeys, device = Passkeys(redis, ""), SoftPasskey(site.rp_id, site.origin)
            asked = await passkeys.register_options(site, out[name]["id"], name)
            answer = device.create(asked["options"])
            await passkeys.register(site, out[name]["id"], asked["challenge_id"], answer, "")
        print(json.dumps(out))
    finally:
        await redis.aclose()

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tree(tmp_path_factory.mktemp("before-guests"), BEFORE_GUESTS)


@pytest.fixture
def redis_url() -> Iterator[str]:
    server = RedisServer().start()
    try:
        yield server.url
    finally:
        server.cleanup()


def fill(code: Path, url: str, plan: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The release before's code makes the plan's people, sessions, matches and passkeys."""
    done = subprocess.run(
        [sys.executable, "-c", _FILL, url, str(ROOT)],
        input=json.dumps(
            {"ttl": TTL_S, "second_session": [], "matches": [], "passkeys": []} | plan
        ),
        cwd=code,
        env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, dict[str, str]] = json.loads(done.stdout)
    return out


def with_last_session(r: redis.Redis, player: str, key: str) -> bool:
    """`key` expires when `player`'s newest session does (within a pipeline's latency): judged
    against the sessions themselves, not the time the test took, which a loaded machine
    stretches."""
    ends = [
        int(r.pexpiretime(k)) for k in r.scan_iter("quatro:session:*") if player in str(r.get(k))
    ]
    return bool(ends) and max(ends) - 5_000 <= int(r.pexpiretime(key)) <= max(ends) + 1_000


async def test_the_store_of_the_release_before_is_judged_once(redis_url: str, older: Path) -> None:
    plan = {
        "people": ["Rae", "Rob", "Bo", "Pia", "Vi", "Two", "Ex"],
        "second_session": ["Two"],
        # Rae beats Rob (people on two teams: rated); Bo wins against bots alone (not rated).
        "matches": [[["Rae", "Rob", None, None], [5, 2]], [["Bo", None, None, None], [5, 1]]],
        "passkeys": ["Pia"],
    }
    who = fill(older, redis_url, plan)
    ids = {name: p["id"] for name, p in who.items()}
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    # Ex's only session expired before this release came.
    r.delete(next(k for k in r.scan_iter("quatro:session:*") if ids["Ex"] in str(r.get(k))))
    assert r.zcard(keys.history(ids["Bo"])) == 1
    assert r.scard(keys.wins(ids["Bo"])) == 1
    assert all(r.hget(keys.profile(p), "lasting") is None for p in ids.values())
    client = async_redis(redis_url)
    try:
        report = await GuestMigration(client, "gw-test", TTL_S).run()
        assert report.ran
        assert (report.sessions, report.profiles) == (7, 7)
        assert (report.lasting, report.guests, report.deleted) == (3, 3, 1)
        for name in ("Rae", "Rob", "Pia"):
            assert r.hget(keys.profile(ids[name]), "lasting") == "1", name
            assert r.ttl(keys.profile(ids[name])) == -1, name
        assert r.ttl(keys.history(ids["Rae"])) == -1
        assert r.hlen(keys.passkeys(ids["Pia"])) == 1
        for name in ("Bo", "Vi", "Two"):
            assert r.hget(keys.profile(ids[name]), "lasting") == "0", name
            assert with_last_session(r, ids[name], keys.profile(ids[name])), name
        assert r.ttl(keys.profile(ids["Two"])) > TTL_S, "its newer session's"
        # A guest's history and wins go with it.
        for key in (keys.history(ids["Bo"]), keys.wins(ids["Bo"])):
            assert with_last_session(r, ids["Bo"], key), key
        assert not any(r.exists(k) for k in keys.owned(ids["Ex"]))
        assert all(r.hget(keys.profile(p), "session_until") is None for p in ids.values())

        # Again, even forced: nothing changes.
        before = everything(redis_url, lambda k: "guests" not in k)
        assert (await GuestMigration(client, "gw-other", TTL_S).run()).ran is False
        again = await GuestMigration(client, "gw-other", TTL_S).run(again=True)
        assert (again.judged_before, again.lasting, again.guests, again.deleted) == (6, 0, 0, 0)
        assert everything(redis_url, lambda k: "guests" not in k) == before

        # A gateway of the release before makes one more meanwhile: this release judges it
        # when its session is next used, and renews it with that session.
        late = fill(older, redis_url, {"people": ["Late"]})["Late"]
        sessions = Sessions(client, 3 * TTL_S)
        found = await sessions.lookup(late["token"], "192.0.2.1")
        assert found is not None
        assert r.hget(keys.profile(late["id"]), "lasting") == "0"
        assert with_last_session(r, late["id"], keys.profile(late["id"]))
        assert r.ttl(keys.profile(late["id"])) > 2 * TTL_S
        # And a session of a guest the pass judged renews all it holds.
        assert await sessions.lookup(who["Bo"]["token"], "192.0.2.1") is not None
        assert r.ttl(keys.history(ids["Bo"])) > TTL_S
    finally:
        await client.aclose()
        r.close()
