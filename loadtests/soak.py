"""The soak: real matches of Locust players while faults are injected one at a time.

    python -m loadtests.soak --tables 40 --minutes 30 --fault-every 60     # the goal
    python -m loadtests.soak --tables 6 --minutes 8                         # a short one
    python -m loadtests.soak --redis-cluster --tables 6 --minutes 6 \
        --faults redis_primary_kill,actor_kill,redis_primary_kill               # on a cluster

It starts a stack of its own (`soak_stack` below, built by cluster/stack.py: redis-server with
its append-only file, a Ray head and two Ray worker nodes that carry the tables, two gateways),
then one Locust process of players (loadtests/locustfile.py, every seat a player, half of each
table on each gateway, each player coming back through the other gateway when its own is
gone). Once every table is in play it
injects a fault every `--fault-every` seconds, cycling through loadtests/faults.py (`--faults`
to choose; by default every fault of the stack's store: `redis_restart` on one redis-server,
`redis_primary_kill` with `--redis-cluster`, a local Redis Cluster of three primaries and a
replica each as the store), each waited out (bounded) before the next. When the time is up
the players stop, the soak reads every table's final state (GET /api/tables/{code}) and prints
ONE JSON line:

    requests      every exchange by kind, with its failures (the game's refusals — a stale
                  swap, a cooldown — apart, never failures; a socket lost is a failure unless a
                  gateway kill explains it)
    failures      their total, and the fault window each fell in (`failures_during`)
    points_lost   scores shown to a player that the table later went back on, or that its
                  final state does not have
    tables_stuck  tables silent for more than `--stuck-s` (60) with players connected, in a
                  phase whose clock moves (signing, playing, pause), and more than 5 s past that
                  phase's deadline with no event (players may idle before it: a dead deal waits
                  for its R22 timeout); `longest_silence_s` and `longest_overdue_s` say how close
    p99_swap_ack_ms   outside the fault windows (each window: injection → recovery + 2 s;
                  an exchange overlapping one is left out)
    faults        each fault: kind, when (s from the start), target, time to recover (s; null:
                  not recovered within 120 s)
    recovery      per kind of fault: n, p50_s, p99_s, max_s of those times, not_recovered
                  (and of a lost Redis primary's phases: loadtests/failover_watch.py)

Everything else (Locust's CSV, the samples, the players' ledger, every process's log, a
longer report with the failures' messages: soak.json) stays in `--out` (default
results/soak-<time>/). Every process it starts is stopped by its PID, in a `finally`. The exit
status is 0 when failures, points lost and stuck tables are all zero and every fault recovered.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from cluster.gateway_process import ROOT
from cluster.redis_cluster import LocalRedisCluster
from cluster.stack import Spec, Stack
from loadtests import cli
from loadtests.faults import (
    CLUSTER_ONLY,
    FAULTS,
    OPT_IN,
    RECOVER_LIMIT_S,
    REST_TIMEOUT_S,
    SINGLE_ONLY,
    Fault,
    Injector,
    clear_control,
)
from loadtests.figures import emit, write_json
from loadtests.node import machine
from loadtests.report import read_samples
from loadtests.runner import locust_command, stop_on_signals
from loadtests.soak_judge import (
    STEPS,
    locust_failures,
    p99_outside,
    points_lost,
    recovery,
    requests,
)
from loadtests.watch import StuckMonitor, connected, read_ledger, read_tables

# The gateway waits up to 40 s through a fault before it answers `unavailable`
# (gateway/table_link.py REQUEST_WAIT_S): the players wait a little longer, so that what the
# soak counts is a command the gateway never answered, or answered `unavailable`.
ANSWER_WAIT_S = 45.0
LIVE_LIMIT_S = 240.0  # the tables must all be in play within this after Locust starts
ONCE_TAIL_S = 20.0  # --once: how long the players play on after the last fault


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = cli.command("soak", __doc__)
    p.add_argument("--tables", type=int, default=40)
    p.add_argument("--minutes", type=float, default=30.0, help="from the first table in play")
    cli.add_play(p, drop_rate=False)
    p.add_argument("--fault-every", type=float, default=60.0, help="seconds between faults")
    p.add_argument("--faults", default="", help="the cycle of faults (default: all that apply)")
    p.add_argument(
        "--redis-cluster",
        action="store_true",
        help="the store is a local Redis Cluster (3 primaries, a replica each)",
    )
    p.add_argument("--burst", type=int, default=0, help="tables per burst (0: tables/4, ≥4)")
    p.add_argument("--stop-s", type=float, default=20.0, help="how long a SIGSTOP lasts")
    p.add_argument(
        "--pool",
        type=int,
        default=2,
        help="ready table actors the gateways keep (QUATRO_POOL_SIZE): a lost node's tables "
        "are taken over by them first",
    )
    p.add_argument("--stuck-s", type=float, default=60.0)
    p.add_argument(
        "--log-level",
        default="warning",
        help="the gateways' QUATRO_LOG_LEVEL (info: each link's sessions, to read a recovery)",
    )
    p.add_argument(
        "--answer-timeout",
        type=float,
        default=ANSWER_WAIT_S,
        help="an unanswered command is a failure after this many seconds",
    )
    p.add_argument(
        "--once",
        action="store_true",
        help="each fault once, then 20 s more and stop (--minutes is then only a bound)",
    )
    cli.add_out(p, "soak")
    return p.parse_args(argv)


def run(argv: list[str] | None = None) -> int:
    a = parse(argv)
    stop_on_signals()
    # Stdout is for the JSON line alone: whatever else writes to it (Ray's driver prints the
    # cluster's errors there, a node marked dead among them) goes to stderr.
    sys.stdout.flush()
    line_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    kinds = [k.strip() for k in a.faults.split(",") if k.strip()] or default_faults(a)
    unknown = [k for k in kinds if k not in FAULTS]
    if unknown:
        raise SystemExit(f"unknown faults {unknown}; known: {', '.join(FAULTS)}")
    wrong = [k for k in kinds if k in (SINGLE_ONLY if a.redis_cluster else CLUSTER_ONLY)]
    if wrong:
        raise SystemExit(f"{wrong}: not faults of this store (--redis-cluster {a.redis_cluster})")
    out = cli.out_dir(a.out, "soak").resolve()
    players_dir = out / "players"
    players_dir.mkdir(parents=True, exist_ok=True)
    burst = a.burst or max(4, a.tables // 4)
    # Each node must carry every table alone (a node lost), the bursts' lobbies until they idle
    # out (60 s), and the gateways' pools.
    stack = soak_stack(
        out / "stack",
        a.tables + 2 * burst + 16,
        a.time_scale != 1.0,
        a.redis_cluster,
        a.pool,
        a.log_level,
    )
    locust: subprocess.Popen[bytes] | None = None
    monitor = StuckMonitor(players_dir, limit_s=a.stuck_s)
    faults: list[Fault] = []
    t0 = time.time()
    try:
        log(f"starting the stack in {stack.logs} …")
        stack.start()
        stack.driver()
        injector = Injector(stack, players_dir, burst, a.stop_s)
        users = a.tables * a.players
        seconds = int(a.minutes * 60 + LIVE_LIMIT_S)  # Locust is stopped by us, earlier
        play = cli.play(a)
        cmd = locust_command(
            stack.gateways[0].url, out, play, users=users, spawn_rate=8.0, seconds=seconds
        )
        cmd += ["--hosts", ",".join(g.url for g in stack.gateways)]
        cmd += ["--soak-dir", str(players_dir)]
        cmd += ["--answer-timeout", str(a.answer_timeout)]
        (out / "command.txt").write_text(" ".join(cmd) + "\n")
        clear_control(players_dir)
        with (out / "locust.out").open("wb") as locust_out:  # stdout keeps the JSON line alone
            locust = subprocess.Popen(
                cmd, cwd=ROOT, stdout=locust_out, stderr=subprocess.STDOUT, start_new_session=True
            )
        t_live = wait_live(players_dir, a.tables, a.players, locust)
        log(f"{a.tables} tables in play after {t_live - t0:.0f} s; soaking {a.minutes} min")
        monitor.start()
        t_end = t_live + a.minutes * 60
        i = 0
        next_at = t_live + min(a.fault_every, 30.0)
        # A fault starts only if it has time to be recovered from before the end.
        while time.time() + 30.0 < t_end and locust.poll() is None:
            if a.once and i >= len(kinds):
                t_end = min(t_end, time.time() + ONCE_TAIL_S)
                break
            if time.time() < next_at:
                time.sleep(min(1.0, next_at - time.time()))
                continue
            kind = kinds[i % len(kinds)]
            i += 1
            fault = injector.run(kind)
            faults.append(fault)
            rec = "NOT recovered" if fault.recover_s is None else f"{fault.recover_s:.1f} s"
            steps = [f"{k[:-2]} {v}" for k, v in fault.detail.items() if k[:-2] in STEPS]
            log(
                f"fault {kind} on {fault.target}: {rec}"
                + (f" ({', '.join(steps)})" if steps else "")
            )
            next_at = max(fault.start + a.fault_every, fault.end + 5.0)
        while time.time() < t_end and locust.poll() is None:
            time.sleep(1.0)
        monitor.poll()
        stop_locust(locust)
        locust = None
        time.sleep(2.0)  # the last ledger lines are flushed at quit
        final = final_tables(stack, players_dir, injector.burst_codes)
        result = judge(a, out, players_dir, faults, monitor, final, t0, t_live)
        emit(result["line"], line_out)
        return 0 if result["ok"] else 1
    finally:
        monitor.stop()
        if locust is not None:
            stop_locust(locust)
        stack.stop()


def default_faults(a: argparse.Namespace) -> list[str]:
    """Every fault of the soak's store (a redis-server restarted, or a cluster's primary lost),
    but those only run when asked for."""
    skip = (SINGLE_ONLY if a.redis_cluster else CLUSTER_ONLY) + OPT_IN
    return [k for k in FAULTS if k not in skip]


def soak_stack(
    folder: Path,
    table_slots: int,
    test_hooks: bool,
    cluster: bool = False,
    pool: int = 2,
    log_level: str = "warning",
) -> Stack:
    """A redis-server (append-only file in the run's folder; with `cluster`, a local Redis
    Cluster of three primaries and a replica each, in it too), a Ray head that carries no table
    (the control plane: its GCS must survive every fault, and the gateways' drivers attach to
    it), two Ray worker nodes that carry the tables (each must carry every table alone: a node
    is lost again and again, and a new one takes its place), and two gateways on ports of their
    own, each restartable on the same port. The soak itself joins Ray as a driver, only to find
    table actors' processes."""
    spec = Spec(
        table_slots=table_slots,
        nodes=2,
        head_tables=False,
        gateways=2,
        namespace="quatro-soak",
        object_store_mb=200,
        pool=pool,
        idle_s=60.0,
        log_level=log_level,
        test_hooks=test_hooks,
        crowd=True,
    )
    if cluster:
        store = LocalRedisCluster(dir=folder / "redis-cluster", node_timeout_ms=2000)
        return Stack(spec, folder, redis_cluster=store)
    return Stack(spec, folder, redis_dir=folder / "redis")


def log(text: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def wait_live(folder: Path, tables: int, players: int, locust: subprocess.Popen[bytes]) -> float:
    deadline = time.monotonic() + LIVE_LIMIT_S
    while time.monotonic() < deadline:
        if locust.poll() is not None:
            raise RuntimeError(f"locust exited with {locust.returncode} before the tables filled")
        t = read_tables(folder)
        playing = [c for c, x in t.items() if x["phase"] != "lobby"]
        if len(playing) >= tables and connected(t) >= tables * players:
            return time.time()
        time.sleep(1.0)
    raise RuntimeError(f"the {tables} tables were not all in play within {LIVE_LIMIT_S:.0f} s")


def stop_locust(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT: Locust stops its users (their last lines flushed) and writes its CSV."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def final_tables(
    stack: Stack, folder: Path, burst_codes: list[str]
) -> dict[str, dict[str, Any] | None]:
    """Each played table's summary as the server has it now (None: it is gone)."""
    codes = sorted({e["code"] for e in read_ledger(folder)} - set(burst_codes))
    final: dict[str, dict[str, Any] | None] = {}
    url = next(g.url for g in stack.gateways if g.alive)
    with httpx.Client(base_url=url, timeout=REST_TIMEOUT_S) as c:
        for code in codes:
            r = c.get(f"/api/tables/{code}")
            final[code] = r.json() if r.status_code == 200 else None
    return final


def judge(
    a: argparse.Namespace,
    out: Path,
    folder: Path,
    faults: list[Fault],
    monitor: StuckMonitor,
    final: dict[str, dict[str, Any] | None],
    t0: float,
    t_live: float,
) -> dict[str, Any]:
    samples = read_samples(out)
    req = requests(samples, faults)
    # The bursts' creations are the soak's own requests (not Locust's): counted alike.
    bursts = [f for f in faults if f.kind == "burst"]
    if bursts:
        refused = sum(len(f.detail["refused"]) for f in bursts)
        made = sum(int(f.detail["created"]) for f in bursts)
        req["requests"]["BURST POST /api/tables"] = {"n": made + refused, "failed": refused}
        req["failures"] += refused
        if refused:
            req["failures_during"]["burst"] = req["failures_during"].get("burst", 0) + refused
    pts = points_lost(read_ledger(folder), final)
    stuck = monitor.stuck()
    line: dict[str, Any] = {
        "tables": a.tables,
        "players": a.players,
        "minutes": a.minutes,
        "fault_every_s": a.fault_every,
        "requests": req["requests"],
        "refusals": req["refusals"],
        "failures": req["failures"],
        "failures_during": req["failures_during"],
        "lost_sockets_explained": req["lost_sockets_explained"],
        "points_lost": pts.lost,
        "reveals_seen": pts.reveals,
        "tables_gone": len(pts.gone),
        "tables_stuck": len(stuck),
        "longest_silence_s": round(max((s.seconds for s in monitor.worst.values()), default=0), 1),
        "longest_overdue_s": round(
            max((s.overdue_s for s in monitor.overdue.values()), default=0), 1
        ),
        "p99_swap_ack_ms": p99_outside(samples, faults),
        "faults": [f.row(t_live) for f in faults],
        "recovery": recovery(faults),
        "not_recovered": sum(1 for f in faults if f.recover_s is None),
        "recover_limit_s": RECOVER_LIMIT_S,
    }
    ok = not (req["failures"] or pts.lost or stuck or line["not_recovered"] or pts.gone)
    report = {
        "line": line,
        "ok": ok,
        "machine": machine(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t0)),
        "failure_list": req["failure_list"],
        "locust_failures": locust_failures(out),
        "regressions": pts.regressions,
        "gone": pts.gone,
        "stuck": [vars(s) for s in stuck],
        "longest_overdue": [
            vars(s) for s in sorted(monitor.overdue.values(), key=lambda s: -s.overdue_s)[:10]
        ],
        "longest_silences": [
            vars(s) for s in sorted(monitor.worst.values(), key=lambda s: -s.seconds)[:10]
        ],
    }
    write_json(out / "soak.json", report)
    return report


if __name__ == "__main__":
    cli.main(run)
