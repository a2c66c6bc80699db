"""`python -m cluster up` (what `make run` runs): the whole stack on this machine.

With RAY_ADDRESS unset it starts a Ray head as a child process (its own temp dir and ports, an
explicit object store and `table_slot` capacity) that only this machine can reach: every Ray
listener on loopback (cluster/loopback), no Ray Client server, and a token made for this run. With
REDIS_URL unset, a supervised redis-server child on a free port whose append-only file lives in
QUATRO_DATA_DIR, so sessions outlive the run; with QUATRO_REDIS_CLUSTER=1, a local Redis Cluster
instead (three primaries and a replica each, cluster/redis_cluster.py). Then it serves the
gateway on PORT as a Ray driver. Ctrl-C or SIGTERM stops all of it: the children are stopped
by their own PIDs, never `ray stop`.
A launcher killed hard (SIGKILL, the OOM killer) leaves nothing running either: a watchdog of
its own stops the run's processes (cluster/watchdog.py), and should the watchdog be gone too, the
next run on the same QUATRO_DATA_DIR stops them before it starts (cluster/leftovers.py).
"""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from types import FrameType
from typing import IO

import ray

from cluster import loopback
from cluster.connect import connect_ray, wait_for_slots
from cluster.leftovers import RunRecord, clear_record, stop_leftovers, write_record
from cluster.procs import RayHead, RayWorkerNode, RedisServer, is_loopback_address
from cluster.redis_cluster import LocalRedisCluster
from cluster.redis_supervisor import RedisSupervisor
from cluster.settings import Settings, get_settings
from cluster.watchdog import Watchdog
from gateway.serve import serve

log = logging.getLogger("quatro.cluster")

NODES_WAIT_S = 60.0
# Set by the launcher for its own re-execution only: the run's private directory.
RUN_DIR_ENV = "_QUATRO_RUN_DIR"


def _stop_now(sig: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + sig)


def _under_interposer(settings: Settings) -> Path:
    """The run's private directory (0700: Ray's temp dir, its token, the interposer), with this
    process running under the loopback interposer.

    The gateway's own Ray driver listens like any Ray worker, and LD_PRELOAD only takes effect
    at exec: so the first time through, build the interposer and re-execute this launcher under
    it (same PID, same arguments). The gateway's PORT is exempt when HOST is not loopback."""
    inherited = os.environ.pop(RUN_DIR_ENV, None)
    if inherited:
        run_dir = Path(inherited)
        lib = loopback.build(run_dir)
        if str(lib) in os.environ.get("LD_PRELOAD", "").split(":"):
            return run_dir
    run_dir = Path(tempfile.mkdtemp(prefix="qray-"))
    try:
        lib = loopback.build(run_dir)
        env = dict(os.environ)
        loopback.preload_env(lib, env)
        env[RUN_DIR_ENV] = str(run_dir)
        if not is_loopback_address(f"{settings.host}:{settings.port}"):
            env["QUATRO_BIND_PUBLIC_PORT"] = str(settings.port)
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, "-m", "cluster", "up"], env)
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise


def _lock_data_dir(data_dir: Path) -> IO[bytes]:
    """Hold an exclusive lock on the data dir for the whole run: two redis-servers writing one
    append-only file would corrupt it."""
    lock = open(data_dir / "lock", "ab")  # noqa: SIM115 - held until the process exits
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.close()
        raise SystemExit(f"{data_dir} is in use by another `make run` (QUATRO_DATA_DIR)") from None
    return lock


def up() -> int:
    settings = get_settings()
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        run_dir = None if settings.ray_address else _under_interposer(settings)
    except loopback.NoCompilerError as exc:
        print(f"!! {exc}", file=sys.stderr, flush=True)
        return 1
    head: RayHead | None = None
    nodes: list[RayWorkerNode] = []
    redis: RedisServer | None = None
    redis_cluster: LocalRedisCluster | None = None
    supervisors: list[RedisSupervisor] = []
    data_lock: IO[bytes] | None = None  # referenced until the end: closing it unlocks
    watchdog: Watchdog | None = None
    record = RunRecord(
        run_dir=str(run_dir) if run_dir else None,
        redis_dir=None if settings.redis_url else str(settings.data_dir.resolve() / "redis"),
        launcher=os.getpid(),
    )

    def note_run() -> None:
        """Tell the watchdog and the data dir what this run has started so far."""
        if watchdog is not None:
            watchdog.update()
        if data_lock is not None:
            write_record(data_dir, record)

    # Until uvicorn takes over the signals, a SIGTERM must still run the cleanup below.
    previous = signal.signal(signal.SIGTERM, _stop_now)
    try:
        updates: dict[str, object] = {}
        data_dir = settings.data_dir.resolve()
        if not settings.redis_url:  # first: a data dir in use must stop us before Ray starts
            (data_dir / "redis").mkdir(parents=True, exist_ok=True)
            data_dir.chmod(0o700)  # the append-only file holds every session token
            data_lock = _lock_data_dir(data_dir)
            # The backstop: a run killed with its watchdog must not leave a second Ray head
            # beside ours, nor a redis-server on our append-only file (stopped gracefully).
            stopped = stop_leftovers(data_dir)
            if stopped:
                print(f"stopped {stopped} processes an earlier run left in {data_dir}", flush=True)
        if record.run_dir or record.redis_dir:
            watchdog = Watchdog(record).start()
            note_run()
        if run_dir is not None:
            head = RayHead(
                table_slots=settings.table_slots,
                object_store_mb=settings.object_store_mb,
                num_cpus=settings.ray_num_cpus,
                temp_dir=run_dir,
            )
            if (settings.ray_auth_mode or "token").lower() != "token":
                log.warning(
                    "RAY_AUTH_MODE=%s ignored: the local Ray head always wants a token",
                    settings.ray_auth_mode,
                )
            os.environ.pop("RAY_AUTH_TOKEN", None)  # this run's token, from its file, only
            print(f"starting a local Ray head ({head.temp_dir})", flush=True)
            head.start()
            assert head.proc is not None
            record.add_session(head.proc.pid)  # its agents carry no marker: see leftovers.py
            note_run()
            print(f"Ray head at {head.address} (namespace {settings.ray_namespace})", flush=True)
            print(f"Ray token file: {head.token_path}", flush=True)
            for _ in range(settings.local_nodes - 1):
                node = RayWorkerNode(
                    head,
                    table_slots=settings.table_slots,
                    object_store_mb=settings.object_store_mb,
                    num_cpus=settings.ray_num_cpus,
                )
                nodes.append(node)
                node.start()
                assert node.proc is not None
                record.add_session(node.proc.pid)
                note_run()
                print(f"Ray node {len(nodes) + 1} joined (raylet :{node.manager_port})", flush=True)
            updates["ray_address"] = head.address
            updates["ray_auth_mode"] = "token"
            updates["ray_auth_token_path"] = str(head.token_path)
        if not settings.redis_url and settings.redis_cluster:
            redis_cluster = LocalRedisCluster.reopen(data_dir / "redis" / "cluster")
            if not redis_cluster.ports:
                print("forming a new local Redis Cluster (3 primaries, 3 replicas)", flush=True)
            redis_cluster.start()
            supervisors = [RedisSupervisor(node).start() for node in redis_cluster.nodes]
            print(f"Redis Cluster on {redis_cluster.url}, data in {data_dir}", flush=True)
            updates["redis_url"] = redis_cluster.url
        elif not settings.redis_url:
            redis = RedisServer(dir=data_dir / "redis").start()
            supervisors = [RedisSupervisor(redis).start()]
            print(f"started redis-server on {redis.url}, data in {data_dir}", flush=True)
            updates["redis_url"] = redis.url
        settings = settings.model_copy(update=updates)
        if settings.test_hooks:
            print("!! QUATRO_TEST_HOOKS=1: test hooks are ON — never in production !!", flush=True)
        print(f"starting the gateway on port {settings.port}…", flush=True)
        # Before joining Ray as a driver, as serve() does: Ray's own SIGTERM handler is what
        # uvicorn hands the signal back to when it stops, and it lets the cleanup below run.
        signal.signal(signal.SIGTERM, previous)
        if nodes:
            connect_ray(settings)  # serve() would join later; the nodes must be known first
            wait_for_slots(settings.table_slots * settings.local_nodes, NODES_WAIT_S)
        serve(settings)
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if ray.is_initialized():
            ray.shutdown()
        for node in nodes:
            node.stop()
        if head is not None:
            head.cleanup()
        elif run_dir is not None:
            shutil.rmtree(run_dir, ignore_errors=True)
        for supervisor in supervisors:
            supervisor.stop()  # first: it must not restart the redis-server we stop
        if redis is not None:
            redis.stop()  # never cleanup(): the data dir outlives the run
        if redis_cluster is not None:
            redis_cluster.stop()
        if watchdog is not None:
            watchdog.stand_down()  # all stopped: it must not touch what a next run starts
        if data_lock is not None:
            clear_record(data_dir)
            data_lock.close()
        print("Quatro stopped.", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cluster")
    parser.add_argument("command", choices=["up"], help="up: Ray, Redis and the gateway")
    args = parser.parse_args(argv)
    if args.command == "up":
        return up()
    return 2


if __name__ == "__main__":
    sys.exit(main())
