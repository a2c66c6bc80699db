"""The embedded stack (`python -m cluster up`: a Ray head, redis-server and the gateway) started
for a load test on a free port, and stopped by its own PID: its launcher stops its Ray head and
redis-server by PID in turn (never `ray stop`)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cluster.procs import RAY_QUIET, free_port, kill_by_marker
from cluster.readiness import wait_ready

ROOT = Path(__file__).resolve().parents[1]
READY_TIMEOUT_S = 120.0

# What `--quiet-ray 0` sets instead of cluster.procs.RAY_QUIET: Ray 2.60's own defaults, for
# before/after comparisons.
RAY_DEFAULTS = {
    "RAY_event_stats": "1",
    "RAY_enable_metrics_collection": "1",
    "RAY_task_events_report_interval_ms": "1000",
    "RAY_enable_timeline": "1",
    "RAY_start_python_gc_manager_thread": "1",
    "RAY_LOG_MONITOR_MANY_FILES_THRESHOLD": "1000",
    "LOG_NAME_UPDATE_INTERVAL_S": "0.5",
}


def one_address_crowd(env: dict[str, str]) -> None:
    """Lift the per-IP limits out of a load test's way: every simulated player comes from
    127.0.0.1, so the per-IP socket cap (1,000) would stop a capacity step of 400 tables of 6,
    and the per-IP quotas a step's ~1,000 sessions in a minute or two. The gateway's total
    socket cap still holds."""
    env["QUATRO_MAX_CONNS_PER_IP"] = "20000"
    for kind in ("SESSION", "TABLE", "LOOKUP"):
        env[f"QUATRO_{kind}_RATE"] = env[f"QUATRO_{kind}_BURST"] = "100000"


@dataclass
class EmbeddedStack:
    log: Path
    table_slots: int = 400  # per Ray node
    pool_size: int = 4
    nodes: int = 1  # local Ray nodes, the head included
    test_hooks: bool = False
    quiet_ray: bool = True
    lobby_idle_s: float = 120.0
    extra_env: dict[str, str] = field(default_factory=dict)
    # QUATRO_DATA_DIR (redis's append-only file); None: a fresh one, deleted by stop().
    data_dir: Path | None = None
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    ray_temp: str | None = None
    ray_address: str | None = None
    ray_token_path: str | None = None  # the file holding the run's Ray token
    _own_data_dir: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        for key in ("RAY_ADDRESS", "REDIS_URL"):
            env.pop(key, None)  # our own head and redis-server, never someone else's
        env.update(
            PORT=str(self.port),
            QUATRO_TABLE_SLOTS=str(self.table_slots),
            QUATRO_POOL_SIZE=str(self.pool_size),
            QUATRO_LOCAL_NODES=str(self.nodes),
            QUATRO_LOBBY_IDLE=str(self.lobby_idle_s),
            QUATRO_OVER_IDLE=str(self.lobby_idle_s),
            QUATRO_LOG_LEVEL="warning",
            PYTHONPATH=str(ROOT),
        )
        one_address_crowd(env)
        if self.data_dir is not None:
            env["QUATRO_DATA_DIR"] = str(self.data_dir)
        if self.test_hooks:
            env["QUATRO_TEST_HOOKS"] = "1"
        else:
            env.pop("QUATRO_TEST_HOOKS", None)
        env.update(RAY_QUIET if self.quiet_ray else RAY_DEFAULTS)
        env.update(self.extra_env)
        return env

    def start(self) -> EmbeddedStack:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        if self.data_dir is None:
            self.data_dir = self._own_data_dir = Path(tempfile.mkdtemp(prefix="quatro-data-"))
        out = self.log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cluster", "up"],
            cwd=ROOT,
            env=self.env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        assert self.proc is not None
        wait_ready(self.url, self.proc, timeout, self.tail)
        self._find_ray()

    def _find_ray(self) -> None:
        log = self.tail(20000)
        m = re.search(r"starting a local Ray head \(([^)]+)\)", log)
        self.ray_temp = m.group(1) if m else None
        m = re.search(r"Ray head at (\S+) ", log)
        self.ray_address = m.group(1) if m else None
        m = re.search(r"Ray token file: (\S+)", log)
        self.ray_token_path = m.group(1) if m else None

    def tail(self, chars: int = 3000) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-chars:]
        return ""

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def stop(self) -> None:
        """SIGTERM the launcher (it stops its children by PID), then make sure."""
        proc, self.proc = self.proc, None
        if proc is not None:
            self._stop(proc)
        if self._own_data_dir is not None:
            shutil.rmtree(self._own_data_dir, ignore_errors=True)
            self.data_dir = self._own_data_dir = None

    def _stop(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        if self.ray_temp:
            kill_by_marker(self.ray_temp)  # a worker the launcher could not reach
