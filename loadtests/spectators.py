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
import websockets

from loadtests.bench_ws import Stats, make_table, pct, play, read
from loadtests.stack import ROOT, EmbeddedStack

CONNECT_AT_ONCE = 50
READY_WAIT_S = 240.0


# -- the crowd (a child process) ----------------------------------------------------------------
async def crowd(url: str, code: str, count: int, hold: float) -> dict[str, Any]:
    """`count` spectators of `code`, each with its own session; prints `ready` once every one is
    welcomed, keeps them `hold` seconds, and returns what they saw."""
    lags: list[float] = []
    frames = 0
    refused: dict[str, int] = {}
    sockets: list[websockets.ClientConnection] = []
    sem = asyncio.Semaphore(CONNECT_AT_ONCE)
    ws_url = url.replace("http", "ws") + "/ws"

    async with httpx.AsyncClient(base_url=url, timeout=60) as c:

        async def one(i: int) -> None:
            async with sem:
                r = await c.post("/api/sessions", json={"name": f"fan{i}"})
                r.raise_for_status()
                ws = await websockets.connect(ws_url, max_size=None)
                hello = {"type": "hello", "token": r.json()["token"], "table": code, "watch": True}
                await ws.send(json.dumps(hello))
                first = json.loads(await ws.recv())
                if first.get("type") != "welcome":
                    refused[first.get("code", "?")] = refused.get(first.get("code", "?"), 0) + 1
                    await ws.close()
                    return
                sockets.append(ws)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        connected_in = time.perf_counter() - t0

    async def listen(ws: websockets.ClientConnection) -> None:
        nonlocal frames
        try:
            async for raw in ws:
                frames += 1
                f = json.loads(raw)
                if f.get("type") == "swapped":
                    lags.append(time.time() * 1000 - f["at"])
        except websockets.ConnectionClosed:
            pass

    listeners = [asyncio.create_task(listen(ws)) for ws in sockets]
    print(json.dumps({"ready": len(sockets), "connected_in_s": round(connected_in, 2)}), flush=True)
    await asyncio.sleep(hold)
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    await asyncio.gather(*listeners, return_exceptions=True)
    return {
        "spectators": len(sockets),
        "refused": refused,
        "connected_in_s": round(connected_in, 2),
        "frames": frames,
        "swaps_seen": len(lags),
        "lag_p50_ms": round(pct(lags, 0.5), 1),
        "lag_p99_ms": round(pct(lags, 0.99), 1),
    }


# -- the players (this process) -----------------------------------------------------------------
async def metric(c: httpx.AsyncClient, name: str) -> float | None:
    r = await c.get("/metrics")
    if r.status_code != 200:
        return None  # metrics on an internal port only
    return sum(float(x.split()[-1]) for x in r.text.splitlines() if x.startswith(name))


def row(label: str, values: list[float]) -> str:
    return (
        f"  {label:<26} n={len(values):>5} p50={pct(values, 0.5):7.1f} ms "
        f"p95={pct(values, 0.95):7.1f} ms p99={pct(values, 0.99):7.1f} ms"
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
        readers = []
        for s in seats:
            s.url = url
            s.ws = await websockets.connect(url.replace("http", "ws") + "/ws", max_size=None)
            await s.ws.send(json.dumps({"type": "hello", "token": s.token, "table": s.code}))
            readers.append(asyncio.create_task(read(s, stats, measuring)))
        # Every player connected before the start: signing waits only for those (R24).
        async with asyncio.timeout(60):
            while any(s.seat < 0 for s in seats):  # noqa: ASYNC110 - set by the readers
                await asyncio.sleep(0.05)
        for g in groups:
            auth = {"Authorization": f"Bearer {g[0].token}"}
            (await c.post(f"/api/tables/{g[0].code}/start", headers=auth)).raise_for_status()
        for s in seats:
            assert s.ws is not None
            await s.ws.send(json.dumps({"type": "ready"}))
        try:
            async with asyncio.timeout(120):
                for s in seats:
                    await s.playing.wait()
        except TimeoutError:
            dead = [r.exception() for r in readers if r.done()]
            state = [(s.code, s.seat, s.playing.is_set()) for s in seats]
            raise RuntimeError(f"no deal: {state} {dead} refused={stats.refused}") from None
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
        for s in seats:
            assert s.ws is not None
            await s.ws.close()
        for task in readers:
            task.cancel()
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="", help="a running stack (default: start one)")
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
        print(json.dumps(result), flush=True)
        return
    if args.url:
        await run(args.url, args.tables, args.spectators, args.seconds, args.pace, args.crowd_nice)
        return
    stack = EmbeddedStack(Path("results/spectators/stack.log"), table_slots=64).start()
    try:
        await run(stack.url, args.tables, args.spectators, args.seconds, args.pace, args.crowd_nice)
    finally:
        stack.stop()


if __name__ == "__main__":
    asyncio.run(main())
