"""Do spectators slow the players down? p99 swap → `swapped` for the players, without and then
with a crowd of spectators (1,000 by default) watching one table through the same gateway.

    python -m loadtests.spectators                      # its own embedded stack, 1,000 watchers
    python -m loadtests.spectators --spectators 200 --seconds 20
    python -m loadtests.spectators --url http://127.0.0.1:8000   # a stack already running

Every player is a real WebSocket client swapping at a human pace (bench_ws); the crowd runs in a
child process of its own (at `--crowd-nice` 10: a thousand browsers would be on other machines, so
here the crowd yields the CPU to the stack it measures), so that reading its thousand sockets does
not delay the players' clocks in this one. For each stage it prints p50/p95/p99 of swap → `swapped`
at the watched table's players and at the other tables', then, for the crowd: how long it took to
seat every spectator, how late they saw each swap (from the event's server time), and what the
gateway and the table paid for them (public views fetched, the table's count).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from cluster.gateway_process import ROOT
from cluster.stack import Launched, Spec
from loadtests import cli
from loadtests.bench_ws import Stats, join, make_table, play
from loadtests.figures import emit, percentile
from loadtests.frames import Frame
from loadtests.player import Player, Refused

CONNECT_AT_ONCE = 50
READY_WAIT_S = 240.0


# -- the crowd (a child process) ----------------------------------------------------------------
async def crowd(url: str, code: str, count: int, hold: float) -> dict[str, Any]:
    """`count` spectators of `code`, each with its own session; prints `ready` once every one is
    welcomed, keeps them `hold` seconds, and returns what they saw."""
    lags: list[float] = []
    frames = 0
    refused: dict[str, int] = {}
    watching: list[Player] = []
    listening = asyncio.Event()  # frames count from when every spectator is in
    sem = asyncio.Semaphore(CONNECT_AT_ONCE)

    def listen(f: Frame, _: float) -> None:
        nonlocal frames
        if listening.is_set():
            frames += 1
            if f.get("type") == "swapped":
                lags.append(time.time() * 1000 - f["at"])

    async with httpx.AsyncClient(base_url=url, timeout=60) as c:

        async def one(i: int) -> None:
            async with sem:
                r = await c.post("/api/sessions", json={"name": f"fan{i}"})
                r.raise_for_status()
                fan = Player(url, keep=False, on_frame=listen)
                fan.token = r.json()["token"]
                try:
                    await fan.connect(code, watch=True, limit=READY_WAIT_S)
                except Refused as no:
                    refused[no.code or "?"] = refused.get(no.code or "?", 0) + 1
                    await fan.close()
                    return
                watching.append(fan)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        connected_in = time.perf_counter() - t0

    listening.set()
    emit({"ready": len(watching), "connected_in_s": round(connected_in, 2)})
    await asyncio.sleep(hold)
    await asyncio.gather(*(fan.close() for fan in watching), return_exceptions=True)
    return {
        "spectators": len(watching),
        "refused": refused,
        "connected_in_s": round(connected_in, 2),
        "frames": frames,
        "swaps_seen": len(lags),
        "lag_p50_ms": round(percentile(lags, 50), 1),
        "lag_p99_ms": round(percentile(lags, 99), 1),
    }


# -- the players (this process) -----------------------------------------------------------------
async def metric(c: httpx.AsyncClient, name: str) -> float | None:
    r = await c.get("/metrics")
    if r.status_code != 200:
        return None  # metrics on an internal port only
    return sum(float(x.split()[-1]) for x in r.text.splitlines() if x.startswith(name))


def row(label: str, values: list[float]) -> str:
    return (
        f"  {label:<26} n={len(values):>5} p50={percentile(values, 50):7.1f} ms "
        f"p95={percentile(values, 95):7.1f} ms p99={percentile(values, 99):7.1f} ms"
    )


async def run(
    url: str, tables: int, spectators: int, seconds: float, pace: float, nice: int
) -> None:
    measuring, stop = asyncio.Event(), asyncio.Event()
    rng = random.Random(7)
    async with httpx.AsyncClient(base_url=url, timeout=120) as c:
        groups = [await make_table(c) for _ in range(tables)]
        seats = [s for g in groups for s in g]
        code = groups[0][0].code
        stats = Stats()
        for s in seats:
            s.url = url
        # Every player connected before the start: signing waits only for those (R24).
        await asyncio.gather(*(join(s, stats, measuring) for s in seats))
        for g in groups:
            auth = {"Authorization": f"Bearer {g[0].token}"}
            (await c.post(f"/api/tables/{g[0].code}/start", headers=auth)).raise_for_status()
        for s in seats:
            await s.send({"type": "ready"})
        try:
            async with asyncio.timeout(120):
                for s in seats:
                    await s.playing.wait()
        except TimeoutError:
            state = [(s.code, s.seat, s.playing.is_set(), s.closed) for s in seats]
            raise RuntimeError(f"no deal: {state} refused={stats.refused}") from None
        players = [asyncio.create_task(play(s, stats, stop, rng, pace)) for s in seats]
        await asyncio.sleep(4)  # warm up

        async def stage() -> tuple[list[float], list[float]]:
            stats.seen_ms.clear()
            stats.seen_by_table.clear()
            measuring.set()
            await asyncio.sleep(seconds)
            measuring.clear()
            watched = [ms for t, ms in stats.seen_by_table if t == code]
            others = [ms for t, ms in stats.seen_by_table if t != code]
            return watched, others

        alone = await stage()
        views_before = await metric(c, "quatro_watch_views_total")
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "loadtests.spectators",
            *("--crowd", code, "--url", url, "--spectators", str(spectators)),
            *("--hold", str(seconds + 20), "--crowd-nice", str(nice)),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        assert child.stdout is not None
        try:
            told = json.loads(await asyncio.wait_for(child.stdout.readline(), READY_WAIT_S))
            watched_count = 0
            async with asyncio.timeout(30):
                while watched_count < told["ready"]:
                    watched_count = (await c.get(f"/api/tables/{code}")).json()["watching"]
                    await asyncio.sleep(0.5)
            crowded = await stage()
            views = await metric(c, "quatro_watch_views_total")
            out = (await asyncio.wait_for(child.stdout.read(), seconds + 120)).decode()
            await child.wait()
        finally:
            if child.returncode is None:
                child.kill()
                await child.wait()
        stop.set()
        for task in players:
            task.cancel()
        await asyncio.gather(*(s.close() for s in seats))
    result = json.loads(out.strip().splitlines()[-1])
    print(
        f"tables={tables} players={len(seats)} pace={pace:g}s seconds={seconds:g} "
        f"swaps_sent={stats.sent} refused={stats.refused}"
    )
    print("without spectators:")
    print(row("watched table's players", alone[0]))
    print(row("other tables' players", alone[1]))
    print(
        f"with {result['spectators']} spectators of one table, on the same gateway "
        f"(their process at nice {nice}):"
    )
    print(row("watched table's players", crowded[0]))
    print(row("other tables' players", crowded[1]))
    fetched = "n/a" if views is None or views_before is None else f"{views - views_before:g}"
    print(
        f"  spectators: connected in {result['connected_in_s']} s, refused {result['refused']}, "
        f"table counted {watched_count}, public views fetched {fetched}; "
        f"swap seen by spectators p50={result['lag_p50_ms']} ms p99={result['lag_p99_ms']} ms "
        f"over {result['swaps_seen']} deliveries ({result['frames']} frames)"
    )


async def main() -> None:
    parser = cli.command("spectators", __doc__)
    cli.add_url(parser, "", "a running stack (default: start one)")
    parser.add_argument("--tables", type=int, default=4, help="4-player tables; one is watched")
    parser.add_argument("--spectators", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0, help="each stage's measurement")
    parser.add_argument("--pace", type=float, default=3.0, help="mean s between a player's swaps")
    parser.add_argument(
        "--crowd-nice", type=int, default=10, help="niceness of the crowd's process (0: none)"
    )
    parser.add_argument("--crowd", default="", help=argparse.SUPPRESS)  # the child's table
    parser.add_argument("--hold", type=float, default=60.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.crowd:
        # A thousand browsers would be elsewhere: on this machine the crowd yields the CPU to
        # the stack it measures (its own lag then includes waiting for a core).
        os.nice(args.crowd_nice)
        result = await crowd(args.url, args.crowd, args.spectators, args.hold)
        emit(result)
        return
    if args.url:
        await run(args.url, args.tables, args.spectators, args.seconds, args.pace, args.crowd_nice)
        return
    log = Path("results/spectators/stack.log")
    stack = Launched(Spec.under_load(table_slots=64), log).start()
    try:
        await run(stack.url, args.tables, args.spectators, args.seconds, args.pace, args.crowd_nice)
    finally:
        stack.stop()


if __name__ == "__main__":
    asyncio.run(main())
