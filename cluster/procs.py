"""Child processes the embedded stack and the tests start: redis-server, a Ray head and
more local Ray nodes.

Each runs in its own process group with its own directory and ports, and is stopped by its own
PID: never `ray stop`, which would stop every Ray on the machine.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cluster import loopback
from cluster.ray_auth import write_token

if TYPE_CHECKING:
    import psutil


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the process that started us dies (Linux), so that a
    killed launcher leaves nothing behind."""
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _child_setup(thread_outlives_child: bool = False) -> Callable[[], None] | None:
    """The kernel ties the parent-death signal to the *thread* that forked: arm it only from
    the main thread, or a child started by a short-lived thread would die with that thread;
    or from a thread that, by construction, outlives the child (the redis supervisor)."""
    main = threading.current_thread() is threading.main_thread()
    return _die_with_parent if main or thread_outlives_child else None


_GIVEN_PORTS: set[int] = set()
_GIVEN_LOCK = threading.Lock()


def free_port() -> int:
    """A TCP port free on loopback now, and never one this process handed out before: the
    kernel may give the same port to two binds in a row, and a Ray node given one port for two
    of its servers fails to start (seen: the dashboard agent and the object manager)."""
    with _GIVEN_LOCK:
        for _ in range(1000):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            if port not in _GIVEN_PORTS:
                _GIVEN_PORTS.add(port)
                return port
    raise RuntimeError("no free port this process has not handed out already")


def wait_for_port(port: int, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process {proc.args!r} exited with {proc.returncode}")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def wait_loaded(port: int, timeout: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Wait until the redis-server on `port` serves commands: one that restarts listens at once
    but answers every command `-LOADING` while it reads its append-only file back, which on a
    busy machine outlasts a client's few retries. Any other answer (PONG, or NOAUTH on a server
    with a password) means it is loaded."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process {proc.args!r} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 2) as s:
            s.settimeout(2)
            s.sendall(b"PING\r\n")
            if not s.recv(64).startswith(b"-LOADING"):
                return
        time.sleep(0.05)
    raise TimeoutError(f"redis-server on 127.0.0.1:{port} still loading after {timeout} s")


# What `ray start` (cluster/ray_start.py, line-buffered) prints once its node is registered in the
# GCS: a driver that joins before that fails after 60 s with "No node info found".
RAY_STARTED = b"Ray runtime started."
REGISTER_TIMEOUT_S = 200.0  # past cluster/ray_start.py's own wait for the GCS (180 s)


def wait_registered(log: Path, proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait until the Ray node whose `ray start` writes `log` is registered (`RAY_STARTED`)."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError), log.open("rb") as f:
            if RAY_STARTED in f.read():
                return
        if proc.poll() is not None:
            tail = log.read_bytes()[-3000:].decode(errors="replace") if log.exists() else ""
            raise RuntimeError(f"`ray start` exited with {proc.returncode}:\n{tail}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the Ray node of {log} is not registered after {timeout} s")
        time.sleep(0.1)


def stop_group(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM the child's process group, then SIGKILL whatever is left of it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(2)


@dataclass
class RedisServer:
    """A redis-server child with append-only persistence in its own directory, so that a
    restart on the same port finds its sessions and tables again. `cleanup()` deletes that
    directory (tests); the launcher's persistent data dir is only ever `stop()`ped."""

    port: int = field(default_factory=free_port)
    dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="quatro-redis-")))
    proc: subprocess.Popen[bytes] | None = None
    # More of redis-server's options, after ours (a later one wins): a cluster node's, TLS's.
    extra: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, thread_outlives_child: bool = False) -> RedisServer:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed (make deps installs it)")
        args = [exe, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.dir)]
        args += ["--appendonly", "yes", "--appendfsync", "everysec", "--save", ""]
        args += ["--protected-mode", "yes", "--loglevel", "warning", *self.extra]
        self.proc = subprocess.Popen(
            args,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_child_setup(thread_outlives_child),
        )
        wait_for_port(self.port, 10, self.proc)
        if "--tls-port" not in self.extra:  # a TLS port would not read a plain PING
            wait_loaded(self.port, 60, self.proc)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc)
            self.proc = None

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing written out, nothing said to anyone."""
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@dataclass
class RayHead:
    """`ray start --head --block` as a child, with its own temp dir and ports, reachable from
    this machine only: with `loopback_only` (the default) every Ray process it starts runs under the
    bind interposer of cluster/loopback, and no Ray Client server is started. With `auth_mode`
    "token" (the default) it makes a token of its own in its private temp dir, unless given
    `token_path`; `driver_env()` is what a driver or gateway of this head needs."""

    table_slots: int = 200
    object_store_mb: int = 256
    num_cpus: int = 2
    auth_mode: str = "token"
    token_path: Path | None = None
    loopback_only: bool = True
    port: int = field(default_factory=free_port)
    # Private (0700): the token, the interposer, and Ray's own temp dir `r/`, which Ray makes
    # world-writable. Ray puts unix sockets under it: keep the path short (sun_path: 107 bytes).
    temp_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="qray-")))
    proc: subprocess.Popen[bytes] | None = None
    preload: Path | None = None  # the built interposer
    # More of `ray start`'s flags and environment: Ray's own autoscaler runs in the head when
    # given --autoscaling-config (loadtests/autoscale.py).
    extra_args: list[str] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = REGISTER_TIMEOUT_S) -> RayHead:
        self.temp_dir.chmod(0o700)
        if self.auth_mode == "token" and self.token_path is None:
            self.token_path = write_token(self.temp_dir)
        if self.loopback_only:
            self.preload = loopback.build(self.temp_dir)
        args = [*_ray_start(), "--head", "--port", str(self.port)]
        args += ["--temp-dir", str(self.temp_dir / "r"), "--include-dashboard", "false"]
        args += _node_args(self.table_slots, self.num_cpus, self.object_store_mb, free_port())
        args += self.extra_args
        log = self.temp_dir / "head.log"
        self.proc = _start_node(args, {**self.node_env(), **self.extra_env}, log)
        wait_registered(log, self.proc, timeout)
        return self

    def driver_env(self) -> dict[str, str]:
        """What a process that joins this head as a driver needs in its environment: the auth
        mode, the token's file, and loopback kept (see cluster/connect.py)."""
        env = {"RAY_AUTH_MODE": self.auth_mode, ONE_MACHINE: "0"}
        if self.auth_mode == "token" and self.token_path is not None:
            env["RAY_AUTH_TOKEN_PATH"] = str(self.token_path)
        return env

    def node_env(self) -> dict[str, str]:
        """The whole environment of this head's nodes: a driver's (`ray_env`), and the nodes'
        own (RAY_NODE_ENV, RAY_HEALTH_CHECK)."""
        token = self.token_path if self.auth_mode == "token" else None
        env = ray_env(self.auth_mode, token, self.preload)
        for key, value in {**RAY_NODE_ENV, **RAY_HEALTH_CHECK}.items():
            env.setdefault(key, value)
        return env

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc, timeout=5)
            self.proc = None
        # Ray's own children (raylet, workers) start sessions of their own: find any left by
        # their temp dir, which is ours alone.
        kill_by_marker(str(self.temp_dir))

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _ray_start() -> list[str]:
    """`ray start` through cluster/ray_start.py: no Ray Client server, and 127.0.0.1 kept."""
    # -P: a script's own directory (cluster/, whose module names are generic) stays off sys.path.
    return [sys.executable, "-P", str(Path(__file__).with_name("ray_start.py")), "start"]


def _node_args(
    table_slots: int, num_cpus: int, object_store_mb: int, manager_port: int
) -> list[str]:
    """What a head and a worker node share: loopback, capacity, and ports of their own."""
    args = ["--block", "--disable-usage-stats", "--node-ip-address", "127.0.0.1"]
    args += ["--node-manager-port", str(manager_port)]
    args += ["--num-cpus", str(num_cpus)]
    args += ["--resources", json.dumps({"table_slot": table_slots})]
    args += ["--object-store-memory", str(object_store_mb * 1024 * 1024)]
    # Fixed defaults of these ports collide with any other Ray node on the machine.
    for flag in (
        "--dashboard-agent-listen-port",
        "--dashboard-agent-grpc-port",
        "--metrics-export-port",
        "--runtime-env-agent-port",
        "--object-manager-port",
    ):
        args += [flag, str(free_port())]
    return args


def _node_setup(nice: int) -> Callable[[], None] | None:
    """The child's setup, and the nice value its Ray processes run at (their workers start from
    it: QUATRO_RAY_NICE, see START_NICE)."""
    setup = _child_setup()
    if nice == 0:
        return setup

    def run() -> None:
        if setup is not None:
            setup()
        os.nice(nice)

    return run


def _start_node(args: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    log = open(log_path, "wb")  # noqa: SIM115 - the child owns it
    proc = subprocess.Popen(
        args,
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        preexec_fn=_node_setup(int(env.get(RAY_NICE_ENV, "0") or "0")),
    )
    log.close()
    return proc


@dataclass
class RayWorkerNode:
    """A second (third…) Ray node on this machine, joined to a head: `ray start --address
    --block` as a child. It offers its own `table_slot`s, so table actors spread over the nodes;
    its processes live under the head's temp dir, and stop with it."""

    head: RayHead
    table_slots: int = 200
    object_store_mb: int = 256
    num_cpus: int = 2
    proc: subprocess.Popen[bytes] | None = None
    manager_port: int = field(default_factory=free_port)  # its raylet's
    extra_env: dict[str, str] = field(default_factory=dict)  # its workers' (a setting of theirs)

    def start(self, timeout: float = REGISTER_TIMEOUT_S) -> RayWorkerNode:
        args = [*_ray_start(), "--address", self.head.address]
        args += _node_args(self.table_slots, self.num_cpus, self.object_store_mb, self.manager_port)
        log = self.head.temp_dir / f"node-{self.manager_port}.log"
        self.proc = _start_node(args, {**self.head.node_env(), **self.extra_env}, log)
        wait_registered(log, self.proc, timeout)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            stop_group(self.proc, timeout=5)
            self.proc = None


# Ray's own bookkeeping that every table actor pays for even when idle: its metrics, task-event
# reports and timeline (our Prometheus metrics stay), the GC manager thread, and the log
# monitor's rescans, which grow with the number of workers. Measured in docs/performance.md.
# Defaults only: the environment may override each. Never RAY_event_stats_print_interval_ms=-1:
# the GCS then spins at 100% and fills the disk with logs.
RAY_QUIET = {
    "RAY_event_stats": "0",
    "RAY_enable_metrics_collection": "0",
    "RAY_task_events_report_interval_ms": "0",
    "RAY_enable_timeline": "0",
    "RAY_start_python_gc_manager_thread": "0",
    "RAY_LOG_MONITOR_MANY_FILES_THRESHOLD": "0",
    "LOG_NAME_UPDATE_INTERVAL_S": "5",
}


# The Ray nodes' own environment, which their workers (the table actors) inherit; not a
# driver's or the gateway's. glibc's malloc keeps at most 2 arenas per process instead of 8 per
# core: 0.5-0.8 MiB less private memory per idle table actor, at no idle CPU measured
# (docs/performance.md, "Memory"; the chart's ray.nodeEnv). Defaults only: the environment may
# override each.
RAY_NODE_ENV = {"MALLOC_ARENA_MAX": "2"}

# How fast the GCS (on the head: Ray's src/ray/gcs/gcs_health_check_manager.cc) declares a Ray
# node dead, which is when Ray restarts that node's table actors elsewhere. It sends the node's
# raylet a gRPC health check `period` ms after the last one was answered or failed, gives each
# `timeout` ms, and declares the node dead after `threshold` failures in a row. A killed raylet
# refuses at once: dead 2-3 s after (Ray's defaults, 3000/10000/5: 12-15 s). A node that goes
# silent without refusing (a machine gone, its packets dropped; a raylet stopped) is declared
# dead after SILENCE_BOUND_S (5 s) to threshold × (period + timeout) (6 s; Ray's: 62-65 s), and
# one silent for less never is. A live raylet answers from gRPC's own threads: no check of a
# live node failed in the soak's node losses, nor with both cores saturated by busy loops
# (tests/cluster/test_node_death.py; docs/operations.md, "A Ray node lost"). The first check
# still waits Ray's 5 s (health_check_initial_delay_ms): a node just registered, or every node
# after a GCS restart, is given that time. Read by the GCS; the raylets only quote the
# threshold when told they were declared dead. Defaults only: the environment may override
# each. The chart's ray.healthCheckEnv must say the same (tests/helm/test_ray_env.py).
HEALTH_CHECK_PERIOD_MS = 1000
HEALTH_CHECK_TIMEOUT_MS = 1000
HEALTH_CHECK_FAILURE_THRESHOLD = 3
RAY_HEALTH_CHECK = {
    "RAY_health_check_period_ms": str(HEALTH_CHECK_PERIOD_MS),
    "RAY_health_check_timeout_ms": str(HEALTH_CHECK_TIMEOUT_MS),
    "RAY_health_check_failure_threshold": str(HEALTH_CHECK_FAILURE_THRESHOLD),
}
# The shortest silence of a node's raylet that gets it declared dead: `threshold` checks timed out
# with a period between each. A node silent for less (a stall, a pause) keeps its actors.
SILENCE_BOUND_S = (
    HEALTH_CHECK_FAILURE_THRESHOLD * HEALTH_CHECK_TIMEOUT_MS
    + (HEALTH_CHECK_FAILURE_THRESHOLD - 1) * HEALTH_CHECK_PERIOD_MS
) / 1000

# Priorities (actors/priority.py). Ray lowers a worker's main thread by `worker_niceness` once
# its own threads have started; the nice value of the Ray processes we start (QUATRO_RAY_NICE,
# 0 by default) is where every thread of a worker starts from, its imports included. A table
# actor raises itself to QUATRO_PLAY_NICE once it holds a table.
START_NICE = 15
WORKER_NICENESS_ENV = "RAY_worker_niceness"
RAY_NICE_ENV = "QUATRO_RAY_NICE"

# Ray's switch for one-machine clusters; "0" keeps a driver's 127.0.0.1 as it is.
ONE_MACHINE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def is_loopback_address(address: str | None) -> bool:
    """Whether a Ray address (host:port) names this machine's loopback."""
    host = (address or "").rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ray_env(
    auth_mode: str, token_path: Path | None = None, preload: Path | None = None
) -> dict[str, str]:
    """This process's environment for a Ray node or driver we start: its auth mode, the token
    by file (never the token itself: environments are easier to leak), the loopback
    interposer, and Ray's quiet settings."""
    env = dict(os.environ)
    env["RAY_AUTH_MODE"] = auth_mode
    env.pop("RAY_AUTH_TOKEN", None)  # an inherited token must not override ours
    env.pop("RAY_AUTH_TOKEN_PATH", None)
    if token_path is not None:
        env["RAY_AUTH_TOKEN_PATH"] = str(token_path)
    env.pop("QUATRO_BIND_PUBLIC_PORT", None)  # the gateway's own exception, not Ray's
    env.pop(ONE_MACHINE, None)  # `ray start --address` refuses it: see cluster/ray_start.py
    if preload is not None:
        loopback.preload_env(preload, env)
    env.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Workers start at this low priority (Ray's own default, said here so that it is ours), and
    # a table actor raises itself to QUATRO_PLAY_NICE once it holds a table: starting actors
    # take only the CPU that play leaves (actors/priority.py).
    env.setdefault(WORKER_NICENESS_ENV, str(START_NICE))
    for key, value in RAY_QUIET.items():
        env.setdefault(key, value)
    return env


def find_by_marker(marker: str) -> list[psutil.Process]:
    """Processes (not this one) whose command line mentions `marker`: a temp dir only we use."""
    import psutil

    me = os.getpid()
    found = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            cmd = " ".join(p.info["cmdline"] or [])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if marker in cmd and p.info["pid"] != me:
            found.append(p)
    return found


def kill_by_marker(marker: str) -> None:
    """SIGKILL every process `find_by_marker` finds."""
    import psutil

    for p in find_by_marker(marker):
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            p.kill()
