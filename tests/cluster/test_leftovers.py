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
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest
import redis

from cluster.leftovers import RunRecord, ray_processes, stop_run
from cluster.procs import RedisServer, find_by_marker, kill_by_marker
from cluster.stack import Launched, Spec

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


def _redis_port(stack: Launched) -> int:
    m = re.search(r"started redis-server on redis://127\.0\.0\.1:(\d+)/0", stack.tail(20000))
    assert m is not None, stack.tail()
    return int(m.group(1))


def _listener(port: int) -> psutil.Process | None:
    for c in psutil.net_connections(kind="tcp"):
        if c.status == psutil.CONN_LISTEN and c.laddr.port == port and c.pid is not None:
            with contextlib.suppress(psutil.NoSuchProcess):
                return psutil.Process(c.pid)
    return None


def _run_processes(stack: Launched) -> list[psutil.Process]:
    """Every process of the run: the launcher's descendants (Ray's agents rename themselves and
    carry no marker), those that name the run's temp dir, and its redis-server."""
    assert stack.pid is not None
    assert stack.ray_temp is not None
    launcher = psutil.Process(stack.pid)
    procs = {p.pid: p for p in launcher.children(recursive=True)}
    for p in find_by_marker(stack.ray_temp):
        procs.setdefault(p.pid, p)
    server = _listener(_redis_port(stack))
    assert server is not None, stack.tail()
    assert server.name() == "redis-server", stack.tail()
    procs.setdefault(server.pid, server)
    return list(procs.values())


def _make_a_table(stack: Launched) -> None:
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
def _no_leftovers(stack: Launched) -> Iterator[list[psutil.Process]]:
    """Whatever the test does, nothing of the run survives it: SIGKILL by PID and marker."""
    seen: list[psutil.Process] = []
    try:
        yield seen
    finally:
        for p in _alive(seen):
            with contextlib.suppress(psutil.Error):
                p.kill()
        # Read from the log: a stack that never got ready has no ray_temp, and has a head.
        m = re.search(r"starting a local Ray head \(([^)]+)\)", stack.tail(20000))
        stack.stop()  # SIGTERM, then SIGKILL of its group
        if m is not None:
            kill_by_marker(m.group(1))


def _stack(tmp_path: Path, name: str, data: Path, pool_size: int = 2, nodes: int = 1) -> Launched:
    return Launched(
        Spec.under_load(table_slots=20, pool=pool_size, nodes=nodes),
        tmp_path / f"{name}.log",
        data_dir=data,
    )


# Two nodes: a worker node's `ray start` names no temp dir in its command line.
@pytest.mark.parametrize("nodes", [1, 2], ids=["one-node", "two-nodes"])
def test_a_launcher_killed_hard_leaves_nothing_running(tmp_path: Path, nodes: int) -> None:
    stack = _stack(tmp_path, "run", tmp_path / "data", nodes=nodes)
    with _no_leftovers(stack) as seen:
        stack.start()
        _make_a_table(stack)
        procs = _run_processes(stack)
        seen += procs
        names = " ".join(" ".join(p.cmdline()) for p in procs)
        for name in ("gcs_server", "raylet", "TableActor", "redis-server", "cluster.watchdog"):
            assert name in names, names
        assert len([p for p in procs if p.name() == "raylet"]) == nodes, names
        assert stack.proc is not None
        killed_at = time.monotonic()
        os.killpg(stack.proc.pid, signal.SIGKILL)  # the launcher's group: `make run` and it
        stack.proc.wait(10)
        left = _wait_gone(procs, GONE_DEADLINE_S)
        assert left == [], f"alive {GONE_DEADLINE_S} s after the kill: {_describe(left)}"
        print(f"{len(procs)} processes gone {time.monotonic() - killed_at:.1f} s after the kill")


def _sleeper(*args: str) -> subprocess.Popen[bytes]:
    """A process in a session of its own that would run for minutes, with `args` in its command
    line: a leftover that will not die by itself, or a bystander."""
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)", *args], start_new_session=True
    )


def _exited(proc: subprocess.Popen[bytes], deadline_s: float) -> int | None:
    with contextlib.suppress(subprocess.TimeoutExpired):
        return proc.wait(deadline_s)
    return None


def test_the_next_run_stops_what_a_run_killed_with_its_watchdog_left(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = _stack(tmp_path, "first", data)
    # The first run's pool, kept in the append-only file, names actors of a Ray that is gone:
    # the second run must drop those names and become ready all the same (it stayed at 503
    # "the pooled actor is gone" before the pool checked its names against Ray).
    second = _stack(tmp_path, "second", data)
    ours: list[subprocess.Popen[bytes]] = []
    with _no_leftovers(first) as seen, _no_leftovers(second):
        try:
            first.start()
            assert first.ray_temp is not None
            procs = _run_processes(first)
            seen += procs
            # The watchdog first: then nothing stops the run's processes when it dies.
            watchdogs = [p for p in procs if "cluster.watchdog" in " ".join(p.cmdline())]
            for watchdog in watchdogs:
                watchdog.kill()
            assert _wait_gone(watchdogs, GONE_DEADLINE_S) == []
            assert first.proc is not None
            os.killpg(first.proc.pid, signal.SIGKILL)
            first.proc.wait(10)
            # Here Ray's own processes happen to end ~30 s later, and the redis-server at once
            # (its parent-death signal); elsewhere they were seen to stay. Leftovers that stay
            # for sure: one naming the run's temp dir, and a redis-server on the append-only file.
            [first_redis] = [p for p in procs if p.name() == "redis-server"]
            assert _wait_gone([first_redis], GONE_DEADLINE_S) == []
            ours.append(fake_ray := _sleeper(f"{first.ray_temp}/r/session_latest"))
            stale = RedisServer(dir=data / "redis").start()
            assert stale.proc is not None
            ours.append(stale.proc)
            with redis.Redis(port=stale.port) as r:
                r.set("quatro:leftover-test", "written before the stop")
            # Not the run's, though alike: they must survive the next run's start.
            ours.append(bystander := _sleeper(f"{first.ray_temp}x/r", f"{first.ray_temp}-b"))
            (tmp_path / "other-redis").mkdir()
            other = RedisServer(dir=tmp_path / "other-redis").start()
            assert other.proc is not None
            ours.append(other.proc)

            second.start()
            log = second.tail(20000)
            m = re.search(r"stopped (\d+) processes an earlier run left in", log)
            assert m is not None, log
            assert int(m.group(1)) >= 2, log
            assert log.index(m.group(0)) < log.index("starting a local Ray head"), log
            left = _alive(procs)
            assert left == [], f"the first run's, beside the second: {_describe(left)}"
            assert _exited(fake_ray, GONE_DEADLINE_S) is not None
            assert _exited(stale.proc, GONE_DEADLINE_S) == 0  # SIGTERM: it saved and exited
            assert not Path(first.ray_temp).exists()  # and its token with it
            with redis.Redis(port=_redis_port(second)) as r:
                assert r.get("quatro:leftover-test") == b"written before the stop"
            assert bystander.poll() is None
            assert other.proc.poll() is None
            _make_a_table(second)
        finally:
            for proc in ours:
                proc.kill()
                proc.wait(10)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stopped_launcher_stops_everything_and_stands_its_watchdog_down(
    tmp_path: Path, sig: signal.Signals
) -> None:
    data = tmp_path / "data"
    stack = _stack(tmp_path, "run", data)
    with _no_leftovers(stack) as seen:
        stack.start()
        _make_a_table(stack)
        procs = _run_processes(stack)
        seen += procs
        assert (data / "run.json").exists()
        assert stack.proc is not None
        # Ctrl-C in a terminal: SIGINT to the foreground group, the launcher's (its children
        # are in sessions of their own).
        os.killpg(stack.proc.pid, sig)
        assert _exited(stack.proc, STOP_DEADLINE_S) is not None, stack.tail()
        left = _wait_gone(procs, GONE_DEADLINE_S)
        assert left == [], f"alive {GONE_DEADLINE_S} s after the stop: {_describe(left)}"
        log = stack.tail(20000)
        assert log.rstrip().endswith("Quatro stopped."), log
        assert "quatro watchdog:" not in log, log  # it stood down, it had nothing to stop
        assert not (data / "run.json").exists()


# A session leader (as a node's `ray start`) whose child, naming the run dir, starts a process
# that names nothing and outlives it: as Ray's agents are, once orphaned. Prints that one's PID.
LEADER = """
import os, subprocess, sys, time
out = subprocess.PIPE
mid = subprocess.run([sys.executable, "-c", sys.argv[1], os.environ["MARK"]], stdout=out)
print(mid.stdout.decode().strip(), flush=True)
time.sleep(300)
"""
MID = """
import subprocess, sys
sleeper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(300)"], stdout=subprocess.DEVNULL
)
print(sleeper.pid)
"""


def test_a_run_is_known_by_its_marker_and_the_sessions_of_its_nodes(tmp_path: Path) -> None:
    run_dir = tmp_path / "qray-abcdefgh"
    leader = subprocess.Popen(
        [sys.executable, "-c", LEADER, MID],
        stdout=subprocess.PIPE,
        env={**os.environ, "MARK": f"{run_dir}/r/session_latest"},  # the leader names nothing
        start_new_session=True,
    )
    try:
        assert leader.stdout is not None
        orphan = int(leader.stdout.readline())
        assert os.getsid(orphan) == leader.pid
        # Held from here: once stopped, its PID may be reaped before it could be looked up.
        orphaned = psutil.Process(orphan)
        assert orphaned.ppid() != leader.pid  # reparented: no tree leads to it
        ctime = psutil.Process(leader.pid).create_time()

        record = RunRecord(run_dir=str(run_dir), sessions={leader.pid: ctime})
        assert {leader.pid, orphan} <= {p.pid for p in ray_processes(record)}
        # The same session number with another start time: a reused PID, not the run's.
        reused = RunRecord(run_dir=str(run_dir), sessions={leader.pid: ctime + 100})
        assert not {leader.pid, orphan} & {p.pid for p in ray_processes(reused)}
        # A run dir that only starts like this one is another run's.
        other = RunRecord(run_dir=str(run_dir)[:-1], sessions={})
        assert ray_processes(other) == []

        assert stop_run(record) >= 2
        assert _exited(leader, GONE_DEADLINE_S) is not None
        assert _wait_gone([orphaned], GONE_DEADLINE_S) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader.pid, signal.SIGKILL)
        leader.wait(10)
