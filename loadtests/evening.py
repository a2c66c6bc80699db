"""An evening on one node: players arriving from a few to the node's capacity and back.

    python -m loadtests.evening                          # its own embedded stack: 10 + 4 minutes
    python -m loadtests.evening --rise 2 --fall 1 --peak 40      # a short one
    python -m loadtests.evening --url http://127.0.0.1:8000      # a stack already running

Locust's players (loadtests/locustfile.py) follow the curve of loadtests/evening_curve.py: from
`--few` players to `--peak` over `--rise` minutes, slowly at first, and back over `--fall`. Each
arriving player either forms a private table of four with three others (the first opens it, the
others take its seats by invite) or presses Play now (`--quick-share` of them); the players of a
table leave it when its match is over (or after `--match-rounds` rounds) and form another, so
matches end and new ones start all along; players drop their connection now and then and come back
(`--drop-rate`); as the curve falls, Locust stops players mid-match and their tables break up.
The players play at `--level sharp` by default (engine.bots.levels: about the commands per table
of the players before issue 46, so that the node's capacity figures stay comparable).

Printed per minute, and judged against issue 48's goals (loadtests/evening_report.py): arrival →
seated p50/p99, live tables, ready actors, actor starts per table created, the live tables'
`swap→ack` p99, failures. `--floor N` sets the embedded stack's `QUATRO_POOL_FLOOR` (an
operator who expects the evening). Results (samples, Locust's CSV, the gateway's counters,
evening.json) go to `--out`. Exits 1 when a goal was missed. The chart's Locust job plays the
same curve in a cluster with `loadtest.evening` (docs/operations.md, "Load test"): its minutes
are read there from Locust's CSV history and the dashboards.
"""

from __future__ import annotations

import argparse
import csv
import os
import signal
import subprocess
import sys
import time

from cluster.stack import Launched, Spec
from loadtests import cli
from loadtests.evening_curve import ENV, SPAWN_RATE, Curve
from loadtests.evening_report import Gauges, judge, minutes, table
from loadtests.figures import emit, write_json
from loadtests.node import machine
from loadtests.report import read_samples
from loadtests.runner import locust_command, scrape, stop_on_signals

LOOK_EVERY_S = 5.0


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = cli.command("evening", __doc__)
    p.add_argument("--rise", type=float, default=10.0, help="minutes from few to peak")
    p.add_argument("--fall", type=float, default=4.0, help="minutes from peak back to few")
    p.add_argument("--peak", type=int, default=240, help="players at the peak")
    p.add_argument("--few", type=int, default=8, help="players at the start and the end")
    p.add_argument("--quick-share", type=float, default=0.4, help="share of Play now")
    p.add_argument("--level", default="sharp", help="the players' bot level")
    p.add_argument("--floor", type=int, default=0, help="embedded stack: QUATRO_POOL_FLOOR")
    p.add_argument("--pool", type=int, default=4, help="embedded stack: QUATRO_POOL_SIZE")
    cli.add_play(p, match_rounds=True)
    # A private table's players leave it at its match's end (before 99 rounds), as a public
    # table's do, and form another: matches end and new ones start all evening.
    p.set_defaults(players=4, match_rounds=99, drop_rate=0.3)
    cli.add_url(p, what="a running gateway (default: start an embedded stack)")
    cli.add_out(p, "evening")
    return p.parse_args(argv)


def look(url: str) -> Gauges:
    m = scrape(url)
    return Gauges(
        time.time(),
        m.get("quatro_pool_ready", 0.0),
        m.get("quatro_tables_followed", 0.0),
        m.get("quatro_pool_starts_total", 0.0),
        m.get("quatro_pool_served_total", 0.0),
        m.get("quatro_pool_parked", 0.0),
    )


def run(argv: list[str] | None = None) -> int:
    a = parse(argv)
    stop_on_signals()
    out = cli.out_dir(a.out, "evening")
    curve = Curve(a.rise * 60, a.fall * 60, a.peak, a.few, a.players)
    print(f"machine: {machine()}", flush=True)
    stack: Launched | None = None
    url = a.url
    if url is None:
        # Tables everyone left (a friend gone, the curve falling) stop after 2 minutes, as
        # lobbies and finished matches do on the kit's stack (not the 30 of production, where
        # players come back to them): their actors then serve the next tables. Those whose
        # players all sat down at other tables stop 20 s after (QUATRO_LEFT_IDLE, as in
        # production).
        settings = {"QUATRO_ABANDONED_IDLE": "120"}
        if a.floor:
            settings["QUATRO_POOL_FLOOR"] = str(a.floor)
        slots = a.peak // a.players * 2 + 32
        spec = Spec.under_load(table_slots=slots, pool=a.pool, settings=settings)
        stack = Launched(spec, out / "stack.log")
        print("starting the embedded stack …", flush=True)
        stack.start()
        url = stack.url
    cmd = locust_command(url, out, cli.play(a), users=None, spawn_rate=SPAWN_RATE, seconds=None)
    cmd += ["--quick-share", str(a.quick_share), "--level", a.level]
    (out / "command.txt").write_text(" ".join(cmd) + "\n")
    spec_text = f"{a.rise}:{a.fall}:{a.peak}:{a.few}"
    env = dict(os.environ, **{ENV: spec_text, "QUATRO_SEATS": str(a.players)})
    gauges: list[Gauges] = []
    locust: subprocess.Popen[bytes] | None = None
    began = time.time()
    try:
        locust = subprocess.Popen(cmd, env=env, start_new_session=True)
        began = time.time()
        while locust.poll() is None:
            gauges.append(look(url))
            time.sleep(LOOK_EVERY_S)
        gauges.append(look(url))
    finally:
        if locust is not None and locust.poll() is None:
            os.killpg(locust.pid, signal.SIGTERM)
            locust.wait(30)
        if stack is not None:
            stack.stop()
    with (out / "gauges.csv").open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(
            (g.t, g.ready, g.tables, g.starts, g.served, g.parked) for g in gauges
        )
    risen_at = began + curve.rise_s
    rows = minutes(read_samples(out), gauges, began, risen_at)
    missed = judge(rows)
    print(table(rows))
    print("goals: met" if not missed else "goals missed:\n  " + "\n  ".join(missed))
    result = {"curve": spec_text, "level": a.level, "rows": rows, "missed": missed}
    write_json(out / "evening.json", result)
    emit({"machine": machine(), **result})
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(run())
