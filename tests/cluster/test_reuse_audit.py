"""What a reused table actor kept of its last table: nothing (issue 48). A table is dealt and
played a while (two players on opposite teams, two bots: hands, signs, sessions, a data-plane
link, the clock's and the bots' tasks), everyone leaves, and its actor goes back to the pool.
There, the actor is looked through (actors/kept.py, a test hook): no string of the first table
(its code, its id, its players' ids, names and tokens), no object of the engine, no task but
its look at the pool's list. Then the next table lands on the same actor and is played: the
actor still reaches nothing of the first, and every frame of the next table to each seat holds
nothing of the first table and only what R30 lets that seat see (checked against the table's
own log of events and audiences, as tests/cluster/test_r30_property.py does)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from actors import keys
from actors.kept import Inspect, Kept
from engine.events import Audience
from tests.cluster.client import Player
from tests.cluster.nodes import ask_now
from tests.cluster.test_restore import until
from tests.conftest import Gateway, Stack, database_url, gateway_of_its_own

OWN_DB = 10  # tests/README.md
SEATS = 4
CREATIONS = 24  # lobbies opened, at most, until one lands on the reused actor
SERVED: set[str] = set()  # actors of this module's tables (stopped at its end)
PRIVATE = ("round", "reshuffled", "sign")  # the events whose audience is not everyone


@pytest.fixture(scope="module")
def gateway_k(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A gateway with a pool of its own (database 10), whose started tables stop a second after
    everyone left them; a lobby lives 20 s without a call (its setup takes a few calls, each
    slow on a loaded machine)."""
    logs = tmp_path_factory.mktemp("gateway-k")
    with gateway_of_its_own(
        stack,
        OWN_DB,
        logs,
        SERVED,
        QUATRO_LOBBY_IDLE="20",
        QUATRO_ABANDONED_IDLE="1",
        QUATRO_POOL_SIZE="2",
    ) as gw:
        yield gw


def record(r: redis.Redis, code: str) -> dict[str, Any]:
    raw = r.get(keys.table(code))
    assert raw is not None, f"no record of table {code}"
    return dict(json.loads(raw))


async def lobby(host: Player, r: redis.Redis) -> tuple[str, str]:
    """A lobby of four with the test hooks' fast clock and smart bots: its code and actor."""
    scenario = {"seed": 11, "time_scale": 0.05, "bot_policy": "smart"}
    body = {"players": SEATS, "scenario": scenario, "bot_level": "sharp"}
    answer = await host.rest("POST", "/api/tables", json=body)
    assert answer.status_code == 201, answer.text
    code = str(answer.json()["code"])
    actor = str(record(r, code)["actor"])
    SERVED.add(actor)
    return code, actor


async def play(code: str, host: Player, other: Player) -> None:
    """Seat 0 the host, seat 1 `other` (the other team), bots at 2 and 3; both connect, the
    match starts, and play goes on until each has seen a hand and the host its team's sign."""
    answer = await other.rest("POST", f"/api/tables/{code}/seats/1")
    assert answer.status_code == 200, answer.text
    for seat in (2, 3):
        answer = await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})
        assert answer.status_code == 200, answer.text
    for p in (host, other):
        await p.connect(code)
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
    await host.until(lambda: dealt(host), 30, "the host's deal")
    await other.until(lambda: dealt(other), 30, "the other's deal")
    await host.until(lambda: any(f.get("type") == "sign" for f in host.events), 30, "a sign")


def dealt(p: Player) -> bool:
    return any(f.get("type") == "round" for f in p.events)


def inspect(stack: Stack, actor: str, needles: tuple[str, ...]) -> Kept:
    handle = stack.driver().get_actor(actor, namespace=stack.namespace)
    kept: Kept = ask_now(stack, handle, Inspect(needles=needles), timeout=60)
    assert not kept.cut, f"the walk stopped after {kept.walked} objects"
    return kept


def leaks(p: Player, seat: int, log: list[list[Any]], needles: tuple[str, ...]) -> list[str]:
    """What `p`, at `seat`, received that it should not have: anything naming the first table,
    and a private event (or a welcome's hand or sign) not addressed to its seat."""
    found: list[str] = []
    for f in p.order:
        text = json.dumps(f)
        found += [f"{p.name}: {f.get('type')} names {n!r}" for n in needles if n in text]
        kind = f.get("type")
        private = kind == "welcome" and bool(f["table"]["hand"] or f["table"]["sign"])
        if private and f["you"]["seat"] != seat:
            found.append(f"{p.name} (seat {seat}) welcomed as {f['you']['seat']}")
        if kind not in PRIVATE or "seq" not in f:
            continue
        body = {k: v for k, v in f.items() if k not in ("seq", "at")}
        entries = [e for e in log if e[3] == body and e[4] == f["at"]]
        if not any(Audience(e[1], e[2]).includes(seat, SEATS) for e in entries):
            found.append(f"{p.name} (seat {seat}) got a {kind} not addressed to it")
    return found


async def test_a_reused_actor_keeps_nothing_of_its_last_table(
    stack: Stack, gateway_k: Gateway
) -> None:
    r = redis.Redis.from_url(database_url(stack, OWN_DB), decode_responses=True)
    tag = uuid.uuid4().hex[:8]
    host = await Player(gateway_k.url, f"First-{tag}").register()
    other = await Player(gateway_k.url, f"Other-{tag}").register()
    first, actor = await lobby(host, r)
    first_id = str(record(r, first)["table_id"])
    await play(first, host, other)
    secrets_of_first = (first, first_id, host.player_id, other.player_id, host.token)
    needles = (*secrets_of_first, other.token, host.name, other.name)
    # While it plays, the walk does find them: what it looks through is where they live.
    live = inspect(stack, actor, needles)
    assert set(needles) - set(live.found) <= {host.token, other.token}, live.found
    assert live.engine > 0

    for p in (host, other):
        await p.close()
    pooled = lambda: actor in r.lrange(keys.pool(), 0, -1)  # noqa: E731
    await until(pooled, 30, "the first table's actor back in the pool")
    idle = inspect(stack, actor, needles)
    assert idle.found == (), f"the pooled actor still holds {idle.found}"
    assert idle.engine == 0, f"{idle.engine} objects of the engine left in the pooled actor"
    # No clock, bot, grace or link task: only its look at the list ("table <actor>:listing").
    assert {t.rsplit(":", 1)[-1] for t in idle.tasks} <= {"listing"}, idle.tasks

    # The next table on the same actor (the pool hands out its head; the actor went to its tail).
    nxt, nxt_actor = "", ""
    second = await Player(gateway_k.url, f"Second-{tag}").register()
    third = await Player(gateway_k.url, f"Third-{tag}").register()
    for _ in range(CREATIONS):
        nxt, nxt_actor = await lobby(second, r)
        if nxt_actor == actor:
            break
    assert nxt_actor == actor, f"no table landed on {actor} in {CREATIONS} creations"
    await play(nxt, second, third)
    again = inspect(stack, actor, needles)
    assert again.found == (), f"the next table's actor still holds {again.found}"

    log = [json.loads(x) for x in r.lrange(keys.log(nxt), 0, -1)]
    assert log, "the next table logged no event"
    found = leaks(second, 0, log, needles) + leaks(third, 1, log, needles)
    checked = sum(f.get("type") in PRIVATE for p in (second, third) for f in p.order)
    assert checked > 0
    assert found == [], found
    for p in (second, third):
        await p.close()
