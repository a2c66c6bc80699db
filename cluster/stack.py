"""A whole Quatro stack on this machine, for the tests, the load tests and the lab: the one place
that turns a description of a stack (`Spec`) into running processes, in one of two ways.

- `Stack`: every part a child process of ours, from cluster/procs.py — a redis-server, a Ray
  head, more Ray nodes, gateways (`python -m gateway`) — so that a test or an injected fault can
  stop, kill or restart any one of them. Stacks may share one redis-server and one Ray token:
  cells (cluster/two_cells.py).
- `Launched`: `python -m cluster up`, the launcher `make run` runs, as one child on a free port:
  the node as its users run it, for the load tests' figures and the launcher's own tests.

Every process is stopped by its own PID (its process group, or found by its private temp dir),
never with `ray stop`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cluster.connect import connect_ray
from cluster.gateway_process import ROOT, GatewayProcess
from cluster.procs import (
    RAY_QUIET,
    RayHead,
    RayWorkerNode,
    RedisServer,
    free_port,
    kill_by_marker,
    ray_env,
)
from cluster.readiness import wait_ready
from cluster.redis_cluster import LocalRedisCluster
from cluster.settings import Settings

LAUNCH_READY_S = 120.0
LAUNCH_STOP_S = 30.0  # the launcher stops Ray and redis-server itself before it exits

# What `quiet_ray=False` sets instead of cluster.procs.RAY_QUIET: Ray 2.60's own defaults, for
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
    and the per-IP quotas a step's ~1,000 sessions in a minute or two; and every two of them
    at one table would be taken for one person (issue 47: their matches rated nobody). The
    gateway's total socket cap still holds."""
    env["QUATRO_MAX_CONNS_PER_IP"] = "20000"
    for kind in ("SESSION", "TABLE", "LOOKUP"):
        env[f"QUATRO_{kind}_RATE"] = env[f"QUATRO_{kind}_BURST"] = "100000"
    env["QUATRO_ADDRESS_TAGS"] = "0"


@dataclass(frozen=True)
class Spec:
    """What a stack is. The gateways' settings are environment variables (`QUATRO_*`, see
    cluster/settings.py); `pool`, `idle_s` and `log_level` are the ones most stacks set."""

    table_slots: int = 200  # per Ray node that carries tables
    nodes: int = 1  # Ray nodes that carry tables
    head_tables: bool = True  # False (Stack only): the head carries none, `nodes` workers do
    gateways: int = 1  # started with a Stack (a Launched stack is its one gateway)
    namespace: str = "quatro"
    object_store_mb: int | None = None  # per Ray node; None: the launcher's default (256)
    pool: int | None = None  # QUATRO_POOL_SIZE
    idle_s: float | None = None  # QUATRO_LOBBY_IDLE and QUATRO_OVER_IDLE
    log_level: str | None = None  # QUATRO_LOG_LEVEL
    test_hooks: bool = False  # QUATRO_TEST_HOOKS=1: never in production
    crowd: bool = False  # every player from 127.0.0.1: per-IP limits lifted (one_address_crowd)
    quiet_ray: bool = True  # Ray's quiet settings (cluster.procs.RAY_QUIET); False: its defaults
    settings: Mapping[str, str] = field(default_factory=dict)  # more, applied last

    @classmethod
    def under_load(cls, **changes: Any) -> Spec:
        """A node for load tests (and the launcher's tests): 400 table slots, a pool of 4,
        lobbies and finished matches idle out after 2 minutes, warnings only, every player
        from one address (`crowd`); `changes` replace any field."""
        base = cls(table_slots=400, pool=4, idle_s=120.0, log_level="warning", crowd=True)
        return replace(base, **changes)

    def gateway_env(self, env: dict[str, str]) -> dict[str, str]:
        """`env`, changed in place to what every gateway of this stack runs with."""
        env.pop("QUATRO_TEST_HOOKS", None)
        if self.test_hooks:
            env["QUATRO_TEST_HOOKS"] = "1"
        env["RAY_NAMESPACE"] = self.namespace
        env["PYTHONPATH"] = str(ROOT)
        if self.pool is not None:
            env["QUATRO_POOL_SIZE"] = str(self.pool)
        if self.idle_s is not None:
            env["QUATRO_LOBBY_IDLE"] = env["QUATRO_OVER_IDLE"] = str(self.idle_s)
        if self.log_level is not None:
            env["QUATRO_LOG_LEVEL"] = self.log_level
        if self.crowd:
            one_address_crowd(env)
        if not self.quiet_ray:
            env.update(RAY_DEFAULTS)
        env.update(self.settings)
        return env


@dataclass
class Stack:
    """A stack of child processes (see the module's docstring). `redis` may be one already
    running that other stacks share (`own_redis=False`), and `token_path` a Ray token they
    share; `redis_dir` keeps the append-only file where the caller wants it (not deleted).
    `redis_cluster`: a local Redis Cluster as the store instead (cluster/redis_cluster.py),
    started and stopped with the stack."""

    spec: Spec
    logs: Path
    redis_dir: Path | None = None
    redis: RedisServer = field(default_factory=RedisServer)
    own_redis: bool = True
    token_path: Path | None = None
    head: RayHead = field(init=False)
    nodes: list[RayWorkerNode] = field(default_factory=list)
    gateways: list[GatewayProcess] = field(default_factory=list)
    redis_cluster: LocalRedisCluster | None = None

    def __post_init__(self) -> None:
        if self.redis_dir is not None:
            self.redis = RedisServer(dir=self.redis_dir)
        self.head = RayHead(
            table_slots=self.spec.table_slots if self.spec.head_tables else 0,
            object_store_mb=self.spec.object_store_mb or 256,
            num_cpus=2,
            token_path=self.token_path,
        )
        if not self.spec.quiet_ray:
            self.head.extra_env.update(RAY_DEFAULTS)
        if self.spec.test_hooks:
            # The table actors' hook too: what a reused actor keeps (actors/kept.py).
            self.head.extra_env["QUATRO_TEST_HOOKS"] = "1"

    def start(self) -> Stack:
        self.logs.mkdir(parents=True, exist_ok=True)
        try:
            if self.redis_cluster is not None:
                self.redis_cluster.start()
            elif self.own_redis:
                if self.redis_dir is not None:
                    self.redis_dir.mkdir(parents=True, exist_ok=True)
                self.redis.start()
            self.head.start()
            for _ in range(self.spec.nodes - (1 if self.spec.head_tables else 0)):
                self.nodes.append(self.new_node())
            # The gateways join after the nodes: a driver on a machine with several Ray nodes
            # attaches to the head's raylet, so losing a worker node never takes a gateway along.
            for _ in range(self.spec.gateways):
                self.gateways.append(self.gateway())
            for gw in self.gateways:
                gw.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def a(self) -> GatewayProcess:
        return self.gateways[0]

    @property
    def b(self) -> GatewayProcess:
        return self.gateways[1]

    @property
    def url(self) -> str:
        return self.a.url

    @property
    def namespace(self) -> str:
        return self.spec.namespace

    @property
    def redis_url(self) -> str:
        """REDIS_URL of the stack's store: its redis-server's, or its Redis Cluster's."""
        return self.redis.url if self.redis_cluster is None else self.redis_cluster.url

    def new_node(self) -> RayWorkerNode:
        """One more Ray node joined to the head, offering the spec's table slots."""
        node = RayWorkerNode(
            self.head,
            table_slots=self.spec.table_slots,
            object_store_mb=self.spec.object_store_mb or 256,
            num_cpus=2,
        )
        return node.start()

    def gateway(self, logs: Path | None = None, **overrides: str) -> GatewayProcess:
        """One more gateway of this stack on a port of its own, started (not waited for) and
        not kept in `gateways`: its caller stops it. `overrides`: settings changed for it."""
        return self.gateway_of(ROOT, logs, **overrides)

    def gateway_of(self, root: Path, logs: Path | None = None, **overrides: str) -> GatewayProcess:
        """`gateway`, running the code in `root` (another release's, for an upgrade's tests:
        its table actors run that code too, Ray giving a driver's workers its paths)."""
        env = ray_env(self.head.auth_mode, self.head.token_path, self.head.preload)
        env.update(RAY_ADDRESS=self.head.address, REDIS_URL=self.redis_url, PORT=str(free_port()))
        self.spec.gateway_env(env)
        env["PYTHONPATH"] = str(root)
        env.update(overrides)
        port = int(env["PORT"])
        log = (logs or self.logs) / f"gateway-{port}.log"
        return GatewayProcess(port, env, log, root=root).start()

    def driver(self) -> Any:
        """This process as a Ray driver of the stack, joined as a gateway joins
        (cluster/connect.py): to find, kill or call table actors."""
        import ray

        if not ray.is_initialized():
            os.environ.pop("RAY_AUTH_TOKEN", None)  # the head's token, from its file, only
            token = self.head.token_path if self.head.auth_mode == "token" else None
            settings = Settings(
                ray_address=self.head.address,
                ray_namespace=self.spec.namespace,
                ray_auth_mode=self.head.auth_mode,
                ray_auth_token_path=None if token is None else str(token),
            )
            connect_ray(settings)
        return ray

    def stop(self) -> None:
        for gw in self.gateways:
            gw.stop()
        with contextlib.suppress(Exception):
            import ray

            if ray.is_initialized():
                ray.shutdown()
        for node in self.nodes:
            node.stop()
        self.head.cleanup()
        if self.redis_cluster is not None:
            self.redis_cluster.cleanup()
            return
        if not self.own_redis:
            return
        if self.redis_dir is None:
            self.redis.cleanup()
        else:
            self.redis.stop()


@dataclass
class Launched:
    """`python -m cluster up` as a child on a free port, stopped by its own PID: the launcher
    stops its Ray head and redis-server by PID in turn. `data_dir` is QUATRO_DATA_DIR (redis's
    append-only file); None: a fresh one, deleted by stop(). The spec's `nodes` are
    QUATRO_LOCAL_NODES, each with `table_slots`; its `head_tables` and `gateways` must be left
    as they are."""

    spec: Spec
    log: Path
    data_dir: Path | None = None
    ready_s: float = LAUNCH_READY_S  # from the start to its gateway's /readyz
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    ray_temp: str | None = None  # the run's private temp dir, as the launcher prints it
    ray_address: str | None = None
    ray_token_path: str | None = None  # the file holding the run's Ray token
    _own_data_dir: Path | None = None

    def __post_init__(self) -> None:
        if not self.spec.head_tables or self.spec.gateways != 1:
            raise ValueError("`python -m cluster up` runs one gateway, and its head holds tables")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        """The launcher's, which serves the gateway too."""
        return None if self.proc is None else self.proc.pid

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        for key in ("RAY_ADDRESS", "REDIS_URL"):
            env.pop(key, None)  # our own head and redis-server, never someone else's
        env.update(
            PORT=str(self.port),
            QUATRO_TABLE_SLOTS=str(self.spec.table_slots),
            QUATRO_LOCAL_NODES=str(self.spec.nodes),
        )
        if self.spec.object_store_mb is not None:
            env["QUATRO_OBJECT_STORE_MB"] = str(self.spec.object_store_mb)
        if self.data_dir is not None:
            env["QUATRO_DATA_DIR"] = str(self.data_dir)
        env.update(RAY_QUIET)  # or RAY_DEFAULTS, from the spec
        return self.spec.gateway_env(env)

    def start(self) -> Launched:
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

    def wait_ready(self, timeout: float | None = None) -> None:
        assert self.proc is not None
        wait_ready(self.url, self.proc, self.ready_s if timeout is None else timeout, self.tail)
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

    def stop(self) -> None:
        """SIGTERM the launcher (it stops its children by PID), then make sure."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(LAUNCH_STOP_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        if proc is not None and self.ray_temp:
            kill_by_marker(self.ray_temp)  # a worker the launcher could not reach
        if self._own_data_dir is not None:
            shutil.rmtree(self._own_data_dir, ignore_errors=True)
            self.data_dir = self._own_data_dir = None


@dataclass
class StoreOnly:
    """A store without Ray or gateways (the store's benchmark, loadtests/store_load.py): one
    redis-server (`primaries` 0), or a local Redis Cluster of `primaries` primaries with
    `replicas` replicas each, in `dir`, stopped and deleted by `stop()`."""

    primaries: int = 0
    replicas: int = 1
    dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="quatro-store-")))
    single: RedisServer | None = None
    cluster: LocalRedisCluster | None = None

    @property
    def url(self) -> str:
        if self.cluster is not None:
            return self.cluster.url
        assert self.single is not None
        return self.single.url

    def start(self) -> StoreOnly:
        if self.primaries:
            self.cluster = LocalRedisCluster(self.primaries, self.replicas, dir=self.dir)
            self.cluster.start()
        else:
            self.single = RedisServer(dir=self.dir).start()
        return self

    def servers(self) -> list[tuple[str, RedisServer]]:
        """Each redis-server with its role: `single`, `primary` or `replica`."""
        if self.single is not None:
            return [("single", self.single)]
        assert self.cluster is not None
        return [
            (self.cluster.role(n).replace("master", "primary").replace("slave", "replica"), n)
            for n in self.cluster.nodes
        ]

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.cleanup()
        if self.single is not None:
            self.single.cleanup()
        shutil.rmtree(self.dir, ignore_errors=True)
