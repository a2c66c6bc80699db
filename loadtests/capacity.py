"""How many live 6-seat tables one node carries within the latency bounds.

    python -m loadtests.capacity                                  # 25, 50, 100, 150, 200, 300, 400
    python -m loadtests.capacity --steps 20,40,80 --hold 60 --settle 15

On the embedded stack (`python -m cluster up` on a free port, Ray's quiet settings on), one
Locust process of players (loadtests/locustfile.py) is raised step by step to `tables × 6` users;
each step is held once all its tables are live (after `--settle` seconds), and judged over the
hold: it fails when p99 `swap→ack` > 50 ms, p99 `swap→seen` > 80 ms or failures > 0.1%, and the
run stops at the first step that fails. For every step it reports p50/p95/p99 of each exchange,
failures, the CPU of the table actors, the gateway, Redis and Ray's own processes (and, apart,
of the load generator), the private memory (USS) per table actor, and the table-actor calls per
second; at each step that held (every step with `--keep-going`) it records a py-spy profile of
the gateway and of one table actor (`--profile-seconds 0` to skip); `--profile-ramp S` records
the gateway, thread by thread, over the first S seconds of each ramp (`profile-ramp-<tables>/`),
to see whether its event loop is what makes the live tables wait while new ones start; `--pool
N` keeps N actors ready, so a ramp of up to N tables starts no process while it lasts. SIGINT
or SIGTERM stop the run cleanly: the stack and Locust are stopped by their PIDs.

Three figures judge the node apart from the instrument and against itself:
- **The ramp.** While a step's new tables are being created, the p99 `swap→ack` of the tables
  that were already in play before it began (`ramp ack p99`), beside the hold's: starting
  tables must not disturb play (goal: the hold's bound); beside it the gateway's own time for
  the ramp's swaps (`ramp server ack p99`) and Locust's lag meanwhile (`ramp lag p99`), since
  spawning users is the load generator's busiest moment.
- **The instrument.** Locust's own event-loop lag over the hold (`lag p99`: how late its
  greenlets wake, a delay inside every latency it reports) and the gateway's own time for the
  same swaps, from its `quatro_command_seconds` histogram (`server ack p99`: frame in → answer
  out), so that a step is judged on what players on machines of their own would see.
- **The ceiling.** The node's fixed cost is measured before the first table (`--baseline`
  seconds: gateway, Redis, Ray and the pool, idle); each step's CPU above it, divided by its
  tables, is what one live table costs (its idle floor and its commands); the ceiling is the
  tables that would fill every core at that cost. The last line prints capacity ÷ ceiling.

Results go to `--out` (default `results/capacity-<time>/`): capacity.md and capacity.json (the
table of steps), steps.png, the run's latency/activity/node plots, Locust's CSV and HTML, and
`profile-<tables>/` for the profiles.

`--nodes 2` starts a second local Ray node joined to the head (`QUATRO_LOCAL_NODES`), splits
the table slots between them, and reports how many tables each node carried at each step.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil

from cluster.stack import Launched, Spec
from loadtests import cli, runqueue
from loadtests.capacity_report import LIMITS, capacity_line, write_report
from loadtests.node import NODE_GROUPS, NodeSampler, machine, tree
from loadtests.placement import placement
from loadtests.profiles import collect, profile_pids, record
from loadtests.report import (
    EXCHANGES,
    Window,
    gauges,
    node_means,
    read_node,
    read_samples,
    window,
)
from loadtests.runner import (
    actor_commands,
    locust_command,
    scrape,
    server_quantile,
    stop_on_signals,
    stream_batches,
)

MAX_FAILURE_RATIO = 0.001


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = cli.command("capacity", __doc__)
    p.add_argument("--steps", default="25,50,100,150,200,300,400", help="live tables per step")
    p.add_argument("--hold", type=float, default=180.0, help="seconds each step is judged over")
    p.add_argument("--settle", type=float, default=30.0, help="seconds after a step is live")
    cli.add_play(p, time_scale=False)
    p.add_argument("--spawn-rate", type=float, default=8.0, help="users started per second")
    p.add_argument("--profile-seconds", type=float, default=20.0, help="py-spy per held step")
    p.add_argument(
        "--profile-ramp",
        type=float,
        default=0.0,
        help="py-spy of the gateway, by thread, over the first SECONDS of each step's ramp",
    )
    p.add_argument(
        "--pool",
        type=int,
        default=8,
        help="ready table actors kept (QUATRO_POOL_MIN = QUATRO_POOL_MAX): a ramp drawn from a "
        "pool grown ahead of it starts no process while it lasts",
    )
    p.add_argument("--max-p99-ack", type=float, default=LIMITS["swap→ack"])
    p.add_argument("--max-p99-seen", type=float, default=LIMITS["swap→seen"])
    p.add_argument("--max-failures", type=float, default=MAX_FAILURE_RATIO)
    p.add_argument("--keep-going", action="store_true", help="run every step, even past a failure")
    cli.add_quiet_ray(p)
    p.add_argument("--nodes", type=int, default=1, help="local Ray nodes, the head included")
    p.add_argument(
        "--baseline", type=float, default=20.0, help="seconds of the idle node before the steps"
    )
    cli.add_out(p, "capacity")
    return p.parse_args(argv)


class Control:
    """The file the locustfile's load shape reads every second."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def set(self, **data: Any) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(self.path)


def live_tables(out: Path, since: float) -> float:
    samples = [s for s in read_samples(out) if s.t >= since]
    pts = gauges(samples, "tables_live", step=2.0)
    return pts[-1][1] if pts else 0.0


def judge(w: Window, a: argparse.Namespace) -> list[str]:
    why = []
    ack, seen = w.stat("swap→ack"), w.stat("swap→seen")
    if not ack.values or ack.p(99) > a.max_p99_ack:
        why.append(f"p99 swap→ack {ack.p(99):.1f} ms > {a.max_p99_ack:g}")
    if not seen.values or seen.p(99) > a.max_p99_seen:
        why.append(f"p99 swap→seen {seen.p(99):.1f} ms > {a.max_p99_seen:g}")
    if w.failure_ratio > a.max_failures:
        why.append(f"failures {100 * w.failure_ratio:.3f}% > {100 * a.max_failures:g}%")
    return why


def actor_pids(stack_pid: int) -> list[int]:
    pids = []
    for p in tree(stack_pid):
        try:
            if "TableActor" in p.name():
                pids.append(p.pid)
        except psutil.Error:
            continue
    return pids


def run(argv: list[str] | None = None) -> int:
    a = parse(argv)
    stop_on_signals()
    steps = [int(x) for x in a.steps.split(",") if x.strip()]
    out = cli.out_dir(a.out, "capacity")
    print(f"machine: {machine()}", flush=True)
    spec = Spec.under_load(
        table_slots=max(steps) // a.nodes + 32,  # per node
        pool=a.pool,
        nodes=a.nodes,
        quiet_ray=a.quiet_ray == "1",
        idle_s=600.0,
        settings={"QUATRO_POOL_MIN": str(a.pool), "QUATRO_POOL_MAX": str(a.pool)},
    )
    stack = Launched(spec, out / "stack.log")
    control = Control(out / "control.json")
    control.set(users=0, spawn_rate=a.spawn_rate)
    locust: subprocess.Popen[bytes] | None = None
    sampler: NodeSampler | None = None
    results: list[dict[str, Any]] = []
    t_start = time.time()
    try:
        print("starting the embedded stack …", flush=True)
        stack.start()
        assert stack.pid is not None
        play = cli.play(a)
        cmd = locust_command(
            stack.url, out, play, users=None, spawn_rate=a.spawn_rate, seconds=None
        )
        (out / "command.txt").write_text(" ".join(cmd) + "\n")
        env = dict(os.environ, QUATRO_LOAD_CONTROL=str(control.path))
        locust = subprocess.Popen(cmd, env=env, start_new_session=True)
        sampler = NodeSampler(out / "node.csv", stack.pid, locust.pid).start()
        fixed = baseline(out, a.baseline)
        print(f"the idle node (fixed parts): {fixed:.1f} % of one core", flush=True)
        before = 0
        for n in steps:
            row = step(a, out, stack, control, n, t_start, before, fixed)
            results.append(row)
            before = n if row["held"] or "exchanges" in row else before
            write_report(out, a, results, t_start)
            print(f"step {n}: {'held' if row['held'] else 'FAILED: ' + '; '.join(row['why'])}")
            if not row["held"] and not a.keep_going:
                break
            if a.profile_seconds > 0 and "exchanges" in row:
                profile_step(out, stack.pid, n, a.profile_seconds)
    finally:
        control.set(stop=True)
        if locust is not None:
            try:
                locust.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(locust.pid, signal.SIGTERM)
                locust.wait(10)
        if sampler is not None:
            sampler.stop()
        stack.stop()
        write_report(out, a, results, t_start, final=True)
    print(capacity_line(results, a.players) + f" — see {out}")
    return 0


def node_cpu(means: dict[str, dict[str, float]]) -> float:
    """The node's own CPU (% of one core): every group but the load generator."""
    return sum(means.get(g, {}).get("cpu", 0.0) for g in NODE_GROUPS)


def baseline(out: Path, seconds: float) -> float:
    """The node's CPU with no table in play (gateway, Redis, Ray, the pool): its fixed parts."""
    t0 = time.time()
    time.sleep(seconds)
    return node_cpu(node_means(read_node(out / "node.csv"), t0, time.time()))


def ceiling(cpu: float, fixed: float, tables: int) -> tuple[float, float] | None:
    """(CPU per live table, tables at 100 % of every core) from a step's CPU; None when the
    step's tables cost nothing measurable above the fixed parts."""
    per_table = (cpu - fixed) / tables if tables else 0.0
    if per_table <= 0:
        return None
    cores = psutil.cpu_count() or 1
    return per_table, (100.0 * cores - fixed) / per_table


def _server(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """p50 and p99 (ms) of the gateway's own time for a swap between two scrapes."""
    return {
        f"p{q}": round(server_quantile(before, after, "quatro_command_seconds", "swap", q / 100), 1)
        for q in (50, 99)
    }


def step(
    a: argparse.Namespace,
    out: Path,
    stack: Launched,
    control: Control,
    n: int,
    t_start: float,
    live_before: int = 0,
    fixed: float = 0.0,
) -> dict[str, Any]:
    users = n * a.players
    control.set(users=users, spawn_rate=a.spawn_rate)
    ramp_from = scrape(stack.url)
    t_ramp = time.time()
    # The actors there before the ramp (those in play, and the pool's): their wait for a core.
    sched_from = runqueue.snapshot(actor_pids(stack.pid) if stack.pid is not None else [])
    gateway_from = runqueue.snapshot([stack.pid] if stack.pid is not None else [])
    psi_from = runqueue.pressure()
    spy = None
    if a.profile_ramp > 0 and stack.pid is not None:
        raw = out / f"profile-ramp-{n}" / "gateway.raw"
        raw.parent.mkdir(parents=True, exist_ok=True)
        spy = record(stack.pid, a.profile_ramp, raw, threads=True)
    deadline = t_ramp + users / a.spawn_rate + 180.0
    live = 0.0
    while time.time() < deadline:
        time.sleep(3.0)
        live = live_tables(out, t_ramp)
        if live >= n:
            break
    t_live = time.time()
    ramp_to = scrape(stack.url)
    sched_to = runqueue.snapshot(list(sched_from))
    gateway_to = runqueue.snapshot(list(gateway_from))
    psi_to = runqueue.pressure()
    if spy is not None and stack.pid is not None:
        collect(out / f"profile-ramp-{n}", {"gateway": spy}, {"gateway": stack.pid}, a.profile_ramp)
    ramp_s = t_live - t_ramp
    # The tables already in play while this step's were created (none before the first step).
    ramp_w = window(read_samples(out), t_ramp, t_live, live_before=t_ramp)
    ramp = {
        "seconds": round(ramp_s, 1),
        "new_tables_per_s": round((live - live_before) / ramp_s, 2) if ramp_s > 0 else None,
        "live_tables": live_before,
        "swap→ack": ramp_w.stat("swap→ack").row(),
        "lag": ramp_w.lag_row(),
        # The gateway's own time for the swaps of the ramp: what players would see from
        # machines of their own, apart from the load generator's lag while it spawns users.
        "server_swap→ack": _server(ramp_from, ramp_to),
        "runqueue": runqueue.summary(sched_from, sched_to, t_live - t_ramp),
        "gateway_runqueue": runqueue.summary(gateway_from, gateway_to, t_live - t_ramp),
        "pressure": runqueue.pressure_share(psi_from, psi_to, t_live - t_ramp),
    }
    if live < n:
        return {
            "tables": n,
            "held": False,
            "why": [f"only {live:.0f} tables went live"],
            "ramp": ramp,
        }
    time.sleep(a.settle)
    before = scrape(stack.url)
    t0 = time.time()
    sched_before = runqueue.snapshot(actor_pids(stack.pid) if stack.pid is not None else [])
    psi_before = runqueue.pressure()
    time.sleep(a.hold)
    t1 = time.time()
    sched_after = runqueue.snapshot(list(sched_before))
    psi_after = runqueue.pressure()
    after = scrape(stack.url)
    samples = read_samples(out)
    w = window(samples, t0, t1)
    means = node_means(read_node(out / "node.csv"), t0, t1)
    why = judge(w, a)
    seconds = t1 - t0
    calls = actor_commands(before, after) / seconds if after else math.nan
    batches = stream_batches(before, after)
    # After the hold: the short-lived driver that asks must not weigh on the window.
    per_node = (
        placement(stack.ray_address, token_path=stack.ray_token_path)
        if a.nodes > 1 and stack.ray_address
        else None
    )
    cost = ceiling(node_cpu(means), fixed, n)
    server = _server(before, after)
    return {
        "tables": n,
        "players": users,
        "held": not why,
        "why": why,
        "ramp_s": round(ramp_s, 1),
        "window": [round(t0 - t_start, 1), round(t1 - t_start, 1)],
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "exchanges": {name: w.stat(name).row() for name in EXCHANGES},
        "failures": w.failures,
        "failure_ratio": w.failure_ratio,
        "refusals": w.refusals,
        "node": means,
        "actor_calls_per_s": round(calls, 1),
        "stream_batches_per_s": None if batches is None else round(batches / seconds, 1),
        "tables_per_node": None if per_node is None else [v["tables"] for v in per_node.values()],
        "ramp": ramp,
        "lag": w.lag_row(),
        "server_swap→ack": server,
        "runqueue": runqueue.summary(sched_before, sched_after, t1 - t0),
        "pressure": runqueue.pressure_share(psi_before, psi_after, t1 - t0),
        "node_cpu": round(node_cpu(means), 1),
        "fixed_cpu": round(fixed, 1),
        "cpu_per_table": None if cost is None else round(cost[0], 2),
        "ceiling": None if cost is None else round(cost[1], 1),
    }


def profile_step(out: Path, stack_pid: int, n: int, seconds: float) -> None:
    actors = actor_pids(stack_pid)
    targets = {"gateway": stack_pid}
    if actors:
        # One actor that plays (not a pooled one): the busiest over a short look.
        busiest = max(actors, key=lambda pid: _cpu(pid))
        targets["table_actor"] = busiest
    profile_pids(out / f"profile-{n}", targets, seconds)


def _cpu(pid: int) -> float:
    try:
        t = psutil.Process(pid).cpu_times()
        return float(t.user + t.system)
    except psutil.Error:
        return 0.0


if __name__ == "__main__":
    cli.main(run)
