"""Park and wake (actors/parking.py, actors/waking.py; issue 48): a table nobody has been
connected to for `QUATRO_PARK_AFTER` parks, its actor serving other tables meanwhile and
keeping nothing of it; the next call about it wakes it in a ready actor, exactly as it was,
its deadlines fired at their own times while it slept; two gateways waking it at once: one
wins, the other follows; a parked table whose own wait ends is gone, with the answer any
stopped table gives. On the session's Ray, with gateways of a Redis database of their own."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from actors import keys
from actors.directory import Directory, DirectorySettings
from actors.pool_demand import PoolPolicy
from actors.protocol import Probe, Status
from actors.table_records import Parked
from cluster.redis_client import async_redis
from tests.cluster.client import Player, Refused, table_with
from tests.cluster.nodes import ask_now
from tests.cluster.test_restore import until
from tests.cluster.test_reuse_audit import inspect, leaks
from tests.conftest import Gateway, Stack, database_url, gateway_of_its_own

OWN_DB = 11  # tests/README.md
# Parks a second after its last person left; a lobby nothing happens in ends 12 s after its
# last call (so that a parked one is seen to end; one whose wait ends within 5 s of its park
# stops instead); matches keep the stack's long wait.
PARK_AFTER, LOBBY_IDLE = "1", "12"
CREATIONS = 24  # lobbies opened, at most, until one lands on the actor a parked table left
SERVED: set[str] = set()  # actors of this module's tables (stopped at its end)


@pytest.fixture(scope="module")
def gateway_p(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    logs = tmp_path_factory.mktemp("gateway-p")
    with gateway_of_its_own(
        stack,
        OWN_DB,
        logs,
        SERVED,
        QUATRO_PARK_AFTER=PARK_AFTER,
        QUATRO_LOBBY_IDLE=LOBBY_IDLE,
        QUATRO_POOL_SIZE="2",
    ) as gw:
        yield gw


def own(stack: Stack) -> redis.Redis:
    return redis.Redis.from_url(database_url(stack, OWN_DB), decode_responses=True)


def record(r: redis.Redis, code: str) -> dict[str, Any] | None:
    raw = r.get(keys.table(code))
    return None if raw is None else dict(json.loads(raw))


def actor_of(r: redis.Redis, code: str) -> str:
    found = record(r, code)
    assert found is not None, f"no record of {code}"
    SERVED.add(str(found["actor"]))
    return str(found["actor"])


async def parked(r: redis.Redis, code: str, limit: float = 30) -> dict[str, Any]:
    """Until the table's record says it parked."""
    found: dict[str, Any] = await until(
        lambda: (rec := record(r, code)) is not None and rec.get("parked") and rec, limit, "parked"
    )
    return found


async def lobby(host: Player, r: redis.Redis) -> tuple[str, str]:
    answer = await host.rest("POST", "/api/tables", json={"players": 4})
    assert answer.status_code == 201, answer.text
    code = str(answer.json()["code"])
    return code, actor_of(r, code)


async def wakes(url: str, how: str = "won") -> float:
    """The gateway's wakes of parked tables: won, or lost to another gateway's and followed."""
    async with httpx.AsyncClient(timeout=10) as c:
        text = (await c.get(f"{url}/metrics")).text
    pattern = rf'^quatro_pool_woken_total{{how="{how}"}} ([0-9.e+-]+)$'
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


async def summary_of(url: str, code: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=url, timeout=60) as c:
        return await c.get(f"/api/tables/{code}")


async def test_a_lobby_nobody_is_connected_to_parks_its_actor_serves_on_and_a_call_wakes_it(
    stack: Stack, gateway_p: Gateway
) -> None:
    r = own(stack)
    host = await Player(gateway_p.url, f"Park-{uuid.uuid4().hex[:6]}").register()
    first, actor = await lobby(host, r)
    summary = (await host.rest("GET", f"/api/tables/{first}")).json()
    rec = await parked(r, first)
    assert rec["actor"] == actor
    assert rec["moves"] == 1
    # Its actor is back in the pool, holding no table, and a restart of it would find none.
    await until(lambda: actor in r.lrange(keys.pool(), 0, -1), 15, "the actor back in the pool")
    handle = stack.driver().get_actor(actor, namespace=stack.namespace)
    status: Status = ask_now(stack, handle, Probe())
    assert status.code == ""
    assert r.get(keys.actor(actor)) is None
    # ... and keeps nothing of the parked table (actors/kept.py, as tests/cluster/
    # test_reuse_audit.py looks through a reused actor).
    kept = inspect(stack, actor, (first, str(rec["table_id"]), host.player_id, host.token))
    assert kept.found == ()
    assert kept.engine == 0

    # It serves another table meanwhile (each opened by someone new: a player's open lobbies
    # are few, and counting them asks each, which would wake the parked ones).
    for i in range(CREATIONS):
        _, other_actor = await lobby(await Player(gateway_p.url, f"Next{i}").register(), r)
        if other_actor == actor:
            break
    assert other_actor == actor, f"no table landed on {actor} in {CREATIONS} creations"

    # A REST call about the parked lobby wakes it, in another actor, as it was.
    before = await wakes(gateway_p.url)
    again = await host.rest("GET", f"/api/tables/{first}")
    assert again.status_code == 200, again.text
    assert again.json() == summary
    now = record(r, first)
    assert now is not None
    assert "parked" not in now
    assert now["actor"] != actor
    SERVED.add(str(now["actor"]))
    assert await wakes(gateway_p.url) == before + 1


def reveal_in_log(r: redis.Redis, code: str) -> list[tuple[dict[str, Any], int]]:
    entries = [json.loads(x) for x in r.lrange(keys.log(code), 0, -1)]
    return [(e[3], e[4]) for e in entries if e[3].get("type") == "reveal"]


def seen(p: Player) -> dict[str, Any]:
    """What R25 promises a player who comes back: their hand, the centre, the scores, the
    clocks, their team's sign."""
    assert p.welcome is not None
    t = p.welcome["table"]
    return {k: t[k] for k in ("phase", "round", "hand", "center", "scores", "sign", "deadline")}


async def test_a_player_back_at_a_parked_match_finds_it_as_left_and_its_round_ended_on_time(
    stack: Stack, gateway_p: Gateway
) -> None:
    r = own(stack)
    # Two people (seats 0 and 1: two teams) and two silent bots; a round lasts 27 s here: the
    # first wake must come before its end, on a loaded machine too.
    code, (host, other) = await table_with(gateway_p.url, 4, 2, time_scale=0.15, seed=21)
    actor = actor_of(r, code)
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
    for p in (host, other):
        await p.wait_event(lambda e: e["type"] == "round", 30)
        await p.connect(code)  # the table as it stands, to compare with after the wake
    left = {p.seat: seen(p) for p in (host, other)}
    assert left[0]["phase"] == "playing"
    assert left[0]["hand"]
    assert left[0]["sign"] is not None
    for p in (host, other):
        await p.close()

    rec = await parked(r, code)
    assert rec["actor"] == actor
    # The host comes back mid-round: the same table (R25), in another actor.
    await host.connect(code)
    assert seen(host) == left[0]
    now = record(r, code)
    assert now is not None
    assert "parked" not in now
    assert now["moves"] == rec["moves"] + 1
    SERVED.add(str(now["actor"]))
    # ... and plays on.
    t = host.welcome["table"] if host.welcome else {}
    await host.ok("swap", card=t["hand"][0]["id"], slot=0, expect=t["center"][0]["id"])
    swapped = await host.wait_event(lambda e: e["type"] == "swapped")
    await host.close()

    # Parked again; its round's deadline passes while it sleeps.
    deadline = int(left[0]["deadline"])
    await parked(r, code)
    await until(lambda: time.time() * 1000 > deadline + 500, 60, "the round's deadline")
    assert reveal_in_log(r, code) == []  # nothing ran it meanwhile
    for p in (host, other):
        await p.connect(code)
    reveals = reveal_in_log(r, code)
    # R22, R24: the round ended void at its 3 (scaled) minutes, not when someone came back.
    assert [(w["reason"], at) for w, at in reveals][:1] == [("timeout", deadline)]
    assert reveals[0][0]["scores"] == left[0]["scores"]  # no point lost or invented
    assert host.welcome is not None
    assert host.welcome["table"]["scores"] == left[0]["scores"]
    # R30 on the woken table: every frame each seat got is its own to see.
    log = [json.loads(x) for x in r.lrange(keys.log(code), 0, -1)]
    found = leaks(host, host.seat, log, ()) + leaks(other, other.seat, log, ())
    assert sum(f.get("type") in ("welcome", "round", "sign") for f in host.order + other.order)
    assert found == []
    assert swapped["placed"]["id"] == t["hand"][0]["id"]
    for p in (host, other):
        await p.close()


async def test_a_parked_lobby_whose_own_wait_ends_is_gone_with_the_usual_answer(
    stack: Stack, gateway_p: Gateway
) -> None:
    r = own(stack)
    host = await Player(gateway_p.url, "Gone").register()
    code, _ = await lobby(host, r)
    await parked(r, code)
    # Nothing runs for it: its records expire when its lobby's wait (12 s here) ends it.
    await until(lambda: record(r, code) is None, 30, "the parked lobby's records expired")
    assert (await host.rest("GET", f"/api/tables/{code}")).status_code == 404
    with pytest.raises(Refused) as refused:
        await host.connect(code)
    assert refused.value.code == "unknown_table"
    mine = await host.rest("GET", "/api/sessions/tables")
    assert code not in {t["code"] for t in mine.json()["tables"]}


async def test_two_gateways_waking_one_table_at_once_one_wins_the_other_follows(
    stack: Stack, gateway_p: Gateway, tmp_path_factory: pytest.TempPathFactory
) -> None:
    r = own(stack)
    second = stack.gateway(
        tmp_path_factory.mktemp("gateway-p2"),
        REDIS_URL=database_url(stack, OWN_DB),
        QUATRO_PARK_AFTER=PARK_AFTER,
        QUATRO_LOBBY_IDLE=LOBBY_IDLE,
        QUATRO_POOL_SIZE="2",
    )
    try:
        second.wait_ready()
        host = await Player(gateway_p.url, "Race").register()
        code, _ = await lobby(host, r)
        rec = await parked(r, code)
        moves = int(rec["moves"])
        gateways = (gateway_p, second)
        won = [await wakes(g.url) for g in gateways]
        followed = [await wakes(g.url, "followed") for g in gateways]
        # Writes wait a moment (reads do not): both gateways read the parked record, then
        # both take a ready actor (a write) and try to name it at once.
        r.client_pause(1000, all=False)
        answers = await asyncio.gather(*(summary_of(g.url, code) for g in gateways))
        assert [a.status_code for a in answers] == [200, 200]
        assert answers[0].json() == answers[1].json()
        won = [await wakes(g.url) - n for g, n in zip(gateways, won, strict=True)]
        lost = [await wakes(g.url, "followed") - n for g, n in zip(gateways, followed, strict=True)]
        assert sorted(won) == [0, 1]  # one wake won; the other, when it came in time, followed
        assert lost[won.index(0)] in (0, 1)
        assert lost[won.index(1)] == 0
        rec2 = record(r, code)
        assert rec2 is not None
        SERVED.add(str(rec2["actor"]))
        # One move: a gateway that read the record after the winner's count, before its
        # hand-over, followed it rather than count again and take the table from under it.
        assert int(rec2.get("moves", 0)) == moves + 1
        assert "parked" not in rec2
    finally:
        second.stop()


async def test_two_wakes_from_one_read_of_the_record_one_wins_the_other_follows(
    stack: Stack, gateway_p: Gateway
) -> None:
    """The race above without its timing: two gateways' directories (in this process, on the
    stack's Ray), each handed the same read of the parked record, wake it at once. Exactly one
    moves it into its ready actor; the other gives its actor back and follows."""
    r = own(stack)
    host = await Player(gateway_p.url, "Same-read").register()
    code, _ = await lobby(host, r)
    rec = await parked(r, code)
    stack.driver()
    url = database_url(stack, OWN_DB)
    policy = PoolPolicy(minimum=0, maximum=0)
    settings = DirectorySettings(namespace=stack.namespace, store=url, pool=policy)
    clients = [async_redis(url, 5.0) for _ in range(2)]
    directories = [Directory(c, settings) for c in clients]
    try:
        read = Parked(code, str(rec["actor"]), int(rec["moves"]))
        await asyncio.gather(*(d.calls.wake(read) for d in directories))
        won = sorted(d.waking.woken for d in directories)
        followed = sorted(d.waking.followed for d in directories)
        assert (won, followed) == ([0, 1], [0, 1])
        now = record(r, code)
        assert now is not None
        assert "parked" not in now
        assert int(now["moves"]) == int(rec["moves"]) + 1
        SERVED.add(str(now["actor"]))
        answer = await host.rest("GET", f"/api/tables/{code}")
        assert answer.status_code == 200, answer.text
    finally:
        for d, c in zip(directories, clients, strict=True):
            await d.close()
            await c.aclose()
