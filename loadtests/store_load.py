"""How far the store grows: the store's real work for N tables at the load test's pace, against
one Redis and against a Redis Cluster of 1, 2 and 3 primaries (a replica each) on this machine;
the CPU of each redis-server per table, and the tables one primary carries at 70 % of a core.

    python -m loadtests.store_load                                   # 150 tables, all targets
    python -m loadtests.store_load --tables 100,200 --targets single,cluster3 --hold 60

Ray is not needed to load the store, so none runs: each table is a real table core
(actors/table_core.py: the actor's one change path, its clock, its saves through
actors/store.py's scripts, a scoring save waiting for its replica on a cluster), given its
players' commands over `serve`, as its link server gives them. The commands are those of one
6-seat match of smart bots at human pace (speed 1, as the load test's Locust players), recorded
once on the engine's simulated clock and replayed at their times, each table from its own start,
the starts spread over `--ramp` seconds. Around each table, what the gateway does in Redis for
it: six sessions opened and looked up (gateway/sessions.py), the code claimed
(actors/table_records.py), each seat recorded for its player, the quotas of those requests
taken (gateway/rate_limit.py).

After `--settle` seconds the CPU time of every redis-server is read (psutil) over `--hold`
seconds. Printed: per target and N, the CPU of the busiest primary and of all primaries (% of a
core), saves a second, the CPU per table, and the tables a primary carries at 70 % of a core
(the busiest primary's share: a primary with more slots' tables is the first full); then ONE
JSON line with every row.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any

import psutil

from actors.protocol import Act, Join, Outcome
from actors.ray_names import RayActors
from actors.table_core import TableCore
from actors.table_records import TableRecords
from cluster.redis_client import async_redis
from cluster.stack import StoreOnly
from engine import Command, Connect, Outbound, StartMatch, Table, TableConfig, TakeSeat
from engine.bots import make_bot
from engine.phase import Phase
from engine.tournament import Runner
from engine.wire import frame_fields, kind_of
from gateway.rate_limit import Bucket, RateLimits
from gateway.sessions import Sessions
from loadtests import cli
from loadtests.figures import emit

PLAYERS = 6
SEED = 11
FULL = 0.70  # a primary is full at this share of a core
TARGETS = {"single": 0, "cluster1": 1, "cluster2": 2, "cluster3": 3}
IDLE = (600.0, 600.0, 1800.0)
GATEWAY = "gw-store-load"
IDLE_S = 10.0  # the servers measured before any table


@dataclass(frozen=True)
class Move:
    """A player's command, `at_ms` after the match started."""

    at_ms: int
    seat: int
    command: Command


class _Counted(Table):
    """A table that counts its changes: each one a table actor saves (a command applied, a
    deadline that made events)."""

    changes = 0

    def apply(self, command: Command, now: int) -> list[Outbound]:
        out = super().apply(command, now)
        self.changes += 1
        return out

    def advance(self, now: int) -> list[Outbound]:
        out = super().advance(now)
        self.changes += bool(out)
        return out


def record_match(players: int = PLAYERS, seed: int = SEED) -> tuple[list[Move], int]:
    """The commands of one match of smart bots at human pace, every seat a connected player,
    and the saves it makes (its changes)."""
    table = _Counted(TableConfig(players=players, seed=seed))
    for s in range(players):
        table.apply(TakeSeat(seat=s, player_id=f"p{s}", name=f"P{s}"), 0)
        table.apply(Connect(seat=s), 0)
    bots = {
        s: make_bot("smart", s, players, seed=seed * 100 + s, timings=table.config.timings)
        for s in range(players)
    }
    moves = [Move(0, 0, StartMatch(seat=0))]  # the host starts it (a REST call)
    runner = Runner(
        table, bots, seed=seed, on_command=lambda s, c, _, at: moves.append(Move(at, s, c))
    )
    runner.act(0, StartMatch(seat=0))
    for _ in range(100_000):
        if table.phase is Phase.OVER or not runner.step():
            break
    return moves, table.changes


class MatchClock:
    """A table's time (epoch ms): jumped forward while a table catches up with the part of its
    match it skips, then the wall clock's. Every table is so met at its own point of a match,
    and the measured minutes see every phase of one in their proportions."""

    def __init__(self) -> None:
        self.offset_ms = 0

    @staticmethod
    def wall() -> int:
        return int(time.time() * 1000)

    def __call__(self) -> int:
        return self.wall() + self.offset_ms

    def at(self, when_ms: int) -> None:
        self.offset_ms = min(0, when_ms - self.wall())


@dataclass
class Counts:
    saves_before: int = 0
    commands: int = 0
    refused: int = 0
    ready: int = 0  # tables whose players are all seated and connected
    failed: int = 0  # tables whose start failed (a request of their setup timed out)
    late_ms: int = 0  # the most a command came after its time, once its table caught up


class Bench:
    """N tables of one target: their cores, and the gateway's part of their work."""

    def __init__(
        self, store: StoreOnly, moves: list[Move], tables: int, ramp_s: float, skip_s: float
    ) -> None:
        self.store = store
        self.moves = moves
        self.tables = tables
        self.ramp_s = ramp_s
        self.skip_s = skip_s  # each table skips up to this much of its match
        self.counts = Counts()
        self.cores: list[TableCore] = []
        self.rng = random.Random(7)

    async def run(self, settle_s: float, hold_s: float) -> dict[str, Any]:
        client = async_redis(self.store.url)
        sessions = Sessions(client, 3600)
        limits = RateLimits(client, {k: Bucket(1e6, 1e6) for k in ("session", "table", "lookup")})
        records = TableRecords(client, RayActors("store-load", self.store.url))
        idle = await self.cpu(IDLE_S)  # what the servers cost with no table: a cluster's gossip
        t0 = asyncio.get_running_loop().time()
        tables = [
            asyncio.create_task(
                self.table(i, t0 + self.ramp_s * i / self.tables, sessions, limits, records)
            )
            for i in range(self.tables)
        ]
        try:
            result = await self.measure(t0 + self.ramp_s + settle_s, hold_s, tables)
            result["idle"] = idle
        finally:
            for task in tables:
                task.cancel()
            await asyncio.gather(*tables, return_exceptions=True)
            for core in self.cores:
                await core.tasks.close()
            await client.aclose()
        return result

    async def table(
        self,
        i: int,
        start: float,
        sessions: Sessions,
        limits: RateLimits,
        records: TableRecords,
    ) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(max(0.0, start - loop.time()))
        ip = f"10.0.{i // 250}.{i % 250}"
        people = []
        for s in range(PLAYERS):
            await limits.take("session", ip)
            token, session = await sessions.create(f"P{s}")
            people.append((token, session.player_id))
        name = f"table-{i:012x}"
        await limits.take("table", ip)
        code, _ = await records.claim(name, PLAYERS)
        clock = MatchClock()
        start_ms = clock.wall() - int(self.rng.uniform(0, self.skip_s) * 1000)
        clock.at(start_ms)
        core = TableCore(name, self.store.url, now=clock)
        self.cores.append(core)
        host = people[0][1]
        opened = await core.open(code, {"players": PLAYERS, "seed": SEED}, host, "P0", IDLE)
        assert opened.ok, opened
        for s, (token, player) in enumerate(people):
            await sessions.lookup(token)  # the hello
            if s:
                await limits.take("lookup", ip)
                await self.act(core, player, TakeSeat(seat=s, player_id=player, name=f"P{s}"))
            await sessions.seated(player, code, s)
            await core.serve(Join(f"j-{s}", GATEWAY, f"{GATEWAY}/{i}-{s}", player))
        self.counts.ready += 1
        caught_up = False
        for move in self.moves:
            due = start_ms + move.at_ms
            if due > clock.wall():  # caught up: the match goes on at its own pace
                caught_up = True
                clock.offset_ms = 0
                await asyncio.sleep((due - clock.wall()) / 1000)
                self.counts.late_ms = max(self.counts.late_ms, clock.wall() - due)
            elif caught_up:  # the loader is behind the match (it measures less than asked)
                self.counts.late_ms = max(self.counts.late_ms, clock.wall() - due)
            else:
                clock.at(due)
            await self.act(core, people[move.seat][1], move.command)

    async def act(self, core: TableCore, player: str, command: Command) -> None:
        self.counts.commands += 1
        cmd_id = f"{GATEWAY}:{self.counts.commands}"
        act = Act.of(cmd_id, GATEWAY, player, kind_of(command), frame_fields(command))
        reply = await core.serve(act)
        if isinstance(reply, Outcome) and not reply.ok:
            self.counts.refused += 1

    async def measure(
        self, at: float, hold_s: float, tables: list[asyncio.Task[None]]
    ) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        await asyncio.sleep(max(0.0, at - loop.time()))
        failed = [t.exception() for t in tables if t.done() and not t.cancelled() and t.exception()]
        self.counts.failed = len(failed)
        if len(failed) > self.tables // 10:  # a few lost to a slow start are only fewer tables
            raise RuntimeError(f"{len(failed)} tables failed: {failed[0]!r}")
        self.counts.late_ms = 0  # the ramp's catching up is over: from here, it counts
        saved, started = self.saves(), time.perf_counter()
        me = psutil.Process()
        mine = me.cpu_times()
        cpu = await self.cpu(hold_s)
        wall = time.perf_counter() - started
        used = me.cpu_times()
        loader = 100 * ((used.user + used.system) - (mine.user + mine.system)) / wall
        return {
            "cpu": cpu,
            "saves_s": (self.saves() - saved) / wall,
            "wall_s": wall,
            "loader_cpu_pct": loader,
        }

    async def cpu(self, seconds: float) -> list[tuple[str, float]]:
        """Each redis-server's role and CPU (% of a core) over the next `seconds`."""
        procs = [(role, psutil.Process(s.proc.pid)) for role, s in self.store.servers() if s.proc]
        before = [p.cpu_times() for _, p in procs]
        started = time.perf_counter()
        await asyncio.sleep(seconds)
        wall = time.perf_counter() - started
        after = [p.cpu_times() for _, p in procs]
        return [
            (role, 100 * ((a.user + a.system) - (b.user + b.system)) / wall)
            for (role, _), a, b in zip(procs, after, before, strict=True)
        ]

    def saves(self) -> int:
        return sum(core.store.writes for core in self.cores)


def row(target: str, tables: int, measured: dict[str, Any], counts: Counts) -> dict[str, Any]:
    cpu: list[tuple[str, float]] = measured["cpu"]
    idle = [c for _, c in measured["idle"]]
    primaries = [c for role, c in cpu if role in ("primary", "single")]
    replicas = [c for role, c in cpu if role == "replica"]
    # What the tables cost each primary: its CPU less what it costs idle (a cluster's gossip,
    # replication's pings), a fixed cost of a node, not of its tables.
    work = [c - idle[i] for i, (role, c) in enumerate(cpu) if role in ("primary", "single")]
    busiest = max(work)
    # The busiest primary carries its share of the tables: spread by code over the slots.
    share = (tables - counts.failed) / len(primaries)
    per_table = busiest / share
    per_primary = FULL * 100 / per_table
    return {
        "target": target,
        "tables": tables,
        "ready": counts.ready,
        "saves_s": round(measured["saves_s"], 1),
        "primary_cpu_pct": [round(c, 2) for c in primaries],
        "replica_cpu_pct": [round(c, 2) for c in replicas],
        "idle_cpu_pct": [round(c, 2) for c in idle],
        "saves_per_table_s": round(measured["saves_s"] / tables, 3),
        "redis_us_per_save": round(busiest / 100 * 1e6 / (measured["saves_s"] / len(primaries)), 1),
        "loader_cpu_pct": round(measured["loader_cpu_pct"], 1),
        "cpu_per_table_pct": round(per_table, 4),
        "tables_per_primary_at_70pct": int(per_primary),
        "primaries_per_10k_tables": -(-10_000 // int(per_primary)),
        "refused": counts.refused,
        "failed_tables": counts.failed,
        "loader_late_ms": counts.late_ms,
    }


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = cli.command("store_load", __doc__)
    p.add_argument("--tables", default="150", help="comma-separated table counts")
    p.add_argument("--targets", default=",".join(TARGETS), help=", ".join(TARGETS))
    p.add_argument("--ramp", type=float, default=120.0, help="seconds over which tables start")
    p.add_argument("--settle", type=float, default=30.0, help="seconds before measuring")
    p.add_argument("--hold", type=float, default=60.0, help="seconds measured")
    p.add_argument(
        "--skip",
        type=float,
        default=0.0,
        help="each table starts up to this far into a match, its earlier commands replayed at "
        "once during the ramp (0: anywhere, so that the measured minute sees every phase of a "
        "match in its proportion)",
    )
    return p.parse_args(argv)


def run(argv: list[str] | None = None) -> int:
    a = parse(argv)
    moves, changes = record_match()
    match_s = moves[-1].at_ms / 1000
    needed = a.ramp + a.settle + a.hold
    if needed > match_s / 2:
        raise SystemExit(
            f"ramp + settle + hold ({needed:.0f} s): over half a match ({match_s:.0f} s)"
        )
    rows = []
    for target in [t.strip() for t in a.targets.split(",") if t.strip()]:
        for tables in [int(n) for n in a.tables.split(",")]:
            store = StoreOnly(primaries=TARGETS[target]).start()
            try:
                skip = min(a.skip or match_s, match_s - needed - 5)
                bench = Bench(store, moves, tables, a.ramp, skip)
                measured = asyncio.run(bench.run(a.settle, a.hold))
            finally:
                store.stop()
            r = row(target, tables, measured, bench.counts)
            rows.append(r)
            print(
                f"{target:9} {tables:5} tables  {r['saves_s']:7.1f} saves/s  primaries "
                f"{r['primary_cpu_pct']} %  replicas {r['replica_cpu_pct']} %  "
                f"{r['cpu_per_table_pct']:.4f} % per table  "
                f"{r['tables_per_primary_at_70pct']} tables per primary at 70 %  "
                f"(loader {r['loader_cpu_pct']} % CPU, at most {r['loader_late_ms']} ms late)",
                flush=True,
            )
    pace = {"match_s": round(match_s, 1), "commands": len(moves), "saves": changes}
    emit({**pace, "saves_per_table_s": round(changes / match_s, 3), "rows": rows})
    return 0


if __name__ == "__main__":
    cli.main(run)
