"""A Redis Cluster on this machine, from Debian's redis-server: `QUATRO_REDIS_CLUSTER=1 make run`
(three primaries, a replica each), the tests' clusters and the store benchmark's.

Every node is a `RedisServer` child (cluster/procs.py) in a directory of its own under `dir`,
with `cluster-enabled yes` and its append-only file; the cluster is formed by talking to the
nodes (MEET, ADDSLOTSRANGE, REPLICATE: what `redis-cli --cluster create` does, without its
prompts and its one-second polls), and it is ready when every node says `cluster_state:ok` and
every replica's link to its primary is up. A node killed is failed over by its replica after
`node_timeout_ms`; started again on its port and directory, it comes back as a replica.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis

from cluster.procs import RedisServer, free_port
from cluster.redis_client import url_of
from cluster.tls_files import TlsFiles

SLOTS = 16384
FORM_S = 30.0
PORTS_FILE = "ports.json"


@dataclass
class LocalRedisCluster:
    """`primaries` nodes with the slots, `replicas` replicas of each."""

    primaries: int = 3
    replicas: int = 1
    node_timeout_ms: int = 2000
    dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="quatro-rcluster-")))
    # (port, cluster bus port) of each node (a restart of `make run`'s cluster keeps its own:
    # its nodes know each other by them); free ones when empty. The bus port is given: the
    # default, port + 10000, may be taken or past 65535.
    ports: list[tuple[int, int]] = field(default_factory=list)
    nodes: list[RedisServer] = field(default_factory=list)
    tls: TlsFiles | None = None  # TLS only: clients, the cluster bus and replication

    @property
    def size(self) -> int:
        return self.primaries * (1 + self.replicas)

    @property
    def url(self) -> str:
        """REDIS_URL of this cluster: every node a seed (with TLS, REDIS_CA_FILE is `tls.ca`)."""
        nodes = [("127.0.0.1", n.port) for n in self.nodes]
        return url_of(nodes, tls=self.tls is not None, cluster=True)

    def start(self, timeout_s: float = FORM_S) -> LocalRedisCluster:
        """Start the nodes, and form the cluster unless they already are one (a restart)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        ports = self.ports or [(free_port(), free_port()) for _ in range(self.size)]
        self.nodes = [
            RedisServer(
                port=port,
                dir=self.dir / f"node-{i}",
                extra=[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-port",
                    str(bus),
                    "--cluster-node-timeout",
                    str(self.node_timeout_ms),
                    # A replica with a stale link may still be promoted: a lone survivor serves.
                    "--cluster-replica-validity-factor",
                    "0",
                    # A replica's first sync at once (the default waits 5 s for more replicas).
                    "--repl-diskless-sync-delay",
                    "0",
                    *(self.tls.server_args(port) if self.tls else []),
                ],
            )
            for i, (port, bus) in enumerate(ports)
        ]
        self.ports = list(ports)
        try:
            for node in self.nodes:
                node.dir.mkdir(parents=True, exist_ok=True)
                node.start()
            (self.dir / PORTS_FILE).write_text(json.dumps(self.ports))
            if not self._formed():
                self._form()
            self.wait_ok(timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    @classmethod
    def reopen(cls, dir: Path, primaries: int = 3, replicas: int = 1) -> LocalRedisCluster:
        """The cluster kept in `dir` by an earlier run, on its ports if they are all free;
        else a new one (its data is lost: said by the caller)."""
        ports: list[tuple[int, int]] = []
        with contextlib.suppress(OSError, ValueError, TypeError):
            ports = [(int(p), int(b)) for p, b in json.loads((dir / PORTS_FILE).read_text())]
        cluster = cls(primaries=primaries, replicas=replicas, dir=dir)
        if len(ports) == cluster.size and all(_port_free(p) for pair in ports for p in pair):
            cluster.ports = ports
        elif dir.exists():
            shutil.rmtree(dir)
        return cluster

    def client(self, node: RedisServer) -> redis.Redis:
        """A client of one node (not of the cluster: it follows no redirection)."""
        tls: dict[str, object] = {}
        if self.tls is not None:
            tls = {
                "ssl": True,
                "ssl_ca_certs": str(self.tls.ca),
                "ssl_certfile": str(self.tls.client_cert),
                "ssl_keyfile": str(self.tls.client_key),
            }
        return redis.Redis(port=node.port, decode_responses=True, socket_timeout=5, **tls)  # type: ignore[arg-type]

    def _formed(self) -> bool:
        with self.client(self.nodes[0]) as c:
            return int(c.execute_command("CLUSTER INFO").get("cluster_slots_assigned", 0)) == SLOTS

    def _form(self) -> None:
        ids = []
        for node in self.nodes:
            with self.client(node) as c:
                ids.append(str(c.execute_command("CLUSTER MYID")))
        with self.client(self.nodes[0]) as first:
            for port, bus in self.ports[1:]:
                first.execute_command("CLUSTER MEET", "127.0.0.1", port, bus)
        per = SLOTS // self.primaries
        for i in range(self.primaries):
            lo, hi = i * per, (SLOTS - 1 if i == self.primaries - 1 else (i + 1) * per - 1)
            with self.client(self.nodes[i]) as c:
                c.execute_command("CLUSTER ADDSLOTSRANGE", lo, hi)
        self._until(lambda: all(self._knows(n, len(ids)) for n in self.nodes), "the nodes meet")
        for r in range(self.replicas):
            for i in range(self.primaries):
                replica = self.nodes[self.primaries * (1 + r) + i]
                with self.client(replica) as c:
                    c.execute_command("CLUSTER REPLICATE", ids[i])

    def _knows(self, node: RedisServer, count: int) -> bool:
        with self.client(node) as c:
            return len(c.execute_command("CLUSTER NODES")) >= count  # parsed: {address: node}

    def wait_ok(self, timeout_s: float = FORM_S) -> None:
        """Until every running node says the cluster is ok and every replica is in sync."""
        self._until(self._ok, "cluster_state:ok on every node", timeout_s)

    def _ok(self) -> bool:
        for node in self.nodes:
            if node.proc is None:
                continue
            try:
                with self.client(node) as c:
                    if c.execute_command("CLUSTER INFO").get("cluster_state") != "ok":
                        return False
                    info = c.info("replication")
            except redis.RedisError:
                return False
            if info.get("role") == "slave" and info.get("master_link_status") != "up":
                return False
        return True

    def _until(self, ok: Callable[[], bool], what: str, timeout_s: float = FORM_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not ok():
            if time.monotonic() > deadline:
                raise TimeoutError(f"local Redis Cluster: not {what} after {timeout_s} s")
            time.sleep(0.05)

    def role(self, node: RedisServer) -> str:
        with self.client(node) as c:
            return str(c.info("replication").get("role"))

    def primary_of(self, key: str) -> RedisServer:
        """The node that serves `key`'s slot now."""
        for node in self.nodes:
            if node.proc is None:
                continue
            with contextlib.suppress(redis.RedisError), self.client(node) as c:
                slot = int(c.execute_command("CLUSTER KEYSLOT", key))
                for lo, hi, primary, *_ in c.execute_command("CLUSTER SLOTS"):
                    if int(lo) <= slot <= int(hi):
                        port = int(primary[1])
                        return next(n for n in self.nodes if n.port == port)
        raise RuntimeError(f"no node serves {key}")

    def kill(self, node: RedisServer) -> None:
        """SIGKILL: the node dies with whatever it had not sent its replica."""
        node.kill()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def _port_free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
