"""Run a load test and write its results folder.

    python -m loadtests.run --tables 20 --players 6 --minutes 5            # against `make run`
    python -m loadtests.run --tables 20 --minutes 5 --embedded             # a stack of its own
    python -m loadtests.run --tables 2 --minutes 0.5 --embedded --pace 10 --time-scale 0.1

The folder (`--out`, default `results/load-<time>/`) receives Locust's CSV stats (`locust_*.csv`,
with per-second history) and HTML report (`report.html`), the raw samples of every exchange
(`samples-<pid>.csv`), the node's CPU and memory per process group (`node.csv`), the plots
(`latency.png`, `activity.png`, `node.png`) and a summary (`summary.json`, `summary.md`).

`--embedded` starts `python -m cluster up` on a free port (with the test hooks on when
`--time-scale` is not 1) and stops it afterwards; otherwise the node is sampled when the URL's
port is served by a process of this machine. The exit status is Locust's: 1 when any exchange
failed.
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
from urllib.parse import urlparse

from cluster.stack import Launched, Spec
from loadtests import cli
from loadtests.figures import write_json
from loadtests.node import NODE_GROUPS, NodeSampler, listener_pid, machine
from loadtests.report import (
    EXCHANGES,
    Window,
    node_means,
    plot_all,
    read_node,
    read_samples,
    table,
    window,
)
from loadtests.runner import (
    Play,
    actor_commands,
    locust_command,
    scrape,
    stop_on_signals,
    stream_batches,
)


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = cli.command("run", __doc__)
    p.add_argument("--tables", type=int, default=10, help="live tables (all seats are users)")
    p.add_argument("--minutes", type=float, default=5.0, help="length of the run")
    cli.add_play(p, match_rounds=True)
    p.add_argument("--spawn-rate", type=float, default=10.0, help="users started per second")
    p.add_argument("--processes", type=int, default=1, help="Locust worker processes")
    cli.add_url(p, cli.default_url(), "the gateway (default: `make run`'s, or QUATRO_URL)")
    p.add_argument("--embedded", action="store_true", help="start a stack of its own")
    cli.add_out(p, "load")
    cli.add_quiet_ray(p)
    return p.parse_args(argv)


def run(argv: list[str] | None = None) -> int:
    a = parse(argv)
    stop_on_signals()
    out = cli.out_dir(a.out, "load")
    tables = a.tables
    if a.processes > 1 and tables % a.processes:
        # Each process forms tables from its own users: give every process whole tables.
        tables = math.ceil(tables / a.processes) * a.processes
        print(f"tables rounded up to {tables} (a multiple of --processes)", flush=True)
    play = cli.play(a)
    stack: Launched | None = None
    url = a.url
    try:
        if a.embedded:
            spec = Spec.under_load(
                table_slots=max(64, tables * 2 + 16),
                test_hooks=a.time_scale != 1.0,
                quiet_ray=a.quiet_ray == "1",
            )
            stack = Launched(spec, out / "stack.log")
            print(f"starting the embedded stack on {stack.url} …", flush=True)
            stack.start()
            url = stack.url
            gateway_pid = stack.pid
        else:
            gateway_pid = listener_pid(urlparse(url).port or 80)
        return _run(a, out, url, play, tables, gateway_pid)
    finally:
        if stack is not None:
            stack.stop()


def _run(
    a: argparse.Namespace, out: Path, url: str, play: Play, tables: int, gateway_pid: int | None
) -> int:
    users = tables * a.players
    seconds = max(10, round(a.minutes * 60))
    cmd = locust_command(
        url, out, play, users=users, spawn_rate=a.spawn_rate, seconds=seconds, processes=a.processes
    )
    (out / "command.txt").write_text(" ".join(cmd) + "\n")
    before = scrape(url)
    t_start = time.time()
    print(f"locust: {users} users ({tables} tables of {a.players}) for {seconds} s → {out}")
    proc = subprocess.Popen(cmd, start_new_session=True)
    sampler = NodeSampler(out / "node.csv", gateway_pid, proc.pid).start()
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        os.killpg(proc.pid, signal.SIGINT)
        rc = proc.wait()
    finally:
        sampler.stop()
    t_end = time.time()
    after = scrape(url)
    summary = summarise(out, t_start, t_end, before, after, a, tables)
    print(summary, flush=True)
    return rc


def summarise(
    out: Path,
    t0: float,
    t1: float,
    before: dict[str, float],
    after: dict[str, float],
    a: argparse.Namespace,
    tables: int,
) -> str:
    samples = read_samples(out)
    node = read_node(out / "node.csv")
    w = window(samples, t0, t1)
    means = node_means(node, t0, t1)
    seconds = t1 - t0
    calls = actor_commands(before, after)
    batches = stream_batches(before, after)
    data = {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
        "tables": tables,
        "seconds": round(seconds, 1),
        "machine": machine(),
        "exchanges": [w.stat(n).row() for n in EXCHANGES],
        "other": [s.row() for n, s in sorted(w.stats.items()) if n not in EXCHANGES],
        "rest": [s.row() for _, s in sorted(w.rest.items())],
        "refusals": w.refusals,
        "failures": w.failures,
        "failure_ratio": w.failure_ratio,
        "node": means,
        "actor_commands_per_s": round(calls / seconds, 1) if after else None,
        "stream_batches_per_s": round(batches / seconds, 1) if batches is not None else None,
        # A subscription restarted: an event the gateway waited for (2 s) never came.
        "resubscribes": after.get("quatro_resubscribes_total", 0.0)
        - before.get("quatro_resubscribes_total", 0.0),
    }
    write_json(out / "summary.json", data)
    plots = plot_all(out, samples, node, f"{tables} tables × {a.players}")
    text = _markdown(data, w, means)
    text += "\n\nPlots: " + ", ".join(p.name for p in plots) + "\n"
    (out / "summary.md").write_text(text)
    return text


def _markdown(data: dict[str, object], w: Window, means: dict[str, dict[str, float]]) -> str:
    cols = ["name", "count", "failures", "p50", "p95", "p99", "max"]
    lines = [
        f"# Load run: {data['tables']} tables, {data['seconds']} s",
        "",
        table([w.stat(n).row() for n in EXCHANGES], cols),
        "",
        f"Failures: {w.failures} ({100 * w.failure_ratio:.3f}%). Refusals of the game (not "
        f"failures): {json.dumps(w.refusals, ensure_ascii=False)}",
        "",
        f"Node, mean over the run (CPU in % of one core; this machine has {os.cpu_count()} cores):",
        "",
        table(
            [
                {
                    "group": g,
                    "cpu": means.get(g, {}).get("cpu", math.nan),
                    "rss_mb": means.get(g, {}).get("rss_mb", math.nan),
                    "procs": int(means.get(g, {}).get("procs", 0)),
                    "uss_mb_actor": means.get(g, {}).get("uss_mb_actor", math.nan),
                }
                for g in (*NODE_GROUPS, "locust")
            ],
            ["group", "cpu", "rss_mb", "procs", "uss_mb_actor"],
        ),
        "",
        f"Table-actor commands per second (one Ray call each): {data['actor_commands_per_s']}; "
        f"stream batches per second: {data['stream_batches_per_s']}; subscriptions restarted "
        f"after a gap: {data['resubscribes']}",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    cli.main(run)
