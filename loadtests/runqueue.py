"""How long processes wait for a core, as the kernel counts it (`/proc/<pid>/task/*/schedstat`).

A latency that grows while no process of ours is busy can still be a wait for the CPU: a table
actor woken by a swap is runnable but not running while other processes (new workers starting,
the load generator) hold both cores. py-spy cannot see that time (the process is not running)
and CPU percentages do not show it either; the scheduler counts it per thread: time on a core,
time runnable and waiting, and how many times it got a core (its three schedstat fields, in ns).

`wait per slice` (ms): the mean wait before each turn on a core, what a swap pays when its actor
has to be woken. `wait per second` (ms): the share of every second a process spent runnable
without a core.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Sched:
    run_ns: int = 0
    wait_ns: int = 0
    slices: int = 0

    def __add__(self, other: Sched) -> Sched:
        return Sched(
            self.run_ns + other.run_ns, self.wait_ns + other.wait_ns, self.slices + other.slices
        )

    def __sub__(self, other: Sched) -> Sched:
        return Sched(
            self.run_ns - other.run_ns, self.wait_ns - other.wait_ns, self.slices - other.slices
        )


def parse(line: str) -> Sched:
    """One schedstat line: `run_ns wait_ns slices`."""
    run, wait, slices = (int(x) for x in line.split()[:3])
    return Sched(run, wait, slices)


def process(pid: int, proc: Path = PROC) -> Sched | None:
    """The sum over a process's threads, None when it is gone (its threads come and go: a
    thread that ended between two readings takes its time with it, a small undercount)."""
    total = Sched()
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            total = total + parse((task / "schedstat").read_text())
        except (OSError, ValueError):
            continue
    return total


def snapshot(pids: list[int], proc: Path = PROC) -> dict[int, Sched]:
    found = {pid: process(pid, proc) for pid in pids}
    return {pid: s for pid, s in found.items() if s is not None}


def summary(before: dict[int, Sched], after: dict[int, Sched], seconds: float) -> dict[str, float]:
    """The wait of the processes present in both readings over `seconds`: per turn on a core
    and per second of each process, in ms (NaN with no process or no turn)."""
    common = [pid for pid in before if pid in after]
    delta = Sched()
    for pid in common:
        delta = delta + (after[pid] - before[pid])
    per_slice = delta.wait_ns / delta.slices / 1e6 if delta.slices > 0 else float("nan")
    per_second = (
        delta.wait_ns / len(common) / seconds / 1e6 if common and seconds > 0 else float("nan")
    )
    return {
        "processes": float(len(common)),
        "wait_per_slice_ms": round(per_slice, 3),
        "wait_per_s_ms": round(per_second, 1),
    }


PRESSURES = ("cpu", "memory", "io")


def pressure(proc: Path = PROC) -> dict[str, int]:
    """The kernel's pressure stall totals (`some`: µs during which at least one task waited for
    that resource), where PSI is on; an empty dict where it is not."""
    found: dict[str, int] = {}
    for kind in PRESSURES:
        try:
            text = (proc / "pressure" / kind).read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("some "):
                total = dict(f.split("=", 1) for f in line.split()[1:]).get("total")
                if total is not None:
                    found[kind] = int(total)
    return found


def pressure_share(
    before: dict[str, int], after: dict[str, int], seconds: float
) -> dict[str, float]:
    """The share of `seconds` (in %) some task stalled on each resource between two readings."""
    if seconds <= 0:
        return {}
    return {
        kind: round(100 * (after[kind] - before[kind]) / 1e6 / seconds, 1)
        for kind in PRESSURES
        if kind in before and kind in after
    }
