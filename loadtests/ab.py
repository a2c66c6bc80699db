"""Alternating A/B runs of `loadtests.capacity`: the same steps under each setting in turn, so a
slow hour of the machine weighs on every setting alike, then one table of every run.

    python -m loadtests.ab --runs 3 \\
        --setting "ray15:QUATRO_PLAY_NICE=" --setting "play0:QUATRO_PLAY_NICE=0" \\
        -- --steps 80,100 --hold 60 --settle 15 --spawn-rate 24 --profile-seconds 0 --keep-going

A setting is `name:KEY=VALUE,KEY=VALUE` (environment for the whole stack: the gateway, Redis,
Ray's nodes and so their workers); what follows `--` is passed to every capacity run. Each run's
results stay in `--out`/<setting>-<n>/; the summary (`ab.json`, `ab.md`) lists per run and step
whether it held, p99 `swap→ack` over the hold (client and server), the load generator's lag,
p99 `swap→ack` of the live tables during the step's ramp (client and server, and Locust's lag
meanwhile), and capacity ÷ ceiling. `--read DIR` prints the summary of runs already made.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loadtests import cli
from loadtests.figures import write_json


def setting(text: str) -> tuple[str, dict[str, str]]:
    name, _, pairs = text.partition(":")
    env: dict[str, str] = {}
    for pair in filter(None, pairs.split(",")):
        key, sep, value = pair.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"not KEY=VALUE: {pair!r}")
        env[key.strip()] = value
    if not name:
        raise argparse.ArgumentTypeError("a setting needs a name: name:KEY=VALUE,…")
    return name, env


def _p99(d: Any) -> float | None:
    value = d.get("p99") if isinstance(d, dict) else None
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def rows_of(name: str, run: int, result: Path) -> list[dict[str, Any]]:
    """One row per step of a finished capacity run (none when it left no capacity.json)."""
    path = result / "capacity.json"
    if not path.exists():
        return [{"setting": name, "run": run, "tables": None, "held": None, "why": ["no result"]}]
    rows = []
    for s in json.loads(path.read_text())["steps"]:
        ceiling = s.get("ceiling")
        rows.append(
            {
                "setting": name,
                "run": run,
                "tables": s["tables"],
                "held": s["held"],
                "ack p99": _p99(s["exchanges"].get("swap→ack")),
                "server ack p99": _p99(s.get("server_swap→ack")),
                "lag p99": _p99(s.get("lag")),
                "ramp ack p99 (live)": _p99(s.get("ramp", {}).get("swap→ack")),
                "ramp server ack p99": _p99(s.get("ramp", {}).get("server_swap→ack")),
                "ramp lag p99": _p99(s.get("ramp", {}).get("lag")),
                "ramp tables/s": s.get("ramp", {}).get("new_tables_per_s"),
                "ramp actor wait/slice ms": s.get("ramp", {})
                .get("runqueue", {})
                .get("wait_per_slice_ms"),
                "actor wait/slice ms": s.get("runqueue", {}).get("wait_per_slice_ms"),
                "of ceiling %": round(100 * s["tables"] / ceiling, 1) if ceiling else None,
                "why": s.get("why", []),
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    cols = [
        "setting",
        "run",
        "tables",
        "held",
        "ack p99",
        "server ack p99",
        "lag p99",
        "ramp ack p99 (live)",
        "ramp server ack p99",
        "ramp lag p99",
        "ramp tables/s",
        "ramp actor wait/slice ms",
        "actor wait/slice ms",
        "of ceiling %",
    ]
    lines = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    for r in rows:
        lines.append(
            "| " + " | ".join("" if r.get(c) is None else str(r.get(c)) for c in cols) + " |"
        )
    return "\n".join(lines) + "\n"


def summarise(out: Path, names: list[str]) -> int:
    """The summary of the runs already in `out` (folders `<setting>-<n>`), in the order run."""
    rows: list[dict[str, Any]] = []
    runs = sorted({int(d.name.rsplit("-", 1)[1]) for d in out.iterdir() if d.is_dir()})
    for run in runs:
        for name in names:
            if (out / f"{name}-{run}").is_dir():
                rows += rows_of(name, run, out / f"{name}-{run}")
    print(markdown(rows), end="")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    ours, passed = argv[:cut], argv[cut + 1 :]
    p = cli.command("ab", __doc__)
    p.add_argument("--setting", type=setting, action="append", required=True)
    p.add_argument("--runs", type=int, default=3)
    cli.add_out(p, "ab")
    p.add_argument("--read", type=Path, default=None, help="summarise the runs of this folder")
    args = p.parse_args(ours)
    if args.read is not None:
        return summarise(args.read, [name for name, _ in args.setting])
    out = cli.out_dir(args.out, "ab")
    rows: list[dict[str, Any]] = []
    for run in range(1, args.runs + 1):
        for name, env in args.setting:
            result = out / f"{name}-{run}"
            started = time.strftime("%H:%M", time.gmtime())
            print(f"run {run}, setting {name} ({env}), from {started} UTC", flush=True)
            cmd = [sys.executable, "-m", "loadtests.capacity", *passed, "--out", str(result)]
            subprocess.run(cmd, env={**os.environ, **env}, check=False)
            found = rows_of(name, run, result)
            for r in found:
                r["started"] = started
            rows += found
            write_json(out / "ab.json", rows)
            (out / "ab.md").write_text(markdown(rows))
    print(markdown(rows), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
