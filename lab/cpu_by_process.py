"""Where a command's CPU goes: the machine's processes sampled while it runs, their CPU time
added up by kind (Ray's table actors and other workers, the raylet, the GCS, gateways, pytest,
Chromium, redis-server, …).

    python -m lab.cpu_by_process -- .venv/bin/python -m pytest tests/cluster/test_r30_property.py
    python -m lab.cpu_by_process --interval 1 -- make check

It reads /proc every `--interval` seconds while the command runs: a process seen for the first
time counts all the CPU it used since it started, one seen before the CPU it used since the last
sample. So a process that starts and ends between two samples is missed (keep the interval
short next to the lifetimes that matter), and what ran before the command is left out.
Every process started meanwhile is counted, the command's children or not: run it on a quiet
machine. `--tree` counts only the command and its descendants, for a machine that is not quiet;
a daemon that left its parent before a sample saw it is missed then (`ray start`'s raylet and
GCS are), so a stack's own processes are only all counted without it.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections import Counter
from pathlib import Path

from loadtests import cli
from loadtests.figures import emit
from loadtests.node import machine

TICK = os.sysconf("SC_CLK_TCK")

# Programs told by their executable: the raylet's own arguments name Ray's worker script.
PROGRAMS = {
    "raylet": "raylet",
    "gcs_server": "GCS",
    "redis-server": "redis-server",
    "chromium": "chromium",
    "chrome": "chromium",
}
# Then the first pattern found in the command line (Ray's processes rename themselves `ray::…`;
# its workers carry the raylet's name among their arguments).
KINDS = (
    ("ray::TableActor", "table actor"),
    ("ray::IDLE", "idle Ray worker"),
    ("DashboardAgent", "Ray dashboard and agents"),
    ("RuntimeEnvAgent", "Ray dashboard and agents"),
    ("dashboard", "Ray dashboard and agents"),
    ("log_monitor", "Ray monitors"),
    ("monitor.py", "Ray monitors"),
    ("ray::", "other Ray worker"),
    ("default_worker.py", "other Ray worker"),
    ("-m gateway", "gateway"),
    ("uvicorn", "gateway"),
    ("locust", "locust"),
    ("pytest", "pytest"),
)


# A Ray worker renames itself once it knows what it runs (an idle one becomes a table actor).
RENAMED = ("idle Ray worker", "other Ray worker")


def kind_of(cmdline: str) -> str:
    """The kind of a process by its command line (NUL-separated as /proc gives it, or not)."""
    words = cmdline.replace("\0", " ").split()
    if not words:
        return "other"
    program = PROGRAMS.get(words[0].rsplit("/", 1)[-1])
    if program is not None:
        return program
    line = " ".join(words)
    for pattern, kind in KINDS:
        if pattern in line:
            return kind
    return "other"


Key = tuple[int, int]  # (pid, start time): a pid the kernel gave again is another process


def sample() -> dict[Key, tuple[int, int]]:
    """(pid, start time) → (CPU ticks (user + system), parent's pid) of every process now."""
    out: dict[Key, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            # The fields after the command's name (which may hold spaces and parentheses).
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        out[(int(entry.name), int(fields[19]))] = (
            int(fields[11]) + int(fields[12]),
            int(fields[1]),
        )
    return out


def cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        return raw or Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return ""


def measure(argv: list[str], interval: float, tree: bool = False) -> dict[str, object]:
    """Run `argv` to its end, sampling every `interval` s; CPU seconds by kind (of the command
    and its descendants only, with `tree`)."""
    ticks_then = {key: ticks for key, (ticks, _) in sample().items()}
    kinds = {key: "" for key in ticks_then}  # "": running before the command, not counted
    by_kind: Counter[str] = Counter()
    started = time.monotonic()
    proc = subprocess.Popen(argv)
    ours = {proc.pid}
    while True:
        done = proc.poll() is not None
        for key, (ticks, parent) in sample().items():
            if key not in kinds:
                if tree and parent not in ours and key[0] != proc.pid:
                    kinds[key] = ""  # another's: never counted
                else:
                    ours.add(key[0])
                    kinds[key] = kind_of(cmdline(key[0]))
                ticks_then[key] = 0  # all it used since it started
            elif kinds[key] in RENAMED:
                kinds[key] = kind_of(cmdline(key[0]))
            if kinds[key]:
                by_kind[kinds[key]] += ticks - ticks_then[key]
            ticks_then[key] = ticks
        if done:
            break
        time.sleep(interval)
    wall = time.monotonic() - started
    total = sum(by_kind.values()) / TICK
    return {
        "machine": machine(),
        "command": argv,
        "exit": proc.returncode,
        "wall_s": round(wall, 1),
        "cpu_s": round(total, 1),
        "cpu_s_by_kind": {k: round(v / TICK, 1) for k, v in by_kind.most_common()},
    }


def main(argv: list[str] | None = None) -> None:
    p = cli.command("lab.cpu_by_process", __doc__)
    p.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    p.add_argument("--tree", action="store_true", help="only the command and its descendants")
    p.add_argument("command", nargs="+", help="the command to run (after --)")
    a = p.parse_args(argv)
    emit(measure(a.command, a.interval, a.tree))


if __name__ == "__main__":
    main()
