"""What the node spends while a load test runs: CPU and memory per process group, sampled with
psutil from outside the processes (nothing is added to the server for it).

Groups: `gateway` (the `python -m cluster up` process: uvicorn, the gateway and its Ray driver),
`table_actors` (Ray workers titled `ray::TableActor`, pooled ones included), `redis`
(redis-server), `ray` (everything else Ray runs: gcs_server, raylet, agents, log monitor, idle
workers) and `locust` (the load generator, kept apart from the node's figures).

CPU is reported in percent of ONE core (200 = both cores of this machine). Memory is RSS summed
per group; a table actor's private memory (USS, from /proc/<pid>/smaps) is costlier to read, so
it is sampled only every `uss_every` samples.
"""

from __future__ import annotations

import contextlib
import csv
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

GROUPS = ("gateway", "table_actors", "redis", "ray", "locust")
NODE_GROUPS = GROUPS[:4]


def classify(proc: psutil.Process, gateway_pid: int | None) -> str:
    if proc.pid == gateway_pid:
        return "gateway"
    try:
        name = proc.name()
        first = (proc.cmdline() or [""])[0]
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return "ray"
    if "redis-server" in name or "redis-server" in first:
        return "redis"
    if "TableActor" in name or "TableActor" in first:
        return "table_actors"
    return "ray"


def tree(root: int) -> list[psutil.Process]:
    try:
        p = psutil.Process(root)
        return [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def listener_pid(port: int) -> int | None:
    """The process that listens on 127.0.0.1:port (the gateway of an already running stack)."""
    with contextlib.suppress(psutil.AccessDenied):
        for c in psutil.net_connections("tcp"):
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
                return int(c.pid)
    return None


@dataclass
class Row:
    t: float
    group: str
    cpu: float  # percent of one core over the last interval
    rss_mb: float
    procs: int
    uss_mb_per_actor: float | None = None


@dataclass
class NodeSampler:
    """A background thread sampling the stack's process tree (rooted at the gateway process)
    and the load generator's tree, appending rows to `path` (CSV)."""

    path: Path
    stack_root: int | None
    locust_root: int | None = None
    interval: float = 2.0
    uss_every: int = 10
    rows: list[Row] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _last: dict[int, tuple[float, float]] = field(default_factory=dict)  # pid -> (t, cpu s)

    def start(self) -> NodeSampler:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("w", newline="") as f:
            csv.writer(f).writerow(["t", "group", "cpu_pct", "rss_mb", "procs", "uss_mb_actor"])
        self._thread = threading.Thread(target=self._run, name="node-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _procs(self) -> Iterable[tuple[str, psutil.Process]]:
        if self.stack_root is not None:
            for p in tree(self.stack_root):
                yield classify(p, self.stack_root), p
        if self.locust_root is not None:
            for p in tree(self.locust_root):
                yield "locust", p

    def _run(self) -> None:
        n = 0
        while not self._stop.wait(self.interval if n else 0.0):
            self.sample(with_uss=n % self.uss_every == 1)
            n += 1

    def sample(self, with_uss: bool = False) -> list[Row]:
        now = time.time()
        cpu = dict.fromkeys(GROUPS, 0.0)
        rss = dict.fromkeys(GROUPS, 0.0)
        count = dict.fromkeys(GROUPS, 0)
        uss: list[float] = []
        seen: dict[int, tuple[float, float]] = {}
        for group, p in self._procs():
            try:
                with p.oneshot():
                    times = p.cpu_times()
                    used = times.user + times.system
                    mem = p.memory_info().rss
                    if with_uss and group == "table_actors":
                        uss.append(p.memory_full_info().uss / 2**20)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
            seen[p.pid] = (now, used)
            prev = self._last.get(p.pid)
            if prev is not None and now > prev[0]:
                cpu[group] += 100.0 * (used - prev[1]) / (now - prev[0])
            count[group] += 1
            rss[group] += mem / 2**20
        first = not self._last
        self._last = seen
        if first:
            return []
        rows = [
            Row(
                now,
                g,
                round(cpu[g], 2),
                round(rss[g], 1),
                count[g],
                round(sum(uss) / len(uss), 2) if uss and g == "table_actors" else None,
            )
            for g in GROUPS
        ]
        self.rows.extend(rows)
        with self.path.open("a", newline="") as f:
            w = csv.writer(f)
            for r in rows:
                w.writerow([f"{r.t:.3f}", r.group, r.cpu, r.rss_mb, r.procs, r.uss_mb_per_actor])
        return rows


def machine() -> dict[str, object]:
    """What the figures were measured on."""
    freq = psutil.cpu_freq()
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "mhz": round(freq.current) if freq else None,
        "mem_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }
