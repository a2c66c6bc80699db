"""What anonymous visits leave in the store (issue 47): N visits that never play, then the store
once their sessions have expired.

    python -m loadtests.guest_growth --visits 1000 --ttl 30
    python -m loadtests.guest_growth --visits 1000 --ttl 30 --code /tmp/older   # another release

Starts its own stack (cluster/stack.py: a redis-server, a Ray head and one gateway, no table
actor pooled: nobody plays), whose sessions last `--ttl` seconds for the run instead of a week;
every visitor comes from 127.0.0.1, so the per-address quotas are lifted as for every load
test, and address tags are on, so that each profile notes where it was seen, as in production.
A visit is what someone who opens the game and never plays costs: a session (`POST
/api/sessions`, which makes their profile), then their profile page (`GET /api/profiles/me`);
`--kept K` of them also press "Keep this profile" (`PATCH /api/profiles/me {"keep": true}`).
`--code DIR` runs the gateway of another release's tree (a `git archive` of its packages) on
the same stack, for the figures before.

Redis's keys by kind and its used memory are read before the visits, after them, and once
every visit's session has expired and Redis has removed what expired with it (waited for, up to
`--ttl` plus `--grace` seconds). The last line is the JSON of the three readings.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import redis

from cluster.gateway_process import ROOT
from cluster.stack import Spec, Stack
from loadtests import cli
from loadtests.figures import emit


def kind_of(key: str) -> str:
    """What a key of the store is, for the readings."""
    if key.startswith("quatro:session:"):
        return "session"
    if key.startswith("quatro:rl:"):
        return "quota"
    for kind in ("profile", "seen"):
        if key.endswith(f":{kind}"):
            return kind
    return "other"


KINDS = ("session", "profile", "seen", "quota", "other")


def reading(r: redis.Redis) -> dict[str, Any]:
    """Keys by kind, all keys, and Redis's used memory (bytes)."""
    counts = dict.fromkeys(KINDS, 0)
    for key in r.scan_iter(count=1000):
        counts[kind_of(key.decode() if isinstance(key, bytes) else str(key))] += 1
    memory = r.info("memory")
    return {"keys": int(r.dbsize()), "by_kind": counts, "used_memory": int(memory["used_memory"])}


async def visits(base: str, n: int, kept: int, at_once: int) -> float:
    """`n` visits, `at_once` at a time; the first `kept` keep their profile. Their seconds."""
    started = time.monotonic()
    gate = asyncio.Semaphore(at_once)
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:

        async def visit(i: int) -> None:
            async with gate:
                r = await client.post("/api/sessions", json={"name": f"Visitor {i}"})
                r.raise_for_status()
                auth = {"Authorization": f"Bearer {r.json()['token']}"}
                (await client.get("/api/profiles/me", headers=auth)).raise_for_status()
                if i < kept:
                    body = {"keep": True}
                    (
                        await client.patch("/api/profiles/me", json=body, headers=auth)
                    ).raise_for_status()

        await asyncio.gather(*(visit(i) for i in range(n)))
    return time.monotonic() - started


def settled(r: redis.Redis, before: dict[str, Any], kept: int, limit_s: float) -> float:
    """Seconds until the visits' sessions, and what expires with them, are gone from Redis:
    sessions back to what there was before, profiles and tags to the kept ones (a deadline,
    polled; never a sleep of the whole)."""
    started = time.monotonic()
    want = before["by_kind"]
    while time.monotonic() - started < limit_s:
        now = reading(r)["by_kind"]
        if now["session"] <= want["session"] and now["profile"] <= want["profile"] + kept:
            return time.monotonic() - started
        time.sleep(0.5)
    return time.monotonic() - started


async def run(
    n: int, kept: int, ttl: int, grace: float, code: Path, at_once: int
) -> dict[str, Any]:
    spec = Spec(
        table_slots=4,
        gateways=0,
        pool=0,
        crowd=True,
        log_level="warning",
        settings={
            "QUATRO_SESSION_TTL": str(ttl),
            "QUATRO_POOL_MAX": "0",
            "QUATRO_ADDRESS_TAGS": "1",  # as in production (`crowd` turns them off)
        },
    )
    logs = Path(tempfile.mkdtemp(prefix="quatro-guest-growth-"))
    stack = Stack(spec, logs).start()
    gateway = None
    r = redis.Redis.from_url(stack.redis_url)
    try:
        gateway = stack.gateway_of(code, logs)
        gateway.wait_ready()
        before = reading(r)
        took = await visits(gateway.url, n, kept, at_once)
        after = reading(r)
        waited = settled(r, before, kept, ttl + grace)
        expired = reading(r)
        return {
            "visits": n,
            "kept": kept,
            "ttl_s": ttl,
            "code": str(code),
            "visits_s": round(took, 1),
            "expired_after_s": round(waited, 1),
            "before": before,
            "after_visits": after,
            "after_expiry": expired,
            "left": expired["keys"] - before["keys"],
            "bytes_per_visit": round((after["used_memory"] - before["used_memory"]) / n),
            "bytes_left": expired["used_memory"] - before["used_memory"],
        }
    finally:
        r.close()
        if gateway is not None:
            gateway.stop()
        stack.stop()


def main() -> None:
    parser = cli.command("guest_growth", __doc__)
    parser.add_argument("--visits", type=int, default=1000)
    parser.add_argument("--kept", type=int, default=0, help="visits that keep their profile")
    parser.add_argument("--ttl", type=int, default=30, help="a session's lifetime for the run (s)")
    parser.add_argument("--grace", type=float, default=90.0, help="s past it to wait for expiry")
    parser.add_argument("--at-once", type=int, default=20, help="visits in flight")
    parser.add_argument("--code", type=Path, default=ROOT, help="the gateway's code (a tree)")
    a = parser.parse_args()
    result = asyncio.run(run(a.visits, a.kept, a.ttl, a.grace, a.code.resolve(), a.at_once))
    b, v, e = result["before"], result["after_visits"], result["after_expiry"]
    print(
        f"guest growth: {a.visits} visits ({a.kept} kept) in {result['visits_s']} s, ttl {a.ttl} s"
    )
    for label, x in (("before", b), ("after the visits", v), ("after the expiry", e)):
        print(f"  {label:18} keys {x['keys']:6}  {x['by_kind']}  used_memory {x['used_memory']}")
    left, per = result["left"], result["bytes_per_visit"]
    print(f"  left: {left} keys, {result['bytes_left']} bytes; {per} B a visit while it lasts")
    emit(result)


if __name__ == "__main__":
    main()
