"""Finding and stopping what a `make run` started, once its launcher is gone: used by the run's
watchdog (cluster/watchdog.py) the moment the launcher dies, and by the next run on the same
data dir before it starts anything (a backstop, should the watchdog have died too).

A run is known by a `RunRecord`. Which processes are the run's is decided from what is unique to
it, never from a name alone (other Rays, other redis-servers run on the machine):

- Ray's processes name the run's private temp dir (`qray-XXXXXXXX`, made by mkdtemp) in their
  command line, or in their LD_PRELOAD (the run's loopback interposer lives there). Only
  LD_PRELOAD of the environment: a driver someone started with the run's token file in its
  environment is not the run's to stop. Some
  do neither: Ray's agents rename themselves (`ray::DashboardAgent`) and blank their
  environment. But they stay in the session of the `ray start` that started their node (Ray's
  workers change process group, not session), so the record keeps each node's session id and
  every member of it is the run's, as long as that session is provably ours (see `_our_sessions`).
- Its redis-server runs in the data dir (`--dir`: it is its working directory; it renames
  itself too). The launcher holds the data dir's lock for the whole run, so a redis-server
  working there is this data dir's, from this run or an earlier one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

log = logging.getLogger("quatro.cluster.leftovers")

RECORD_NAME = "run.json"
# redis-server on SIGTERM writes out its append-only file and exits; SIGKILL only after this.
REDIS_GRACE_S = 10.0
# Ray's processes get SIGKILL (they keep nothing: tables live on in Redis, as RayHead.stop has
# it), in passes until none is found: a raylet may start a worker between a scan and its kill.
RAY_KILL_S = 5.0


@dataclass
class RunRecord:
    run_dir: str | None = None  # the run's private temp dir (Ray's lives under it)
    redis_dir: str | None = None  # where its redis-server works (QUATRO_DATA_DIR/redis)
    # Session id (the PID of a node's `ray start`, its leader) -> that process's start time.
    sessions: dict[int, float] = field(default_factory=dict)
    launcher: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RunRecord:
        raw = json.loads(text)
        return cls(
            run_dir=raw.get("run_dir"),
            redis_dir=raw.get("redis_dir"),
            sessions={int(k): float(v) for k, v in (raw.get("sessions") or {}).items()},
            launcher=int(raw.get("launcher") or 0),
        )

    def add_session(self, leader: int) -> None:
        with contextlib.suppress(psutil.Error):
            self.sessions[leader] = psutil.Process(leader).create_time()


def _marker(run_dir: str) -> re.Pattern[str]:
    """The run dir as a whole path, so that `/tmp/qray-ab` never matches `/tmp/qray-abc`."""
    return re.compile(r"(?<![\w./-])" + re.escape(run_dir.rstrip("/")) + r"(?![\w.-])")


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def ray_processes(record: RunRecord) -> list[psutil.Process]:
    """The run's Ray processes still alive (never this process)."""
    if not record.run_dir:
        return []
    marker = _marker(record.run_dir)
    me = os.getpid()
    marked: dict[int, psutil.Process] = {}
    members: dict[int, list[psutil.Process]] = {}
    for p in psutil.process_iter(["pid", "cmdline", "environ"]):
        pid = p.info["pid"]
        if pid == me:
            continue
        text = "\0".join(p.info["cmdline"] or [])
        text += "\0" + (p.info["environ"] or {}).get("LD_PRELOAD", "")
        if marker.search(text):
            marked[pid] = p
        sid = _sid(pid)
        if sid is not None and sid in record.sessions:
            members.setdefault(sid, []).append(p)
    found = dict(marked)
    for sid in _our_sessions(record, marked, members):
        for p in members[sid]:
            found.setdefault(p.pid, p)
    for p in list(found.values()):  # e.g. an agent whose node's session is not on record yet
        with contextlib.suppress(psutil.Error):
            for child in p.children(recursive=True):
                if child.pid != me:
                    found.setdefault(child.pid, child)
    # A launcher still alive is marked too (it runs under the interposer), and its redis-server
    # is its child: that one is stopped gracefully, by `stop_run`, never SIGKILLed with Ray's.
    return [p for p in found.values() if _name(p) != "redis-server"]


def _name(p: psutil.Process) -> str:
    try:
        return str(p.name())
    except psutil.Error:
        return ""


def _our_sessions(
    record: RunRecord,
    marked: dict[int, psutil.Process],
    members: dict[int, list[psutil.Process]],
) -> list[int]:
    """The recorded sessions that are still this run's. A session id is its leader's PID, and
    the kernel never hands out a PID still in use as a session id; but once all of a session's
    processes are gone, a new session may get that number. So a session counts only while its
    leader is alive with the start time on record, or while one of its members names the run
    dir."""
    ours = []
    for sid, procs in members.items():
        if any(p.pid in marked for p in procs):
            ours.append(sid)
            continue
        with contextlib.suppress(psutil.Error):
            if abs(psutil.Process(sid).create_time() - record.sessions[sid]) < 0.01:
                ours.append(sid)
    return ours


def redis_processes(
    redis_dir: str | None, started_before: float | None = None
) -> list[psutil.Process]:
    """The redis-servers working in `redis_dir` or under it (a local cluster's nodes, each in
    a directory of its own); with `started_before` (a time.time()), only those started before
    then (a watchdog must not touch the redis-server of a next run)."""
    if not redis_dir:
        return []
    want = os.path.realpath(redis_dir)
    found = []
    for p in psutil.process_iter(["name", "create_time"]):
        if p.info["name"] != "redis-server":
            continue
        if started_before is not None and (p.info["create_time"] or 0) > started_before:
            continue
        with contextlib.suppress(psutil.Error):
            cwd = os.path.realpath(p.cwd())
            if cwd == want or cwd.startswith(want + os.sep):
                found.append(p)
    return found


def _living(procs: list[psutil.Process]) -> list[psutil.Process]:
    """Those of `procs` still running. A zombie is not: it has exited, and its parent (not
    us: psutil.wait_procs would wait for it to the timeout) has yet to reap it."""
    left = []
    for p in procs:
        with contextlib.suppress(psutil.Error):
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                left.append(p)
    return left


def _wait_gone(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until none of `procs` runs, up to `timeout` s; those still running."""
    deadline = time.monotonic() + timeout
    while (left := _living(procs)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _kill_ray(record: RunRecord) -> int:
    killed: set[int] = set()
    deadline = time.monotonic() + RAY_KILL_S
    while (procs := _living(ray_processes(record))) and time.monotonic() < deadline:
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.kill()
                killed.add(p.pid)
        _wait_gone(procs, 1)
    return len(killed)


def _stop_redis(procs: list[psutil.Process]) -> int:
    """SIGTERM first: redis-server then writes out its append-only file; SIGKILL only if it has
    not exited after REDIS_GRACE_S."""
    for p in procs:
        with contextlib.suppress(psutil.Error):
            p.send_signal(signal.SIGTERM)
    alive = _wait_gone(procs, REDIS_GRACE_S)
    for p in alive:
        log.error(
            "redis-server (pid %d) still runs %.0f s after SIGTERM: SIGKILL", p.pid, REDIS_GRACE_S
        )
        with contextlib.suppress(psutil.Error):
            p.kill()
    _wait_gone(alive, 2)
    return len(procs)


def stop_run(record: RunRecord, redis_started_before: float | None = None) -> int:
    """Stop every process of the run that is still alive and delete its private temp dir (it
    holds the run's Ray token); how many processes were stopped."""
    stopped = _kill_ray(record)
    stopped += _stop_redis(_living(redis_processes(record.redis_dir, redis_started_before)))
    if record.run_dir:
        shutil.rmtree(record.run_dir, ignore_errors=True)
    return stopped


def write_record(data_dir: Path, record: RunRecord) -> None:
    """Atomically: a launcher killed while writing must not leave half a record."""
    partial = data_dir / f".{RECORD_NAME}.{os.getpid()}"
    partial.write_text(record.to_json())
    partial.replace(data_dir / RECORD_NAME)


def read_record(data_dir: Path) -> RunRecord | None:
    try:
        return RunRecord.from_json((data_dir / RECORD_NAME).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        log.warning("ignoring an unreadable %s: %s", data_dir / RECORD_NAME, exc)
        return None


def clear_record(data_dir: Path) -> None:
    (data_dir / RECORD_NAME).unlink(missing_ok=True)


def stop_leftovers(data_dir: Path) -> int:
    """Before a run starts on `data_dir` (whose lock it holds): stop what an earlier run on it
    left running, on record or working in its redis dir; how many processes were stopped."""
    record = read_record(data_dir) or RunRecord()
    record.redis_dir = str(data_dir / "redis")  # whatever the record says: we hold its lock
    stopped = stop_run(record)
    clear_record(data_dir)
    return stopped
