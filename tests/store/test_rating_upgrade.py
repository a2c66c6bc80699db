"""Issue 46 on a store filled by the release before (b29edd8), with its real code: its gateway
and table actors, on the session's Ray in a namespace of their own and a Redis of their own,
play two matches of one person against bots (his partner a bot too) and one of two people on
two teams, and rate all three by the rule before. Then a gateway of this release starts on that
Redis and puts the ratings right by itself: the bots' changes are gone, the people's match
counts as this release rates it, the records and histories say which match was rated and why
not, the leaderboard holds only established players; a second run changes nothing."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from actors import keys
from actors.protocol import Act, Outcome, Serve
from actors.rating_fix import RatingFix
from actors.ratings import Standing
from actors.ray_calls import send
from cluster.gateway_process import ROOT, GatewayProcess
from cluster.procs import RedisServer
from cluster.redis_client import async_redis
from engine.ratings import ESTABLISHED_AFTER, NEW, MatchResult, Rating, SeatResult, rate
from tests.actors.test_rating_fix import everything
from tests.conftest import Stack
from tests.release_before import tree

VETERAN = "p-" + "e" * 32  # rated by hand as twelve matches of people would leave him


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tree(tmp_path_factory.mktemp("release-before"))


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.cleanup()


def gateway(stack: Stack, root: Path, url: str, namespace: str, logs: Path) -> GatewayProcess:
    return stack.gateway_of(
        root,
        logs,
        REDIS_URL=url,
        RAY_NAMESPACE=namespace,
        QUATRO_POOL_SIZE="1",
        QUATRO_POOL_MAX="1",
    )


class Host:
    """A person at the older gateway: REST there, and the table's commands sent to its actor
    over Ray (nobody is connected, so each round opens at once, R6)."""

    def __init__(self, base: str, name: str) -> None:
        r = httpx.post(f"{base}/api/sessions", json={"name": name}, timeout=30)
        assert r.status_code == 201, r.text
        self.base, self.session = base, r.json()
        self.auth = {"Authorization": f"Bearer {self.session['token']}"}
        self.sent = 0

    @property
    def id(self) -> str:
        return str(self.session["player_id"])

    def rest(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        r = httpx.request(method, self.base + path, json=body, headers=self.auth, timeout=30)
        assert r.is_success, r.text
        return r.json()

    def loses_a_match(self, stack: Stack, r: redis.Redis, code: str, namespace: str) -> None:
        """Five wrong Quatro! calls (his partner is an idle bot: no carré), so the other team
        wins 5-0; the host ends each pause."""
        ray = stack.driver()
        actor = json.loads(str(r.get(keys.table(code))))["actor"]
        handle = ray.get_actor(actor, namespace=namespace)
        for n in range(9):
            kind = "next_round" if n % 2 else "quatro"
            self.sent += 1
            act = Act.of(f"up-{self.sent}", "gw-test", self.id, kind, {})
            answer = ray.get(send(handle, Serve(act, code)), timeout=30)
            assert isinstance(answer, Outcome)
            assert answer.ok, answer


def table(host: Host, people: list[Host]) -> str:
    """A 4-seat table of the older release: `host` in seat 0, `people` in the next seats,
    idle bots in the rest; started."""
    scenario = {"seed": 5, "time_scale": 1.0, "bot_policy": "idle"}
    code = str(host.rest("POST", "/api/tables", {"players": 4, "scenario": scenario})["code"])
    for seat, p in enumerate(people, start=1):
        p.rest("POST", f"/api/tables/{code}/seats/{seat}")
    host.rest("POST", f"/api/tables/{code}/fill")
    host.rest("POST", f"/api/tables/{code}/start")
    return code


async def until(check: Any, limit: float = 90.0) -> Any:
    for _ in range(int(limit * 10)):
        if found := check():
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"not within {limit} s")


def ratings_keys(url: str) -> dict[str, Any]:
    """What a fix may write (its own marker aside); the tables' keys change as they live."""
    return everything(
        url,
        lambda k: (
            (k.startswith("quatro:{ratings:") and not k.endswith(":fix"))
            or k.endswith((":match", ":history", ":wins"))
        ),
    )


def standing(r: redis.Redis, player_id: str) -> Standing:
    return Standing.read(r.hget(keys.ratings(4), player_id))


async def test_a_store_of_the_release_before_is_put_right_when_this_release_starts(
    stack: Stack, older: Path, own_redis: RedisServer, tmp_path: Path
) -> None:
    namespace = f"ratings-{uuid.uuid4().hex[:6]}"
    r = redis.Redis.from_url(own_redis.url, decode_responses=True)
    old = gateway(stack, older, own_redis.url, namespace, tmp_path)
    new: GatewayProcess | None = None
    try:
        old.wait_ready()
        solo, bea = Host(old.url, "Solo"), Host(old.url, "Bea")
        # Two matches of Solo's against bots alone, his partner a bot: a rematch at one table.
        alone = table(solo, [])
        solo.loses_a_match(stack, r, alone, namespace)
        await until(lambda: standing(r, solo.id).played == 1)
        solo.rest("POST", f"/api/tables/{alone}/rematch")
        solo.loses_a_match(stack, r, alone, namespace)
        # Then Solo against Bea, a bot partner each: Bea wins 5-0.
        people = table(solo, [bea])
        solo.loses_a_match(stack, r, people, namespace)
        await until(lambda: standing(r, solo.id).played == 3 and standing(r, bea.id).played)
        rated = standing(r, solo.id)
        assert rated.rating.display != 1000, "the bots' matches moved his rating"
        assert r.zscore(keys.board(4), solo.id) is not None, "and listed him"
        old.stop()  # its actors play on, as workers of the release before would
        veteran = Standing(Rating(30.0, 2.0), 2 * ESTABLISHED_AFTER, 12, 1)
        r.hset(keys.ratings(4), VETERAN, json.dumps({**json.loads(veteran.to_json()), "v": 1}))
        r.zadd(keys.board(4), {VETERAN: veteran.rating.display})

        # This release's gateway starts, and puts the store right by itself.
        new = gateway(stack, ROOT, own_redis.url, namespace, tmp_path)
        new.wait_ready()
        await until(lambda: r.hget(keys.rating_fix(4), "done"), limit=60)
        # Issue 47: its start judges the profiles too; rated, both are kept for good.
        await until(lambda: r.hget(keys.GUEST_MIGRATION, "done"), limit=60)
        for p in (solo, bea):
            assert r.hget(keys.profile(p.id), "lasting") == "1"
            assert r.ttl(keys.profile(p.id)) == -1
        table_ids = {
            code: json.loads(str(r.get(keys.table(code))))["table_id"] for code in (alone, people)
        }
        # The people's match counts as this release rates it, from new ratings.
        seats = (
            SeatResult(0, 0, solo.id, "Solo"),
            SeatResult(1, 1, bea.id, "Bea"),
            SeatResult(2, 0, None, "Bot 3"),
            SeatResult(3, 1, None, "Bot 4"),
        )
        expected = rate(MatchResult(1, 4, (0, 5), seats, "normal", False, 0), {})
        for player, won in ((solo.id, 0), (bea.id, 1)):
            s = standing(r, player)
            assert (s.played, s.won) == (1, won)
            assert s.rating.mu == pytest.approx(expected[player].mu, abs=1e-9)
            assert s.rating.sigma == pytest.approx(expected[player].sigma, abs=1e-9)
        # Records: the bots' matches not rated, and why; the people's rated from 1000.
        for n in (1, 2):
            record = json.loads(str(r.get(keys.match(f"{table_ids[alone]}.{n}"))))
            assert (record["rated"], record["reason"]) == (False, "bots")
            assert [s["after"] for s in record["seats"]] == [None] * 4
        record = json.loads(str(r.get(keys.match(f"{table_ids[people]}.1"))))
        assert (record["rated"], record["reason"]) == (True, None)
        assert [s["before"] for s in record["seats"][:2]] == [NEW.display] * 2
        # Only the established player is listed.
        assert r.zrange(keys.board(4), 0, -1) == [VETERAN]

        # What Solo sees, through the new gateway.
        auth = {"Authorization": f"Bearer {solo.session['token']}"}
        async with httpx.AsyncClient(base_url=new.url, headers=auth, timeout=30) as c:
            me = (await c.get("/api/profiles/me")).json()
            four = me["ratings"]["4"]
            assert (four["played"], four["provisional"], four["remaining"]) == (1, True, 9)
            assert four["rank"] is None
            lines = {line["match"]: line for line in me["history"]}
            assert len(lines) == 3
            for n in (1, 2):
                line = lines[f"{table_ids[alone]}.{n}"]
                assert (line["rated"], line["reason"], line["delta"]) == (False, "bots", None)
            assert lines[f"{table_ids[people]}.1"]["rated"] is True
            own = (await c.get("/api/leaderboards/4/me")).json()
            assert (own["rank"], own["remaining"]) == (None, ESTABLISHED_AFTER - 1)
            board = (await c.get("/api/leaderboards/4")).json()
            assert [row["rating"] for row in board["rows"]] == [veteran.rating.display]

        # A second run, even forced, changes nothing of the ratings, entries, records, histories.
        before = ratings_keys(own_redis.url)
        client = async_redis(own_redis.url)
        try:
            assert (await RatingFix(client, "gw-again").check(4, again=True)).ran
        finally:
            await client.aclose()
        assert ratings_keys(own_redis.url) == before
    finally:
        old.stop()
        if new is not None:
            new.stop()
        r.close()
