"""The soak's stack, built from the pieces of cluster/procs.py so that each fault has a handle:
a redis-server (append-only file in the run's folder), a Ray head that carries no table (the
control plane: its GCS must survive every fault, and the gateways' drivers attach to it), two
Ray worker nodes that carry the tables, and two gateways (`python -m gateway`) on ports of their
own, each restartable on the same port. The soak process itself joins Ray as a driver, only to
find table actors' processes. Every process is stopped by its own PID (process group), never
with `ray stop`."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cluster.connect import reread_ray_env, stay_on_loopback
from cluster.gateway_process import ROOT as ROOT
from cluster.gateway_process import GatewayProcess
from cluster.procs import RayHead, RayWorkerNode, RedisServer, free_port, ray_env
from loadtests.stack import one_address_crowd

NAMESPACE = "quatro-soak"


@dataclass
class SoakStack:
    out: Path
    table_slots: int  # per worker node: each must be able to carry every table alone
    pool_size: int = 2
    test_hooks: bool = False
    lobby_idle_s: float = 60.0
    redis: RedisServer | None = None
    head: RayHead | None = None
    nodes: list[RayWorkerNode] = field(default_factory=list)
    gateways: list[GatewayProcess] = field(default_factory=list)

    def start(self) -> SoakStack:
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "redis").mkdir(exist_ok=True)
        self.redis = RedisServer(dir=self.out / "redis").start()
        # No table slot on the head: every table lives on a worker node, so that the loss of
        # the node carrying the most tables can be injected again and again (its tables move
        # to the other, and a new node takes its place).
        self.head = RayHead(table_slots=0, object_store_mb=200, num_cpus=2)
        self.head.start()
        for _ in range(2):
            self.nodes.append(self.new_node())
        # The gateways join after the nodes: a driver on a machine with several Ray nodes
        # attaches to the head's raylet, so losing a worker node never takes a gateway along.
        for _ in range(2):
            port = free_port()
            env = self.gateway_env(port)
            self.gateways.append(GatewayProcess(port, env, self.out / f"gateway-{port}.log"))
        for gw in self.gateways:
            gw.start()
        for gw in self.gateways:
            gw.wait_ready()
        return self

    def new_node(self) -> RayWorkerNode:
        assert self.head is not None
        return RayWorkerNode(
            self.head, table_slots=self.table_slots, object_store_mb=200, num_cpus=2
        ).start()

    def gateway_env(self, port: int) -> dict[str, str]:
        assert self.head is not None
        assert self.redis is not None
        env = ray_env(self.head.auth_mode, self.head.token_path, self.head.preload)
        for key in ("RAY_ADDRESS", "REDIS_URL", "QUATRO_TEST_HOOKS"):
            env.pop(key, None)
        env.update(
            RAY_ADDRESS=self.head.address,
            REDIS_URL=self.redis.url,
            PORT=str(port),
            RAY_NAMESPACE=NAMESPACE,
            QUATRO_POOL_SIZE=str(self.pool_size),
            QUATRO_LOBBY_IDLE=str(self.lobby_idle_s),
            QUATRO_OVER_IDLE=str(self.lobby_idle_s),
            QUATRO_LOG_LEVEL="warning",
            PYTHONPATH=str(ROOT),
        )
        one_address_crowd(env)
        if self.test_hooks:
            env["QUATRO_TEST_HOOKS"] = "1"
        return env

    def driver(self) -> Any:
        """This process as a Ray driver of the stack (to find table actors' processes)."""
        import ray

        assert self.head is not None
        if not ray.is_initialized():
            os.environ.pop("RAY_AUTH_TOKEN", None)
            os.environ.update(self.head.driver_env())
            stay_on_loopback(self.head.address)
            reread_ray_env()
            ray.init(address=self.head.address, namespace=NAMESPACE, log_to_driver=False)
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
        if self.head is not None:
            self.head.cleanup()
        if self.redis is not None:
            self.redis.stop()
