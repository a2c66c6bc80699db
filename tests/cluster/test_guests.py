"""What costs nothing to make weighs nothing (issue 47), through gateways of their own on the
session's stack, with address tags on and 127.0.0.1 a trusted proxy, so that each person comes
from the address their `X-Forwarded-For` names:

- two profiles of one address at one table rate nothing; two people of two addresses are
  rated, and the first rated match keeps their profiles for good;
- a guest's profile is gone, with all it holds, once its last session expires (a gateway whose
  sessions last 3 s); a profile its owner kept stays;
- three sessions of one address cannot hide a name: new profiles cannot report, and three
  profiles of standing seen at one address count once; reporters from three addresses hide it,
  its owner is told, and an operator's command lists and clears it.

The matches are played as tests/browser/test_profiles.py plays them: nobody connected (each
round opens at once, R6), the host's wrong Quatro! sent to the table over Ray."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from actors import keys
from actors.protocol import Act, Outcome, Serve
from actors.ray_calls import send
from cluster.gateway_process import ROOT
from gateway.sessions import token_hash
from tests.conftest import Gateway, Stack

TAGGED = {
    "QUATRO_TRUSTED_PROXIES": "127.0.0.1/32",
    "QUATRO_ADDRESS_TAGS": "1",
    "QUATRO_ADDRESS_KEY": "issue-47-test-key",
    "QUATRO_POOL_SIZE": "1",
}
DAY_MS = 24 * 3600 * 1000
_hosts = itertools.count(random.randrange(1, 200) * 256)


def new_ip() -> str:
    """A documentation address of its own for each use (tags and buckets outlive a test)."""
    n = next(_hosts)
    return f"198.51.{100 + n // 256 % 100}.{n % 256}"


@pytest.fixture(scope="module")
def tagged(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = stack.gateway(tmp_path_factory.mktemp("tagged"), **TAGGED)
    try:
        gw.wait_ready()
        yield gw
    finally:
        gw.stop()


def store(stack: Stack) -> redis.Redis:
    return redis.Redis.from_url(stack.redis.url, decode_responses=True)


class At:
    """A person at an address: a session of their own, every call from there."""

    def __init__(self, base: str, name: str, ip: str) -> None:
        self.base, self.ip = base, ip
        r = httpx.post(f"{base}/api/sessions", json={"name": name}, headers=self.headers())
        assert r.status_code == 201, r.text
        self.token, self.id = r.json()["token"], r.json()["player_id"]

    def headers(self) -> dict[str, str]:
        out = {"X-Forwarded-For": self.ip}
        if getattr(self, "token", ""):
            out["Authorization"] = f"Bearer {self.token}"
        return out

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        return httpx.request(
            method, self.base + path, json=body, headers=self.headers(), timeout=30
        )


async def until(check: Any, limit: float = 60.0) -> Any:
    """`check()` until it is truthy (a deadline, never a fixed sleep)."""
    for _ in range(int(limit * 10)):
        if found := check():
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"not within {limit} s")


def lost_match(stack: Stack, host: At, rival: At) -> dict[str, Any]:
    """A 4-seat match `host` loses 0-5 to `rival` (a bot partner each); its record, once the
    table has settled it."""
    scenario = {"seed": 5, "time_scale": 1.0, "bot_policy": "idle"}
    r = host.call("POST", "/api/tables", {"players": 4, "scenario": scenario})
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    assert rival.call("POST", f"/api/tables/{code}/seats/1").is_success
    assert host.call("POST", f"/api/tables/{code}/fill").is_success
    assert host.call("POST", f"/api/tables/{code}/start").is_success
    r_ = store(stack)
    try:
        record = json.loads(str(r_.get(keys.table(code))))
    finally:
        r_.close()
    ray = stack.driver()
    handle = ray.get_actor(record["actor"], namespace=stack.namespace)
    for n in range(9):
        kind = "next_round" if n % 2 else "quatro"
        act = Act.of(f"lose-{n}", "gw-test", host.id, kind, {})
        answer = ray.get(send(handle, Serve(act, code)), timeout=30)
        assert isinstance(answer, Outcome)
        assert answer.ok, answer
    return {"table_id": record["table_id"]}


async def settled(stack: Stack, table_id: str) -> dict[str, Any]:
    r = store(stack)
    try:
        raw = await until(lambda: r.get(keys.match(f"{table_id}.1")))
        return dict(json.loads(str(raw)))
    finally:
        r.close()


async def test_two_profiles_of_one_address_at_one_table_rate_nothing(
    stack: Stack, tagged: Gateway
) -> None:
    home = new_ip()
    ana, bea = At(tagged.url, "Ana", home), At(tagged.url, "Bea", home)
    record = await settled(stack, lost_match(stack, ana, bea)["table_id"])
    assert (record["rated"], record["reason"]) == (False, "same_person")
    r = store(stack)
    try:
        assert r.hget(keys.ratings(4), ana.id) is None
        assert r.hget(keys.ratings(4), bea.id) is None
    finally:
        r.close()
    (line,) = bea.call("GET", "/api/profiles/me").json()["history"]
    assert (line["rated"], line["reason"], line["delta"]) == (False, "same_person", None)
    assert bea.call("GET", "/api/profiles/me").json()["lasting"] is False

    # Two people at two addresses: rated, and their first rated match keeps their profiles.
    cy, dee = At(tagged.url, "Cy", new_ip()), At(tagged.url, "Dee", new_ip())
    record = await settled(stack, lost_match(stack, cy, dee)["table_id"])
    assert (record["rated"], record["reason"], record["weight"]) == (True, None, 1.0)
    me = dee.call("GET", "/api/profiles/me").json()
    assert me["ratings"]["4"]["played"] == 1
    assert (me["lasting"], me["expires"]) == (True, None)


async def test_a_guests_profile_is_gone_after_its_last_session(
    stack: Stack, tmp_path: Path
) -> None:
    brief = stack.gateway(tmp_path, **TAGGED, QUATRO_SESSION_TTL="3")
    r = store(stack)
    try:
        brief.wait_ready()
        guest, keeper = At(brief.url, "Gus", new_ip()), At(brief.url, "Kim", new_ip())
        before = int(time.time() * 1000)
        me = guest.call("GET", "/api/profiles/me").json()
        assert me["lasting"] is False
        assert before < me["expires"] <= before + 4_000
        kept = keeper.call("PATCH", "/api/profiles/me", {"keep": True})
        assert kept.status_code == 200, kept.text
        assert (kept.json()["lasting"], kept.json()["expires"]) == (True, None)
        refused = keeper.call("PATCH", "/api/profiles/me", {"keep": False})
        assert refused.status_code == 422, "a kept profile is deleted, never a guest's again"
        held = [k for k in keys.owned(guest.id) if r.exists(k)]
        assert keys.seen(guest.id) in held, "where it was seen"
        assert all(0 < r.pttl(k) <= 3_000 for k in held), "everything it holds expires"
        # Nobody uses the guest's session again: its profile goes with it, whole.
        await until(lambda: not any(r.exists(k) for k in keys.owned(guest.id)), limit=30)
        assert guest.call("GET", "/api/profiles/me").status_code == 401
        # The kept profile outlives its session. Waited for in the store, never by using the
        # session: each use renews it, so a poll begun before it lapsed would keep it alive.
        session = keys.session(token_hash(keeper.token))
        await until(lambda: not r.exists(session), limit=30)
        assert keeper.call("GET", "/api/profiles/me").status_code == 401
        assert r.hget(keys.profile(keeper.id), "name") == "Kim"
        assert r.ttl(keys.profile(keeper.id)) == -1
    finally:
        r.close()
        brief.stop()


def standing(stack: Stack, who: At) -> None:
    """Five rated matches against people behind them, kept, four days old: as matches and time
    would leave them."""
    r = store(stack)
    try:
        r.hset(keys.profile(who.id), mapping={"lasting": "1", "created": _days_ago(4)})
        r.persist(keys.profile(who.id))
        five = json.dumps({"mu": 25.0, "sigma": 6.0, "played": 5, "won": 2, "v": 5})
        r.hset(keys.ratings(6), who.id, five)
    finally:
        r.close()


def _days_ago(days: int) -> int:
    return int(time.time() * 1000) - days * DAY_MS


def reports(*args: str) -> list[Any]:
    """The operator's command, as docs/operations.md gives it."""
    done = subprocess.run(
        [sys.executable, "-m", "gateway.reports", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


async def test_three_sessions_of_one_address_cannot_hide_a_name(
    stack: Stack, tagged: Gateway
) -> None:
    target = At(tagged.url, "Tomas", new_ip())
    assert target.call("PATCH", "/api/profiles/me", {"ratings": True}).is_success

    def shown() -> bool:
        return bool(httpx.get(f"{tagged.url}/api/profiles/{target.id}").json()["name"])

    # The probe: three fresh sessions of one address report the name.
    there = new_ip()
    fresh = [At(tagged.url, f"New{i}", there) for i in range(3)]
    for p in fresh:
        got = p.call("POST", f"/api/profiles/{target.id}/report")
        assert got.status_code == 403, got.text
        assert got.json()["error"]["code"] == "not_allowed"
    assert shown()
    # Three profiles of standing, all seen at that one address: one person, counted once.
    for p in fresh:
        standing(stack, p)
        assert p.call("POST", f"/api/profiles/{target.id}/report").status_code == 200
    assert shown()
    # A profile of standing seen at that address once, now reporting from another: the same.
    roamer = At(tagged.url, "Roamer", there)
    standing(stack, roamer)
    roamer.ip = new_ip()
    assert roamer.call("POST", f"/api/profiles/{target.id}/report").status_code == 200
    assert shown()
    # People of two more addresses: three addresses hide the name.
    for n in range(2):
        other = At(tagged.url, f"Other{n}", new_ip())
        standing(stack, other)
        assert other.call("POST", f"/api/profiles/{target.id}/report").status_code == 200
    assert not shown()
    mine = target.call("GET", "/api/profiles/me").json()
    assert mine["name_hidden"] is True

    # The operator sees it, and clears it: the name is shown again.
    url = f"--redis-url={stack.redis.url}"
    (row,) = [x for x in reports("list", url) if x["player_id"] == target.id]
    assert (row["name"], row["hidden"], row["reports"]) == ("Tomas", True, 3)
    assert reports("clear", target.id, url) == [{"player_id": target.id, "clear": True}]
    assert shown()
    assert target.call("GET", "/api/profiles/me").json()["name_hidden"] is False
