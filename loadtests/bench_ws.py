"""Push-path benchmark: simulated players over real WebSockets against a running stack.

    python -m loadtests.bench_ws --url http://127.0.0.1:8000 --tables 10 100 --seconds 20
    python -m loadtests.bench_ws --url http://127.0.0.1:8000 --url2 http://127.0.0.1:8001

With `--url2` (a second gateway joined to the same Ray and Redis), half of each table plays
through it, so `swapped` also travels the table → gateway stream; the two paths are printed apart.

For each table count it opens that many 4-player tables (every seat a WebSocket player), starts
the matches, and lets every player swap at a human pace (`--pace`: one swap every 2–4 s by
default; R10 allows one per 2 s). It prints p50/p95/p99 of swap → ack (at the sender) and of
swap → `swapped` (at the other players of the table), and the memory (USS) of the table actor
processes on this machine.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx
import psutil

from loadtests import cli
from loadtests.figures import percentile
from loadtests.frames import Frame
from loadtests.player import Player


@dataclass
class Stats:
    ack_ms: list[float] = field(default_factory=list)
    seen_ms: list[float] = field(default_factory=list)
    seen_same_ms: list[float] = field(default_factory=list)  # sender on the same gateway
    seen_other_ms: list[float] = field(default_factory=list)  # through the table's stream
    seen_by_table: list[tuple[str, float]] = field(default_factory=list)  # (code, ms)
    sent: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    # (code, card) -> (when sent, through which gateway)
    sent_at: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)


@dataclass
class Seat:
    code: str
    token: str
    url: str = ""
    player: Player | None = None
    seat: int = -1
    hand: list[dict[str, Any]] = field(default_factory=list)
    center: list[dict[str, Any]] = field(default_factory=list)
    playing: asyncio.Event = field(default_factory=asyncio.Event)
    pending: dict[str, float] = field(default_factory=dict)
    ready_due: bool = False  # a round ended: say ready for the next one

    async def send(self, frame: dict[str, Any]) -> None:
        assert self.player is not None
        await self.player.send(frame)

    async def close(self) -> None:
        if self.player is not None:
            await self.player.close()

    @property
    def closed(self) -> bool:
        return self.player is None or self.player.closed


async def session(c: httpx.AsyncClient, name: str) -> str:
    r = await c.post("/api/sessions", json={"name": name})
    r.raise_for_status()
    return str(r.json()["token"])


async def make_table(c: httpx.AsyncClient) -> list[Seat]:
    tokens = [await session(c, f"bench{i}") for i in range(4)]
    r = await c.post(
        "/api/tables", json={"players": 4}, headers={"Authorization": f"Bearer {tokens[0]}"}
    )
    r.raise_for_status()
    code = r.json()["code"]
    for seat, token in enumerate(tokens[1:], start=1):
        r = await c.post(
            f"/api/tables/{code}/seats/{seat}", headers={"Authorization": f"Bearer {token}"}
        )
        r.raise_for_status()
    return [Seat(code, t) for t in tokens]


async def join(seat: Seat, stats: Stats, measuring: asyncio.Event) -> None:
    """The seat's player says hello through `seat.url`; each of its frames is folded in as it
    comes (`fold`)."""
    player = Player(seat.url, keep=False, on_frame=partial(fold, seat, stats, measuring))
    player.token = seat.token
    seat.player = player
    await player.connect(seat.code)


def fold(seat: Seat, stats: Stats, measuring: asyncio.Event, f: Frame, now: float) -> None:
    """One frame of the seat's socket, read at `now` (perf_counter)."""
    kind = f["type"]
    if kind == "welcome":
        seat.seat = f["you"]["seat"]
        if f["table"]["phase"] == "playing":
            # The round opened before this socket said hello (signing waits only for
            # connected players, R24): the snapshot holds the hand and the centre.
            seat.hand, seat.center = f["table"]["hand"], f["table"]["center"]
            seat.playing.set()
    elif kind in ("round", "reshuffled"):
        seat.hand, seat.center = f["hand"], f["center"]
        seat.playing.set()
    elif kind == "swapped":
        seat.center[f["slot"]] = f["placed"]
        if f["seat"] == seat.seat:
            seat.hand = [f["taken"] if c["id"] == f["placed"]["id"] else c for c in seat.hand]
        else:
            sent = stats.sent_at.get((seat.code, f["placed"]["id"]))
            if sent is not None and measuring.is_set():
                ms = (now - sent[0]) * 1000
                stats.seen_ms.append(ms)
                stats.seen_by_table.append((seat.code, ms))
                same = sent[1] == seat.url
                (stats.seen_same_ms if same else stats.seen_other_ms).append(ms)
    elif kind in ("ack", "error") and f.get("id") in seat.pending:
        t = seat.pending.pop(f["id"])
        if measuring.is_set():
            stats.ack_ms.append((now - t) * 1000)
        if kind == "error":
            stats.refused[f["code"]] = stats.refused.get(f["code"], 0) + 1
    elif kind == "reveal":
        seat.playing.clear()
    elif kind == "signing" and f.get("round", 1) > 1:
        seat.ready_due = True  # a round ended (its clock ran out in a long run)


async def play(
    seat: Seat, stats: Stats, stop: asyncio.Event, rng: random.Random, pace: float
) -> None:
    n = 0
    while not stop.is_set():
        await asyncio.sleep(rng.uniform(pace * 2 / 3, pace * 4 / 3))
        if seat.ready_due:
            seat.ready_due = False
            await seat.send({"type": "ready"})
        if not seat.playing.is_set() or len(seat.hand) != 4:
            continue
        card = rng.choice(seat.hand)
        slot = rng.randrange(4)
        n += 1
        frame_id = f"s{n}"
        now = time.perf_counter()
        seat.pending[frame_id] = now
        stats.sent_at[(seat.code, card["id"])] = (now, seat.url)
        stats.sent += 1
        msg = {"type": "swap", "id": frame_id, "card": card["id"], "slot": slot}
        msg["expect"] = seat.center[slot]["id"]
        await seat.send(msg)


def table_actor_uss_mib(marker: str) -> list[float]:
    """USS of the table actor processes whose raylet's command line mentions `marker` (the
    stack's Ray temp dir, printed by `python -m cluster up`), or of all of them."""
    out = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if not any("TableActor" in part for part in p.info["cmdline"] or []):
                continue
            parent = p.parent()
            if marker and (parent is None or marker not in " ".join(parent.cmdline())):
                continue
            out.append(p.memory_full_info().uss / 2**20)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


async def stage(url: str, url2: str, tables: int, seconds: float, marker: str, pace: float) -> None:
    stats, stop, measuring = Stats(), asyncio.Event(), asyncio.Event()
    rng = random.Random(tables)
    limits = httpx.Limits(max_connections=16)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as c:
        sem = asyncio.Semaphore(8)

        async def one(i: int) -> list[Seat]:
            async with sem:
                return await make_table(c)

        t0 = time.perf_counter()
        groups = await asyncio.gather(*(one(i) for i in range(tables)))
        made = time.perf_counter() - t0
        seats = [s for g in groups for s in g]
        for i, s in enumerate(seats):
            # With a second gateway, odd seats play through it: their events reach the even
            # seats through the table's stream, and the other way round.
            s.url = url2 if url2 and i % 2 else url
        await asyncio.gather(*(join(s, stats, measuring) for s in seats))
        for g in groups:
            r = await c.post(
                f"/api/tables/{g[0].code}/start",
                headers={"Authorization": f"Bearer {g[0].token}"},
            )
            r.raise_for_status()
        for s in seats:
            await s.send({"type": "ready"})
        async with asyncio.timeout(60):
            for s in seats:
                await s.playing.wait()
        players = [asyncio.create_task(play(s, stats, stop, rng, pace)) for s in seats]
        await asyncio.sleep(4)  # warm up: every player has swapped at least once
        measuring.set()
        await asyncio.sleep(seconds)
        measuring.clear()
        stop.set()
        for task in players:
            task.cancel()
        uss = table_actor_uss_mib(marker)
        await asyncio.gather(*(s.close() for s in seats))
    print(
        f"tables={tables} players={len(seats)} pace={pace:g}s created_in={made:.1f}s "
        f"swaps_sent={stats.sent} refused={stats.refused}"
    )
    rows = [("swap->ack", stats.ack_ms), ("swap->swapped", stats.seen_ms)]
    if url2:
        rows += [("  same gateway", stats.seen_same_ms), ("  other gateway", stats.seen_other_ms)]
    for label, values in rows:
        print(
            f"  {label:<16} n={len(values):>6} p50={percentile(values, 50):7.1f} ms "
            f"p95={percentile(values, 95):7.1f} ms p99={percentile(values, 99):7.1f} ms"
        )
    if uss:
        print(
            f"  table actor USS: median={statistics.median(uss):.1f} MiB "
            f"min={min(uss):.1f} max={max(uss):.1f} over {len(uss)} actor processes"
        )


async def main() -> None:
    parser = cli.command("bench_ws", __doc__)
    cli.add_url(parser, cli.default_url(), "the gateway (default: `make run`'s, or QUATRO_URL)")
    parser.add_argument("--url2", default="", help="a second gateway of the same stack")
    parser.add_argument("--tables", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--pace", type=float, default=3.0, help="mean s between a player's swaps")
    parser.add_argument("--ray-temp-dir", default="", help="count only this stack's actors")
    args = parser.parse_args()
    for tables in args.tables:
        await stage(args.url, args.url2, tables, args.seconds, args.ray_temp_dir, args.pace)


if __name__ == "__main__":
    asyncio.run(main())
