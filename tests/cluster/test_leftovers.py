"""Whatever `make run` (`python -m cluster up`) starts dies with it, however it dies (issue 20,
point 3): a launcher killed hard (SIGKILL of its process group: a crash, the OOM killer) leaves
no Ray process and no redis-server behind, a next run on the same data dir stops the leftovers
of one whose watchdog died too before it starts its own head, and a plain SIGTERM or Ctrl-C
still stops everything and says so."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil

from cluster.procs import find_by_marker, kill_by_marker
from loadtests.stack import EmbeddedStack

GONE_DEADLINE_S = 10.0
STOP_DEADLINE_S = 60.0


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    left = []
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                left.append(p)
    return left


def _describe(procs: list[psutil.Process]) -> str:
    out = []
    for p in procs:
        with contextlib.suppress(psutil.Error):
            out.append(f"{p.pid} {' '.join(p.cmdline())[:100]}")
    return "; ".join(out)


def _redis_port(stack: EmbeddedStack) -> int:
    m = re.search(r"started redis-server on redis://127\.0\.0\.1:(\d+)/0", stack.tail(20000))
    assert m is not None, stack.tail()
    return int(m.group(1))


def _listener(port: int) -> psutil.Process | None:
    for c in psutil.net_connections(kind="tcp"):
        if c.status == psutil.CONN_LISTEN and c.laddr.port == port and c.pid is not None:
            with contextlib.suppress(psutil.NoSuchProcess):
                return psutil.Process(c.pid)
    return None


def _run_processes(stack: EmbeddedStack) -> list[psutil.Process]:
    """Every process of the run: the launcher's descendants (Ray's agents rename themselves and
    carry no marker), those that name the run's temp dir, and its redis-server."""
    assert stack.pid is not None
    assert stack.ray_temp is not None
    launcher = psutil.Process(stack.pid)
    procs = {p.pid: p for p in launcher.children(recursive=True)}
    for p in find_by_marker(stack.ray_temp):
        procs.setdefault(p.pid, p)
    redis = _listener(_redis_port(stack))
    assert redis is not None, stack.tail()
    assert redis.name() == "redis-server", stack.tail()
    procs.setdefault(redis.pid, redis)
    return list(procs.values())


def _make_a_table(stack: EmbeddedStack) -> None:
    with httpx.Client(base_url=stack.url, timeout=60) as c:
        token = c.post("/api/sessions", json={"name": "Host"}).json()["token"]
        r = c.post("/api/tables", json={"players": 4}, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 201, r.text


def _wait_gone(procs: list[psutil.Process], deadline_s: float) -> list[psutil.Process]:
    """Poll until none of `procs` is alive or the deadline passes; what is still alive."""
    deadline = time.monotonic() + deadline_s
    while (left := _alive(procs)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@contextlib.contextmanager
def _no_leftovers(stack: EmbeddedStack) -> Iterator[list[psutil.Process]]:
    """Whatever the test does, nothing of the run survives it: SIGKILL by PID and marker."""
    seen: list[psutil.Process] = []
    try:
        yield seen
    finally:
        for p in _alive(seen):
            with contextlib.suppress(psutil.Error):
                p.kill()
        if stack.ray_temp:
            kill_by_marker(stack.ray_temp)
        stack.stop()


def _stack(tmp_path: Path, name: str, data: Path) -> EmbeddedStack:
    return EmbeddedStack(tmp_path / f"{name}.log", table_slots=20, pool_size=2, data_dir=data)


def test_a_launcher_killed_hard_leaves_nothing_running(tmp_path: Path) -> None:
    stack = _stack(tmp_path, "run", tmp_path / "data")
    with _no_leftovers(stack) as seen:
        stack.start()
        _make_a_table(stack)
        procs = _run_processes(stack)
        seen += procs
        names = " ".join(" ".join(p.cmdline()) for p in procs)
        for name in ("gcs_server", "raylet", "TableActor", "redis-server"):
            assert name in names, names
        assert stack.proc is not None
        os.killpg(stack.proc.pid, signal.SIGKILL)  # the launcher's group: `make run` and it
        stack.proc.wait(10)
        left = _wait_gone(procs, GONE_DEADLINE_S)
        assert left == [], f"alive {GONE_DEADLINE_S} s after the kill: {_describe(left)}"
