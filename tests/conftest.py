"""Shared fixtures for the tests that need the real cluster: a redis-server and a Ray head of our
own (own temp dir, own ports, stopped by PID — never `ray stop`; token authentication on, with the
head's own token, and every Ray listener on loopback, as `make run` has it), and two real uvicorn
gateways in subprocesses on free ports, all started once per session and shared."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cluster.connect import reread_ray_env, stay_on_loopback
from cluster.gateway_process import ROOT as ROOT
from cluster.gateway_process import GatewayProcess
from cluster.procs import RayHead, RedisServer, free_port, ray_env

Gateway = GatewayProcess  # the tests' name for it


@dataclass
class Stack:
    redis: RedisServer
    head: RayHead
    namespace: str
    gateways: list[Gateway] = field(default_factory=list)

    @property
    def a(self) -> Gateway:
        return self.gateways[0]

    @property
    def b(self) -> Gateway:
        return self.gateways[1]

    def gateway(self, logs: Path, **overrides: str) -> Gateway:
        """Start one more gateway of this stack, with some settings changed."""
        env = ray_env(self.head.auth_mode, self.head.token_path, self.head.preload)
        env.update(
            RAY_ADDRESS=self.head.address,
            REDIS_URL=self.redis.url,
            PORT=str(free_port()),
            RAY_NAMESPACE=self.namespace,
            QUATRO_TEST_HOOKS="1",
            QUATRO_POOL_SIZE="2",
            # A fixed pool of 2, as before the pool followed demand: on these 2 cores every
            # actor the pool starts beyond it takes CPU from the tables the suite is playing
            # (issue 21), and a clean-clone run with the demand-following pool here had six
            # timing-sensitive tests fail (a keyboard swap refused while its ack was late, new
            # tables that no longer spread to a node added for the test). tests/cluster/
            # test_pool_demand.py runs the demand-following pool on a gateway of its own.
            QUATRO_POOL_MAX="2",
            # Every test of the session opens tables on this one stack (the browser tests too):
            # tables whose test is done stop soon instead of holding their table slot for the
            # default 10–30 minutes, so the later tests still find free slots.
            QUATRO_ABANDONED_IDLE="120",
            QUATRO_OVER_IDLE="60",
            QUATRO_LOBBY_IDLE="300",
            # Quick play: public tables with seats still empty get bots after 8 s, not 60.
            QUATRO_QUICK_FILL_S="8",
            PYTHONPATH=str(ROOT),
        )
        env.update(overrides)
        return Gateway(int(env["PORT"]), env, logs / f"gateway-{env['PORT']}.log").start()

    def driver(self) -> Any:
        """This test process as a Ray driver of the same cluster (to find and kill actors)."""
        import ray

        if not ray.is_initialized():
            os.environ.pop("RAY_AUTH_TOKEN", None)
            os.environ.update(self.head.driver_env())
            stay_on_loopback(self.head.address)
            reread_ray_env()
            ray.init(address=self.head.address, namespace=self.namespace, log_to_driver=False)
        return ray


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    logs = tmp_path_factory.mktemp("stack")
    redis = RedisServer()
    # ~110 MB RSS per live table actor: 112 slots stay within a CI machine's memory, and keep
    # the suite's busiest minutes (quick play's 26 tables among others' lobbies) clear of the
    # gateways' reserve, past which a new table is refused `no_room` (tests/cluster/test_full.py).
    head = RayHead(table_slots=112, object_store_mb=128, num_cpus=2)
    st = Stack(redis=redis, head=head, namespace=f"test-{uuid.uuid4().hex[:8]}")
    try:
        redis.start()
        head.start()
        for _ in range(2):
            st.gateways.append(st.gateway(logs))
        for gw in st.gateways:
            gw.wait_ready()
        yield st
    finally:
        for gw in st.gateways:
            gw.stop()
        with contextlib.suppress(Exception):
            import ray

            if ray.is_initialized():
                ray.shutdown()
        head.cleanup()
        redis.cleanup()
