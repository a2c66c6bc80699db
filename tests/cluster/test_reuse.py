"""A table actor serves table after table (actors/reuse.py): when its table stops it goes back to
the pool with a fresh incarnation, and reaches the next table only. A call about the ended
table, from a gateway that remembers the actor, finds that table gone; each table keeps its own
id, replay and record; an actor asked the older way (no table code) ends with its table."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from actors import keys
from actors.pool_list import PoolList
from actors.protocol import Probe, Status, Summary, TableNotHere
from actors.ray_names import RayActors
from cluster.redis_client import async_redis
from tests.cluster.client import Player, Refused, table_with
from tests.cluster.nodes import ask_now
from tests.cluster.test_restore import until
from tests.conftest import Gateway, Stack, database_url, gateway_of_its_own

CREATIONS = 24  # tables created, at most, until one lands on the reused actor


OWN_DB = 7  # tests/README.md
SERVED: set[str] = set()  # the actors that held this module's tables (stopped at its end)


@pytest.fixture(scope="module")
def gateway_r(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway whose empty lobbies stop 4 s after their last call (and tables everyone went
    on from a second after that was seen: actors/departures.py), with a pool of its
    own (Redis database 7). On the shared list, a name pushed back is the first a surplus trim
    takes (its tail), and the session's other gateways trim it as their own actors land; and a
    shared actor may have served its last table (QUATRO_ACTOR_TABLES; the stop CI of 45fa2bb:
    "not within 15 s: the actor back in the pool"). This pool's actors are new, and only this
    module moves them. Not 1 s: a test's next call to its lobby (a Probe through Ray, on a
    loaded machine) came once after the lobby had stopped."""
    logs = tmp_path_factory.mktemp("gateway-r")
    with gateway_of_its_own(
        stack,
        OWN_DB,
        logs,
        SERVED,
        QUATRO_LOBBY_IDLE="4",
        QUATRO_LEFT_IDLE="1",
    ) as gw:
        yield gw


def own(stack: Stack) -> redis.Redis:
    """A client of this module's database."""
    return redis.Redis.from_url(database_url(stack, OWN_DB), decode_responses=True)


def record(r: redis.Redis, code: str) -> dict[str, Any] | None:
    raw = r.get(keys.table(code))
    return None if raw is None else dict(json.loads(raw))


def pooled(r: redis.Redis) -> list[str]:
    return [str(n) for n in r.lrange(keys.pool(), 0, -1)]


async def lobby(host: Player) -> str:
    r = await host.rest("POST", "/api/tables", json={"players": 4})
    assert r.status_code == 201, r.text
    return str(r.json()["code"])


async def own_lobby(host: Player, r: redis.Redis) -> str:
    """A lobby opened through `gateway_r`, its actor remembered for the module's end."""
    code = await lobby(host)
    found = record(r, code)
    if found is not None:
        SERVED.add(str(found["actor"]))
    return code


async def stopped(host: Player, code: str) -> None:
    """Until the lobby `code` stopped by itself (nobody called it for 4 s)."""
    async with asyncio.timeout(30):
        while True:
            if (await host.rest("GET", f"/api/tables/{code}")).status_code == 404:
                return
            await asyncio.sleep(0.5)


async def test_an_ended_tables_actor_serves_the_next_table_and_only_it(
    stack: Stack, gateway_r: Gateway
) -> None:
    r = own(stack)
    driver = stack.driver()
    host = await Player(gateway_r.url, "Again").register()
    first = await own_lobby(host, r)
    rec = record(r, first)
    assert rec is not None
    actor, first_id = str(rec["actor"]), str(rec["table_id"])
    assert first_id != actor  # a table's id is its own: the actor's name outlives the table
    assert r.get(keys.actor(first_id)) == first  # its replay's way to its code
    handle = driver.get_actor(actor, namespace=stack.namespace)
    before: Status = ask_now(stack, handle, Probe())
    assert before.code == first

    await stopped(host, first)
    await until(lambda: actor in pooled(r), 15, "the actor back in the pool")
    again: Status = ask_now(stack, handle, Probe())
    assert (again.pid, again.code) == (before.pid, "")  # the same process, with no table
    assert again.incarnation != before.incarnation  # the last table's links are refused
    assert r.get(keys.actor(actor)) is None  # a restart now finds no table
    assert r.get(keys.actor(first_id)) == first  # the ended table's replay is still found

    # Tables until one lands on it (the pool hands out its head; it went to the tail).
    second = ""
    for _ in range(CREATIONS):
        code = await own_lobby(host, r)
        found = record(r, code)
        if found is not None and found["actor"] == actor:
            second, second_id = code, str(found["table_id"])
            break
    assert second, f"no table landed on {actor} in {CREATIONS} creations"
    assert second_id not in (first_id, actor)
    assert r.get(keys.actor(actor)) == second

    # The ended table, asked of the actor that held it: refused, never answered by the next.
    with pytest.raises(TableNotHere):
        ask_now(stack, handle, Summary(table=first))
    # And through a gateway that remembers the actor for it: gone, not the next table.
    assert (await host.rest("GET", f"/api/tables/{first}")).status_code == 404
    summary = ask_now(stack, handle, Summary(table=second))
    assert summary is not None
    assert summary.wire["code"] == second

    # Asked the older way (a call without a code, as a gateway of the release before sends):
    # this actor ends with its table instead of going back to the pool.
    assert ask_now(stack, handle, Summary()) is not None
    await stopped(host, second)
    await until(lambda: r.get(keys.table(second)) is None, 15, "the second table's record gone")

    def ended() -> bool:
        try:
            ask_now(stack, handle, Probe(), timeout=5)
        except Exception:
            return True
        return False

    await until(ended, 15, "the actor asked the older way ends with its table")
    assert actor not in pooled(r)


async def test_a_match_its_players_went_on_from_stops_soon_and_its_actor_serves_again(
    stack: Stack, gateway_r: Gateway
) -> None:
    """A started match whose two players both sit at other tables now (no socket here, and
    their latest table another: actors/departures.py) stops within seconds (QUATRO_LEFT_IDLE,
    1 s here, against the stack's 120 s for a match nobody is connected to), its actor goes
    back to the pool, and a player coming back to it is told what any stopped table tells:
    `unknown_table`, close 4404 (the web client's "There is no table with that code." and its
    way home)."""
    r = own(stack)
    code, people = await table_with(gateway_r.url, 4, 2)  # idle bots: a match that never ends
    rec = record(r, code)
    assert rec is not None
    actor = str(rec["actor"])
    SERVED.add(actor)
    handle = stack.driver().get_actor(actor, namespace=stack.namespace)
    before: Status = ask_now(stack, handle, Probe())
    host, friend = people
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
    for p in people:
        await p.close()
    for p in people:
        await own_lobby(p, r)  # each sits down at a table of their own: gone from this one

    await stopped(host, code)
    await until(lambda: actor in pooled(r), 15, "the actor back in the pool")
    again: Status = ask_now(stack, handle, Probe())
    assert (again.pid, again.code) == (before.pid, "")
    with pytest.raises(Refused) as refused:
        await friend.connect(code)
    assert refused.value.code == "unknown_table"
    assert await friend.wait_closed() == 4404


async def test_a_table_actor_on_the_pools_list_by_mistake_is_never_stopped_as_pooled(
    stack: Stack, gateway_r: Gateway
) -> None:
    """The pool stops actors it holds too many of (its trim, its spread): one whose name is on
    the list while it holds a table (pushed twice, put back by a caller that did not know) is
    left running, its table with it."""
    host = await Player(gateway_r.url, "Kept").register()
    r = own(stack)
    code = await own_lobby(host, r)
    rec = record(r, code)
    assert rec is not None
    actor = str(rec["actor"])
    handle = stack.driver().get_actor(actor, namespace=stack.namespace)
    url = database_url(stack, OWN_DB)
    client = async_redis(url)
    try:
        pool = PoolList(client, RayActors(stack.namespace, url))
        assert not await pool.stop(actor, handle)
        assert ask_now(stack, handle, Probe()).code == code
        assert (await host.rest("GET", f"/api/tables/{code}")).status_code == 200
    finally:
        await client.aclose()


async def test_an_actor_that_lost_track_of_its_table_takes_it_back_at_the_next_call(
    stack: Stack,
) -> None:
    """Redis lost the actor's own record of its table (`keys.actor`: a failover can lose a
    write its replica never got) and then the actor restarted: it comes back table-less. The
    next call finds that out (`TableNotHere`), and the actor takes the table back from its
    snapshot rather than the table being given up."""
    host = await Player(stack.a.url, "Lost").register()
    code = await lobby(host)
    assert (await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": 2})).is_success
    r = redis.Redis.from_url(stack.redis.url, decode_responses=True)
    rec = record(r, code)
    assert rec is not None
    actor = str(rec["actor"])
    driver = stack.driver()
    handle = driver.get_actor(actor, namespace=stack.namespace)
    before: Status = ask_now(stack, handle, Probe())
    r.delete(keys.actor(actor))
    driver.kill(handle, no_restart=False)  # Ray restarts it: it finds no record of a table

    def restarted() -> Status | None:
        try:
            status = ask_now(stack, handle, Probe(), timeout=5)
        except Exception:
            return None
        return status if status.incarnation != before.incarnation else None

    empty: Status = await until(restarted, 30, "the actor restarted")
    assert empty.code == ""
    answer = await host.rest("GET", f"/api/tables/{code}")
    assert answer.status_code == 200, answer.text
    seats = {row["seat"]: row["kind"] for row in answer.json()["seats"]}
    assert (seats[0], seats[2]) == ("human", "bot")  # the table as it was
    assert ask_now(stack, handle, Probe()).code == code
    assert r.get(keys.actor(actor)) == code
