"""What one table costs before any of our code runs, and so how many tables a node can carry.

    python -m lab.ray_floor                       # 10 actors of each kind, 15 s a phase
    python -m lab.ray_floor --actors 20 --seconds 30 --rate 5

Three layers, measured apart on this machine:

1. The machine: CPU time a process is charged for one wake-up — after a 10 ms timer (how
   Ray's periodic work wakes a thread) and after a write to a pipe from another process (how a
   message wakes a reader). On a virtual machine this cost depends on the host, and every
   figure below scales with it, which is why capacity figures must name the day they were
   measured on.
2. Ray itself: `--actors` empty actors (an `async def ping` that returns at once, `num_cpus=0`,
   like ours), idle and then called `--rate` times a second each: CPU per idle actor, wake-ups
   per second per thread, and CPU per call on the actor's side and on the caller's (the
   caller stands for the gateway).
3. Our table actor: `--actors` open 6-seat tables in play, called with a `ready` that the rules
   acknowledge without change, so that each call does the whole path (engine, snapshot to
   Redis, publish) and nothing else; then with a command refused as out of phase (judged and
   answered, nothing to save), which leaves the snapshot out. Each twice, side by side: through
   Ray actor calls (the control plane), and through the data plane (one TCP connection per
   table, JSON lines, as a gateway holds it).

From these it prints the ceiling of a node for live tables making `--table-calls` commands a
second each (0.96 a second per 6-seat table at human pace, from the capacity runs):
`(cores − Ray's own processes) / (idle + calls × CPU per call, both sides)`.

Ray's head and redis-server are started as children on free ports (cluster/stack.py) and
stopped by PID.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import ray

from actors.codec import (
    MAX_LINE,
    decode,
    encode,
)
from actors.link_messages import Answer, Bye, Call, Hello, Ping, Welcome
from actors.protocol import (
    Act,
    Address,
    Endpoint,
    Join,
    Open,
    Outcome,
    Probe,
    Reply,
    Request,
    Serve,
)
from actors.ray_calls import ask
from actors.snapshot import DEFAULT_REPLAY_TTL_S
from actors.table_actor import actor_class
from cluster.stack import Spec, Stack
from loadtests import cli
from loadtests.figures import emit
from loadtests.node import machine

WAKES = 300  # per probe: 3 s of 10 ms sleeps


def wake_costs() -> dict[str, float]:
    """CPU µs charged per wake-up: after a 10 ms sleep, and after a pipe write from a child."""
    t = time.process_time()
    for _ in range(WAKES):
        time.sleep(0.01)
    timer_us = (time.process_time() - t) / WAKES * 1e6
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer: one byte every 10 ms, then gone
        os.close(r)
        for _ in range(WAKES):
            time.sleep(0.01)
            os.write(w, b"x")
        os._exit(0)
    os.close(w)
    t = time.process_time()
    for _ in range(WAKES):
        os.read(r, 1)
    pipe_us = (time.process_time() - t) / WAKES * 1e6
    os.waitpid(pid, 0)
    os.close(r)
    return {"timer_wake_us": round(timer_us, 1), "pipe_wake_us": round(pipe_us, 1)}


def threads(pid: int) -> dict[int, tuple[str, int, int]]:
    """tid -> (thread name, CPU ticks, context switches) from /proc."""
    out: dict[int, tuple[str, int, int]] = {}
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/stat") as f:
                stat = f.read()
            with open(f"{base}/{tid}/status") as f:
                status = f.read()
        except FileNotFoundError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        switches = sum(int(ln.split()[1]) for ln in status.splitlines() if "ctxt_switches" in ln)
        out[int(tid)] = (name, int(fields[11]) + int(fields[12]), switches)
    return out


@dataclass
class Phase:
    name: str
    cpu_per_actor_pct: float
    wakes_per_actor: float
    main_wakes_per_actor: float
    calls_per_actor: float
    actor_ms_per_call: float | None
    caller_ms_per_call: float | None


async def measure(
    name: str,
    pids: list[int],
    seconds: float,
    rate: float,
    call: Callable[[], Awaitable[Any]] | None,
    idle: Phase | None,
) -> Phase:
    """Sample the actors (and this caller) over `seconds`, calling all of them `rate` times a
    second when `call` is given; per-call CPU is what exceeds the idle phase."""
    procs = [psutil.Process(p) for p in pids]
    me = psutil.Process()

    def cpu(ps: list[psutil.Process]) -> float:
        return sum(sum(p.cpu_times()[:2]) for p in ps)

    before = {p: threads(p) for p in pids}
    c0, m0, t0 = cpu(procs), cpu([me]), time.monotonic()
    calls, due = 0, t0
    while time.monotonic() - t0 < seconds:
        if call is not None:
            await call()
            calls += len(pids)
        due += 1 / rate
        await asyncio.sleep(max(0.0, due - time.monotonic()))
    dt = time.monotonic() - t0
    used, mine = cpu(procs) - c0, cpu([me]) - m0
    after = {p: threads(p) for p in pids}
    wakes = main = 0
    for p in pids:
        for tid, (tname, _, sw) in after[p].items():
            delta = sw - before[p].get(tid, (tname, 0, 0))[2]
            wakes += delta
            if tid == p:  # the main thread: Ray's task loop and its 10 ms signal check
                main += delta
    n = len(pids)
    phase = Phase(
        name=name,
        cpu_per_actor_pct=round(100 * used / dt / n, 3),
        wakes_per_actor=round(wakes / dt / n, 1),
        main_wakes_per_actor=round(main / dt / n, 1),
        calls_per_actor=round(calls / dt / n, 2),
        actor_ms_per_call=None,
        caller_ms_per_call=None,
    )
    if call is not None and idle is not None and calls:
        extra = used - idle.cpu_per_actor_pct / 100 * dt * n
        phase.actor_ms_per_call = round(1000 * extra / calls, 3)
        phase.caller_ms_per_call = round(1000 * mine / calls, 3)
    return phase


class EmptyActor:
    async def ping(self) -> int:
        return os.getpid()


async def empty_actors(n: int, seconds: float, rate: float) -> list[Phase]:
    options: dict[str, Any] = {"num_cpus": 0, "max_concurrency": 1000}  # as the table actor's
    cls: Any = ray.remote(**options)(EmptyActor)
    handles = [cls.remote() for _ in range(n)]
    pids = [int(await h.ping.remote()) for h in handles]
    await asyncio.sleep(3.0)  # start-up work done

    async def call() -> None:
        await asyncio.gather(*(h.ping.remote() for h in handles))

    idle = await measure("empty actor, idle", pids, seconds, rate, None, None)
    busy = await measure("empty actor, called", pids, seconds, rate, call, idle)
    for h in handles:
        ray.kill(h)
    return [idle, busy]


async def table_actors(
    n: int, seconds: float, rate: float, redis_url: str, secret: str
) -> list[Phase]:
    cls = actor_class()
    names = [f"floor-{uuid.uuid4().hex[:8]}" for _ in range(n)]
    handles = [cls.options(name=nm, lifetime="detached").remote(nm, redis_url) for nm in names]
    pids = []
    for i, h in enumerate(handles):
        pids.append((await ask(h, Probe())).pid)
        code = f"F{i:05d}"
        idle_s = (600.0, 1800.0)
        await ask(h, Open(code, {"players": 6}, "p0", "p0", idle_s, DEFAULT_REPLAY_TTL_S))
        for s in range(1, 6):
            await ask(
                h, Serve(Act.of(_id(), "gw", f"p{s}", "take_seat", {"seat": s, "name": f"p{s}"}))
            )
        for s in range(6):
            await ask(h, Serve(Join(_id(), "gw", f"gw/c{s}", f"p{s}")))
        reply = await ask(h, Serve(Act.of(_id(), "gw", "p0", "start", {})))
        if not isinstance(reply, Outcome) or not reply.ok:
            raise RuntimeError(f"could not start table {code}: {reply}")
    await asyncio.sleep(3.0)

    async def ready() -> None:
        await asyncio.gather(
            *(ask(h, Serve(Act.of(_id(), "gw", "p0", "ready", {}))) for h in handles)
        )

    async def refused() -> None:  # out of phase: judged and answered, nothing saved
        await asyncio.gather(
            *(ask(h, Serve(Act.of(_id(), "gw", "p1", "rematch", {}))) for h in handles)
        )

    idle = await measure("table actor, in play, idle", pids, seconds, rate, None, None)
    busy = await measure("table actor, `ready` no-op", pids, seconds, rate, ready, idle)
    judged = await measure("table actor, refused", pids, seconds, rate, refused, idle)

    # The same commands over the data plane: one connection per table, as a gateway keeps.
    links = [
        await RawLink.open(await ask(h, Endpoint()), f"F{i:05d}", secret)
        for i, h in enumerate(handles)
    ]

    async def ready_socket() -> None:
        await asyncio.gather(*(k.ask(Act.of(_id(), "gw", "p0", "ready", {})) for k in links))

    async def refused_socket() -> None:
        await asyncio.gather(*(k.ask(Act.of(_id(), "gw", "p1", "rematch", {})) for k in links))

    s_idle = await measure("table actor, link open, idle", pids, seconds, rate, None, None)
    s_busy = await measure("socket: `ready` no-op", pids, seconds, rate, ready_socket, s_idle)
    s_judged = await measure("socket: refused", pids, seconds, rate, refused_socket, s_idle)
    for k in links:
        await k.close()
    for h in handles:
        ray.kill(h, no_restart=True)
    return [idle, busy, judged, s_idle, s_busy, s_judged]


class RawLink:
    """The caller's end of one data-plane connection, as a gateway holds it: a ping every
    5 s (the gateway's heartbeat, which the actor needs to keep the link), nothing else when
    idle."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.waiting: dict[int, asyncio.Future[Reply]] = {}
        self.rids = 0
        self.task = asyncio.get_running_loop().create_task(self._read())
        self.pinger = asyncio.get_running_loop().create_task(self._ping())

    async def _ping(self) -> None:
        n = 0
        while True:
            await asyncio.sleep(5.0)
            n += 1
            self.writer.write(encode(Ping(n)))

    @classmethod
    async def open(cls, where: Address | None, code: str, secret: str) -> RawLink:
        assert where is not None, f"table {code} has no data plane"
        reader, writer = await asyncio.open_connection(where.host, where.port, limit=MAX_LINE)
        writer.write(encode(Hello(secret, "gw", code, where.incarnation)))
        if not isinstance(decode(await reader.readline()), Welcome):
            raise RuntimeError(f"the data plane of {code} refused us")
        return cls(reader, writer)

    async def _read(self) -> None:
        while line := await self.reader.readline():
            msg = decode(line)
            if isinstance(msg, Answer):
                self.waiting.pop(msg.rid).set_result(msg.reply)

    async def ask(self, req: Request) -> Reply:
        self.rids += 1
        fut: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.waiting[self.rids] = fut
        self.writer.write(encode(Call(self.rids, req)))
        async with asyncio.timeout(30):  # a link the actor closed fails the run, never hangs it
            return await fut

    async def close(self) -> None:
        self.writer.write(encode(Bye()))
        self.writer.close()
        self.task.cancel()
        self.pinger.cancel()


def _id() -> str:
    return uuid.uuid4().hex


def ceiling(idle_pct: float, per_call_ms: float, calls: float, overhead_pct: float) -> float:
    per_table = idle_pct + calls * per_call_ms / 10  # ms per second -> % of a core
    cores = psutil.cpu_count() or 1
    return (100 * cores - overhead_pct) / per_table


async def run(a: argparse.Namespace) -> dict[str, Any]:
    stack = Stack(
        Spec(namespace="ray-floor", table_slots=a.actors + 8, gateways=0),
        Path("results") / "ray-floor",
    )
    stack.start()
    redis, head = stack.redis, stack.head
    try:
        # The caller joins like the gateway does: Ray's quiet settings, the head's auth mode.
        stack.driver()
        phases = await empty_actors(a.actors, a.seconds, a.rate)
        assert head.token_path is not None
        secret = head.token_path.read_text().strip()
        phases += await table_actors(a.actors, a.seconds, a.rate, redis.url, secret)
    finally:
        stack.stop()  # this driver's connection too
    out: dict[str, Any] = {"phases": [p.__dict__ for p in phases]}
    for path, idle, busy in (("ray", phases[2], phases[3]), ("socket", phases[5], phases[6])):
        per_call = (busy.actor_ms_per_call or 0.0) + (busy.caller_ms_per_call or 0.0)
        out[path] = {
            "per_table_pct": round(idle.cpu_per_actor_pct + a.table_calls * per_call / 10, 3),
            "ceiling_tables": round(
                ceiling(idle.cpu_per_actor_pct, per_call, a.table_calls, a.overhead), 1
            ),
        }
    return out


def main() -> None:
    p = cli.command("lab.ray_floor", __doc__)
    p.add_argument("--actors", type=int, default=10)
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--rate", type=float, default=5.0, help="calls per second per actor")
    p.add_argument("--table-calls", type=float, default=0.96, help="commands/s of a live table")
    p.add_argument(
        "--overhead", type=float, default=5.0, help="%% of a core for Ray's own processes"
    )
    a = p.parse_args()
    emit({"machine": machine(), "wakes": wake_costs()})
    result = asyncio.run(run(a))
    for phase in result["phases"]:
        emit(phase)
    for path in ("ray", "socket"):
        summary = {
            "path": path,
            "table_calls_per_s": a.table_calls,
            "cpu_per_live_table_pct": result[path]["per_table_pct"],
            "ceiling_tables": result[path]["ceiling_tables"],
            "note": "actors and the caller only: no WebSocket, no Locust",
        }
        emit(summary)


if __name__ == "__main__":
    main()
