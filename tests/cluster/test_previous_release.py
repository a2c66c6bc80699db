"""A rolling upgrade across typed table calls (actors/previous_release.py; remove with it): a
table actor of the previous release, with the records that release wrote, served by gateways
of this one, and then restarted on this release's code in the middle of its match.

The previous release's code is its commit's tree (`git archive`), run by a Ray driver of its
own: Ray puts a driver's working directory on its job's workers' path, and that directory is
the one place the old code lives, so the table's worker imports the old code, as a worker pod
of the old image would. Swapping that directory for this tree before the table is restarted is
what replacing the worker pod does: the same actor, restarted by Ray, loads this release.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tarfile
import uuid
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

import httpx
import redis.asyncio as aioredis

from actors import keys, legacy_keys
from actors.pool import Pool
from actors.pool_demand import PoolPolicy
from actors.previous_release import created_before
from actors.protocol import HandedOver, HandOver, Open, Probe
from actors.ray_calls import ActorGone, LastAnswer, ask
from actors.ray_names import RayActors, named
from actors.readiness import Readiness
from actors.slots import Slots
from actors.table_records import TableRecords
from tests.cluster.client import Frame, Player, rigged_deal
from tests.cluster.nodes import ray_get
from tests.cluster.test_play import card_of, swap_until_ack
from tests.cluster.test_resilience import open_round
from tests.conftest import ROOT, Stack

PREVIOUS_RELEASE = "72e36a3"  # the last commit whose gateways called table actors by name
PACKAGES = ["actors", "engine", "cluster"]  # what a table actor's worker imports

# The previous release's code opening a table as its gateway did (actors/directory.py of that
# commit: a detached actor, the code's record, `open`), and starting a pooled actor beside it.
OPEN_AS_BEFORE = """
import json, sys, uuid
import ray, redis
from actors import keys
from actors.directory import new_code
from actors.table_actor import actor_class, record_json
from cluster.connect import reread_ray_env, stay_on_loopback
from engine.config import DealSpec

a = json.loads(sys.argv[1])
stay_on_loopback(a["address"])
reread_ray_env()
ray.init(address=a["address"], namespace=a["namespace"], log_to_driver=False)
cls = actor_class()
table, pooled = (f"{keys.ACTOR_PREFIX}{uuid.uuid4().hex[:12]}" for _ in range(2))
handles = [
    cls.options(name=n, namespace=a["namespace"], lifetime="detached", get_if_exists=True)
    .remote(n, a["redis_url"], "")
    for n in (table, pooled)
]
ray.get([h.ping.remote() for h in handles], timeout=120)
code = new_code()
assert redis.Redis.from_url(a["redis_url"]).set(
    keys.table(code), record_json(table, 4), nx=True, ex=24 * 3600
)
hands = tuple(tuple(h) for h in a["deal"]["hands"])
deal = DealSpec(hands=hands, center=tuple(a["deal"]["center"]))
config = {"players": 4, "seed": 7, "time_scale": 1.0, "bot_policy": "idle", "deals": (deal,)}
reply = ray.get(handles[0].open.remote(code, config, a["host"], "Host", (60.0, 300.0, 120.0), 3600))
assert reply["ok"], reply
print(json.dumps({"code": code, "table": table, "pooled": pooled}))
"""


def previous_tree(dest: Path) -> None:
    """The previous release's packages, from git (a clean clone has the commit)."""
    out = subprocess.run(
        ["git", "-C", str(ROOT), "archive", PREVIOUS_RELEASE, *PACKAGES],
        capture_output=True,
        check=False,
    )
    assert out.returncode == 0, f"commit {PREVIOUS_RELEASE} is needed: {out.stderr.decode()}"
    dest.mkdir()
    with tarfile.open(fileobj=BytesIO(out.stdout)) as tar:
        tar.extractall(dest, filter="data")


def open_as_before(stack: Stack, release: Path, host: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("RAY_AUTH_TOKEN", None)
    env.update(stack.head.driver_env(), PYTHONPATH=str(release))
    args = {
        "address": stack.head.address,
        "namespace": stack.namespace,
        "redis_url": stack.redis.url,
        "host": host,
        "deal": rigged_deal(4),
    }
    done = subprocess.run(
        [sys.executable, "-c", OPEN_AS_BEFORE, json.dumps(args)],
        cwd=release,  # the job's code path, on every worker of its actors
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    opened: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return opened


def has_ask(stack: Stack, handle: Any) -> bool:
    """Whether the actor's process runs this release: Ray's `__ray_call__` runs `dir` on it."""
    return "ask" in ray_get(stack, handle.__ray_call__.remote(dir))


async def rest(p: Player, base: str, method: str, path: str) -> httpx.Response:
    """A REST call of `p` through a gateway where it has no socket (so over Ray)."""
    async with httpx.AsyncClient(base_url=base, headers=p.auth, timeout=60) as c:
        return await c.request(method, path)


def swapped(seat: int, slot: int | None = None) -> Callable[[Frame], bool]:
    return lambda e: e["type"] == "swapped" and e["seat"] == seat and slot in (None, e["slot"])


async def score_a_point(host: Player, partner: Player, round_of_partner: Frame) -> None:
    """The rigged deal: the partner swaps both kings for the centre's aces, the host calls."""
    centre, hand = round_of_partner["center"], list(round_of_partner["hand"])
    for _ in range(2):
        king = card_of(hand, "K")
        slot = next(i for i, c in enumerate(centre) if c["rank"] == "A")
        await swap_until_ack(partner, king["id"], slot, centre[slot]["id"])
        await host.wait_event(swapped(seat=2, slot=slot))
        hand = [c for c in hand if c["id"] != king["id"]] + [centre[slot]]
        centre = [king if i == slot else c for i, c in enumerate(centre)]
    await host.ok("quatro")
    reveal = await host.wait_event(lambda e: e["type"] == "reveal")
    assert (reveal["correct"], reveal["scores"]) == (True, [1, 0]), reveal


async def test_a_table_of_the_previous_release_plays_on_through_the_upgrade(
    stack: Stack, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    previous_tree(release)
    ray = stack.driver()
    r = aioredis.Redis.from_url(stack.redis.url, decode_responses=True)
    host, partner = Player(stack.a.url, "Host"), Player(stack.a.url, "Partner")
    guest = Player(stack.a.url, "Guest")
    people = [host, partner, guest]
    handle: Any = None
    pooled: Any = None
    pooled_name = ""
    codes: list[str] = []
    cell = f"compat-{uuid.uuid4().hex[:6]}"
    try:
        for p in people:
            await p.register()
        opened = await asyncio.to_thread(open_as_before, stack, release, host.player_id)
        code, pooled_name = opened["code"], opened["pooled"]
        codes.append(code)
        handle = named(opened["table"], stack.namespace)
        pooled = named(pooled_name, stack.namespace)
        assert handle is not None
        assert pooled is not None
        # The previous release's code runs there, and its name says so: what a gateway of this
        # release meets for every table opened before its upgrade.
        assert not has_ask(stack, handle)
        assert created_before(handle)
        assert (await ask(handle, Probe())).code == code

        # Seated, bots added and the match started through this release's gateways: gateway b
        # over Ray (no socket there), gateway a over the data plane.
        b = stack.b.url
        assert (await rest(partner, b, "POST", f"/api/tables/{code}/seats/2")).status_code == 200
        for seat in (1, 3):
            r_bot = await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})
            assert r_bot.status_code == 200, r_bot.text
        for p in (host, partner):
            assert (await p.connect(code, stack.a.url))["you"]["seat"] in (0, 2)
        rounds = await open_round(code, [host, partner])

        # REST over Ray: the summary, the caller's seat, and a command the previous release
        # does not have (refused, over Ray as over the data plane).
        summary = await rest(host, b, "GET", f"/api/tables/{code}")
        assert (summary.json()["players"], summary.json()["phase"]) == (4, "playing")
        mine = (await rest(host, b, "GET", "/api/sessions/tables")).json()["tables"]
        assert [(t["code"], t["seat"]) for t in mine] == [(code, 0)]
        for base in (b, stack.a.url):  # over Ray, and over the data plane (host's socket)
            refused = await rest(host, base, "POST", f"/api/tables/{code}/fill")
            assert refused.json()["error"]["code"] == "unknown_type", refused.text

        # The readiness probe counts an actor of the previous release (here a pooled one, on
        # a pool list of its own, the only actor the probe may ask).
        actors = RayActors(stack.namespace, stack.redis.url, cell)
        records = TableRecords(r, actors, cell)
        pool = Pool(r, Slots(0), actors, LastAnswer(), PoolPolicy(0, 0), cell)
        readiness = Readiness(pool, records, actors, LastAnswer())
        await pool.shared.push(pooled_name)
        assert await readiness.reach_tables(20) == "ok"
        await r.delete(keys.pool(cell), keys.pool_targets(cell))
        await readiness.close()
        await pool.close()

        # A new gateway opens a table on a pooled actor of the previous release (first in the
        # shared list, as a pooled actor left by that release's gateways).
        await r.lpush(keys.pool(), pooled_name)
        created = await guest.rest("POST", "/api/tables", json={"players": 4})
        assert created.status_code == 201, created.text
        other = created.json()["code"]
        codes.append(other)
        # Its record names the pooled actor: under the older name, which that actor saves
        # (actors/legacy_keys.py), or this release's, which the gateway claimed.
        records_of = [await r.get(k) for k in (keys.table(other), legacy_keys.table(other))]
        assert pooled_name in {json.loads(x or "{}").get("actor") for x in records_of}
        assert not has_ask(stack, pooled)
        assert (await guest.connect(other, stack.a.url))["you"]["seat"] == 0
        again = await ask(pooled, Open(other, {"players": 4}, "p-x", "X", (60.0,) * 3, 60))
        assert again.error is not None
        assert (again.ok, again.error.code) == (False, "not_allowed")  # the one refusal type
        await guest.close()

        # Play: a point scored at the table of the previous release, then the next round.
        await score_a_point(host, partner, rounds[2])
        rounds = await open_round(code, [host, partner])
        before = (await partner.connect(code, b))["table"]  # the partner's socket moves to b
        assert before["scores"] == [1, 0]

        # The drain: its state confirmed in Redis, the worker's code replaced, Ray restarts it.
        handed = await ask(handle, HandOver())
        assert handed == HandedOver(code, True)
        incarnation = (await ask(handle, Probe())).incarnation
        release.rename(tmp_path / "previous")
        release.symlink_to(ROOT, target_is_directory=True)
        ray.kill(handle, no_restart=False)
        async with asyncio.timeout(120):
            while True:
                with contextlib.suppress(*ActorGone):
                    status = await ask(handle, Probe())
                    if status.incarnation != incarnation:
                        break
                await asyncio.sleep(0.2)
        assert has_ask(stack, handle)  # this release's code, behind the previous one's handle

        # The same sockets play on, with the score: a swap through gateway b, seen on a.
        hand, centre = rounds[2]["hand"], rounds[2]["center"]
        mark = host.last_seq
        await swap_until_ack(partner, hand[0]["id"], 1, centre[1]["id"])
        seen = await host.wait_event(swapped(seat=2), after=mark)
        assert seen["placed"]["id"] == hand[0]["id"]
        after = (await host.connect(code, b))["table"]
        assert after["scores"] == [1, 0]
        assert (after["round"], after["phase"]) == (before["round"], "playing")
        assert after["hand"] == rounds[0]["hand"]
        # This release's engine judges it now (over the data plane: both sockets are on b).
        refused = await rest(host, b, "POST", f"/api/tables/{code}/fill")
        assert refused.json()["error"]["code"] == "wrong_phase", refused.text
        # And every call a gateway makes reaches it under the previous release's names: REST
        # through gateway a (no socket there now, so over Ray), a hand-over, a second opening.
        summary = await rest(host, stack.a.url, "GET", f"/api/tables/{code}")
        assert (summary.json()["players"], summary.json()["phase"]) == (4, "playing")
        mine = (await rest(partner, stack.a.url, "GET", "/api/sessions/tables")).json()["tables"]
        assert [(t["code"], t["seat"]) for t in mine] == [(code, 2)]
        assert await ask(handle, HandOver()) == HandedOver(code, True)
        again = await ask(handle, Open(code, {"players": 4}, "p-x", "X", (60.0,) * 3, 60))
        assert again.error is not None
        assert (again.ok, again.error.code) == (False, "not_allowed")
        for p in (host, partner):
            assert not p.problems
    finally:
        for p in people:
            with contextlib.suppress(Exception):
                await p.close()
        with contextlib.suppress(Exception):  # no gateway brings these tables back
            await r.delete(*(keys.table(c) for c in codes))
            await r.delete(*(legacy_keys.table(c) for c in codes))
        for actor in (handle, pooled):  # stopped with the code they loaded still in place
            if actor is not None:
                with contextlib.suppress(Exception):
                    ray.kill(actor, no_restart=True)
        with contextlib.suppress(Exception):
            await r.delete(keys.pool(cell), keys.pool_targets(cell))
            await r.lrem(keys.pool(), 0, pooled_name)
        await r.aclose()
        if release.is_symlink():
            release.unlink()
