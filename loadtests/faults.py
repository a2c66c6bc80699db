"""The soak's faults, one at a time: each injects itself into the stack, waits (bounded) until
the players are back to normal, and says when it started, when it was over and how long the
recovery took, as seen by the players themselves (their tables' events, their welcomes).

    actor_kill     SIGKILL of one table actor's process (Ray restarts it from its snapshot)
    gateway_kill   SIGKILL of the gateway carrying the most players (they come back through the
                   other; the killed one is then started again on its port)
    node_loss      SIGKILL of the Ray worker node's processes (its tables come back on the other
                   worker node; a new worker node is then started); `dead_s`: when the GCS
                   declared the node dead, `answering_s`: when the last of its table actors
                   answered again (restored elsewhere); `per_table`: each one's, and its players'
    node_freeze    (only with --faults) SIGSTOP of the same processes, as a machine that vanished:
                   no socket is reset, only timeouts tell (Ray's health checks, the gateways'
                   links); they are SIGKILLed once the tables moved on, then a new node started
    redis_restart  redis-server stopped and started again on its port, from its append-only file
    redis_primary_kill  (a Redis Cluster as the store) SIGKILL of the primary that serves a
                   table in play: its replica is promoted, the table's saves wait and resume;
                   the killed node then comes back as a replica; each phase's time
                   (loadtests/failover_watch.py: failed, promoted, written, saved, serves;
                   and the table's own pace, moved)
    actor_stop     SIGSTOP of one table actor for 20 s, then SIGCONT
    burst          a burst of table creations, half through each gateway, all at once
    storm          every player of one gateway drops and reconnects within 2 s
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psutil

from actors import keys
from cluster.redis_client import SyncRedis, sync_redis
from cluster.stack import Stack

if TYPE_CHECKING:
    from actors.protocol import Status
from loadtests.failover_watch import POLL_S as FAILOVER_POLL_S
from loadtests.failover_watch import Failover
from loadtests.fault_watch import ANSWER_WAIT_S, Answers, Moved, per_table, until
from loadtests.watch import MOVING, connected, read_tables, welcomes_since

FAULTS = (
    "actor_kill",
    "gateway_kill",
    "node_loss",
    "node_freeze",
    "redis_restart",
    "redis_primary_kill",
    "actor_stop",
    "burst",
    "storm",
)
CLUSTER_ONLY = ("redis_primary_kill",)  # a store that is a Redis Cluster's faults
SINGLE_ONLY = ("redis_restart",)  # a store that is one redis-server's
OPT_IN = ("node_freeze",)  # only when asked for (--faults): the default cycle's is node_loss
RECOVER_LIMIT_S = 120.0  # a fault not recovered from within this is reported as not recovered

# A creation may wait for a ready actor (QUATRO_POOL_WAIT + QUATRO_ACTOR_TIMEOUT, 45 s) and a
# call to a table through its restart (QUATRO_TABLE_WAIT, 40 s): the soak's own requests wait
# longer than the server does, so that only the server's answer can fail them.
REST_TIMEOUT_S = 60.0


@dataclass
class Fault:
    kind: str
    start: float = 0.0  # time.time() when injected
    end: float = 0.0  # when the stack and the players were back (or the limit was reached)
    recover_s: float | None = None  # None: not recovered within RECOVER_LIMIT_S
    target: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    def row(self, t0: float) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "at_s": round(self.start - t0, 1),
            "recover_s": None if self.recover_s is None else round(self.recover_s, 2),
            "target": self.target,
            **self.detail,
        }


class Injector:
    """Knows the stack and the players' folder; `run(kind)` injects one fault."""

    def __init__(self, stack: Stack, soak_dir: Path, burst: int, stop_s: float) -> None:
        self.stack = stack
        self.dir = soak_dir
        self.burst_size = burst
        self.stop_s = stop_s
        self.rng = random.Random(20)
        self.storms = 0
        self.burst_codes: list[str] = []

    # -- helpers ------------------------------------------------------------------------------
    def redis(self) -> SyncRedis:
        return sync_redis(self.stack.redis_url)

    def actor(self, code: str) -> Any:
        ray = self.stack.driver()
        record = json.loads(self.redis().get(keys.table(code)) or "{}")
        return ray.get_actor(record["actor"])

    def ping(self, code: str) -> Status:
        from actors.protocol import Probe
        from actors.ray_calls import answered, send

        ray = self.stack.driver()
        return answered(Probe(), ray.get(send(self.actor(code), Probe()), timeout=30))

    def live_table(self) -> str:
        """A table in play with players connected, chosen at random (seeded)."""
        tables = read_tables(self.dir)
        codes = sorted(c for c, t in tables.items() if t["connected"] and t["phase"] in MOVING)
        if not codes:
            raise RuntimeError("no table in play to inject a fault into")
        return self.rng.choice(codes)

    def busiest_gateway(self) -> int:
        tables = read_tables(self.dir)
        return max(range(2), key=lambda i: connected(tables, str(self.stack.gateways[i].port)))

    def moved_on(self, codes: list[str], since_ms: int) -> Callable[[], bool]:
        """Whether every table of `codes` shows an event that happened after `since_ms`."""

        def check() -> bool:
            tables = read_tables(self.dir)
            return all(int(tables.get(c, {}).get("last_at", 0)) > since_ms for c in codes)

        return check

    def run(self, kind: str) -> Fault:
        fault = Fault(kind, start=time.time())
        getattr(self, kind)(fault)
        if not fault.end:
            fault.end = time.time()
        return fault

    def _recovered(self, fault: Fault, ok: bool) -> None:
        fault.end = time.time()
        fault.recover_s = fault.end - fault.start if ok else None

    # -- the faults ---------------------------------------------------------------------------
    def actor_kill(self, fault: Fault) -> None:
        code = self.live_table()
        pid = self.ping(code).pid
        fault.target = code
        fault.start = time.time()
        os.kill(pid, signal.SIGKILL)
        ok = until(self.moved_on([code], int(fault.start * 1000)), RECOVER_LIMIT_S)
        self._recovered(fault, ok)

    def actor_stop(self, fault: Fault) -> None:
        code = self.live_table()
        pid = self.ping(code).pid
        fault.target = code
        fault.start = time.time()
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(self.stop_s)
        finally:
            os.kill(pid, signal.SIGCONT)
        resumed = time.time()
        ok = until(self.moved_on([code], int(resumed * 1000)), RECOVER_LIMIT_S)
        self._recovered(fault, ok)
        if fault.recover_s is not None:  # counted from SIGCONT: the stop itself is the fault
            fault.recover_s = fault.end - resumed
        fault.detail["stopped_s"] = self.stop_s

    def gateway_kill(self, fault: Fault) -> None:
        i = self.busiest_gateway()
        gw = self.stack.gateways[i]
        port = str(gw.port)
        before = read_tables(self.dir)
        total, mine = connected(before), connected(before, port)
        fault.target = f"gateway :{port}"
        fault.detail["players"] = mine
        assert gw.proc is not None
        fault.start = time.time()
        os.killpg(gw.proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            gw.proc.wait(10)
        gw.proc = None

        def back() -> bool:
            tables = read_tables(self.dir)
            return (
                welcomes_since(self.dir, fault.start) >= mine
                and connected(tables, port) == 0
                and connected(tables) >= total
            )

        ok = until(back, RECOVER_LIMIT_S)
        self._recovered(fault, ok)
        # Started again on the same port, for the next fault; not part of the recovery.
        gw.start()
        gw.wait_ready()
        fault.end = max(fault.end, time.time())

    def node_loss(self, fault: Fault) -> None:
        self._lose_node(fault, freeze=False)

    def node_freeze(self, fault: Fault) -> None:
        self._lose_node(fault, freeze=True)

    def _lose_node(self, fault: Fault, freeze: bool) -> None:
        """The worker node carrying the most tables in play lost: its processes SIGKILLed (the
        kernel resets their sockets: every peer knows at once), or with `freeze` SIGSTOPped (a
        machine that vanished: nothing answers, nothing is reset, and only timeouts tell), then
        killed once its tables have moved on."""
        ray = self.stack.driver()
        ids = {int(n["NodeManagerPort"]): str(n["NodeID"]) for n in ray.nodes() if n["Alive"]}
        tables = read_tables(self.dir)
        codes = sorted(c for c, t in tables.items() if t["connected"] and t["phase"] in MOVING)
        where = {c: self._node_of(c) for c in codes}
        # The worker node carrying the most tables in play.
        counts = [
            sum(1 for n in where.values() if n == ids.get(node.manager_port))
            for node in self.stack.nodes
        ]
        i = counts.index(max(counts))
        node = self.stack.nodes[i]
        assert node.proc is not None
        here = [c for c, n in where.items() if n == ids.get(node.manager_port)]
        fault.target = f"ray node :{node.manager_port}"
        fault.detail["tables"] = len(here)
        # Every process of the node: `ray start`, its raylet and the raylet's workers (the
        # table actors), which start sessions of their own, so not one process group.
        start = node.proc
        procs = [psutil.Process(start.pid)]
        with contextlib.suppress(psutil.Error):
            procs += procs[0].children(recursive=True)
        node_id = ids.get(node.manager_port, "")
        dead_at: list[float] = []
        answers = Answers(ray, here, self.actor)

        def back() -> bool:
            # Apart from the players' view: when the GCS declared the node dead (detection),
            # and when each table's actor answered again (restarted and restored).
            if not dead_at and not any(n["NodeID"] == node_id and n["Alive"] for n in ray.nodes()):
                dead_at.append(time.time())
            if dead_at:
                answers.poll()
            return bool(dead_at) and moved.check()

        fault.start = time.time()
        moved = Moved(self.dir, here, int(fault.start * 1000))
        for p in procs:
            with contextlib.suppress(psutil.Error):
                if freeze:
                    p.send_signal(signal.SIGSTOP)
                else:
                    p.kill()
        if not freeze:
            with contextlib.suppress(Exception):
                node.proc.wait(10)
            node.proc = None
        ok = until(back, RECOVER_LIMIT_S)
        self._recovered(fault, ok)
        fault.detail["dead_s"] = round(dead_at[0] - fault.start, 2) if dead_at else None
        last = answers.last(ANSWER_WAIT_S)
        fault.detail["answering_s"] = None if last is None else round(last - fault.start, 2)
        fault.detail["per_table"] = per_table(fault.start, answers, moved)
        if freeze:  # killed while stopped: it never runs again (a raylet resumed would exit)
            for p in procs:
                with contextlib.suppress(psutil.Error):
                    p.kill()
            with contextlib.suppress(Exception):
                start.wait(10)
            node.proc = None
        self.stack.nodes[i] = self.stack.new_node()  # for the next node loss
        fault.end = max(fault.end, time.time())

    def _node_of(self, code: str) -> str:
        try:
            return self.ping(code).node
        except Exception:
            return ""

    def redis_restart(self, fault: Fault) -> None:
        if self.stack.redis_cluster is not None:
            raise RuntimeError("redis_restart is a single redis-server's fault")
        r = self.stack.redis
        fault.target = f"redis :{r.port}"
        fault.start = time.time()
        r.stop()
        r.start()
        ok = until(self.serves, RECOVER_LIMIT_S)
        self._recovered(fault, ok)

    def serves(self) -> bool:
        """Whether every gateway opens a session (its store answers)."""
        for gw in self.stack.gateways:
            try:
                res = httpx.post(f"{gw.url}/api/sessions", json={"name": "probe"}, timeout=5)
            except httpx.HTTPError:
                return False
            if res.status_code != 201 and res.status_code != 200:
                return False
        return True

    def redis_primary_kill(self, fault: Fault) -> None:
        cluster = self.stack.redis_cluster
        if cluster is None:
            raise RuntimeError("redis_primary_kill needs a Redis Cluster (soak --redis-cluster)")
        code = self.live_table()
        primary = cluster.primary_of(keys.snapshot(code))
        fault.target = f"{code} on redis :{primary.port}"
        urls = [gw.url for gw in self.stack.gateways]
        failover = Failover(cluster, primary, code, self.dir, urls)
        failover.kill()
        fault.start = failover.start
        ok = until(failover.poll, RECOVER_LIMIT_S, FAILOVER_POLL_S)
        self._recovered(fault, ok)
        # Back on its port and directory, as a replica of the one promoted: for the next kill.
        # It syncs while the table's own phases are waited for.
        primary.start()
        until(failover.poll_reported, RECOVER_LIMIT_S, FAILOVER_POLL_S)
        fault.detail.update(failover.detail())
        cluster.wait_ok()
        fault.end = max(fault.end, time.time())

    def burst(self, fault: Fault) -> None:
        n = self.burst_size
        fault.target = f"{n} tables"
        answers: list[tuple[int, float, str]] = []
        lock = threading.Lock()

        def create(i: int) -> None:
            url = self.stack.gateways[i % 2].url
            started = time.perf_counter()
            try:
                with httpx.Client(base_url=url, timeout=REST_TIMEOUT_S) as c:
                    token = c.post("/api/sessions", json={"name": f"burst{i}"}).json()["token"]
                    res = c.post(
                        "/api/tables",
                        json={"players": 4},
                        headers={"Authorization": f"Bearer {token}"},
                    )
                status = res.status_code  # a refusal's body says which (`no_room`...) and why
                code = str(res.json().get("code", "")) if status == 201 else res.text[:200]
            except (httpx.HTTPError, ValueError, KeyError) as exc:
                status, code = 0, repr(exc)
            with lock:
                answers.append((status, (time.perf_counter() - started) * 1000, code))

        fault.start = time.time()
        threads = [threading.Thread(target=create, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(RECOVER_LIMIT_S)
        ok = len(answers) == n and all(s == 201 for s, _, _ in answers)
        self._recovered(fault, ok)
        self.burst_codes += [c for s, _, c in answers if s == 201]
        ms = sorted(m for _, m, _ in answers)
        fault.detail["created"] = sum(1 for s, _, _ in answers if s == 201)
        fault.detail["refused"] = [f"{s} {c}" for s, _, c in answers if s != 201]
        fault.detail["max_ms"] = round(ms[-1], 1) if ms else None

    def storm(self, fault: Fault) -> None:
        i = self.busiest_gateway()
        port = str(self.stack.gateways[i].port)
        before = read_tables(self.dir)
        total, mine = connected(before), connected(before, port)
        fault.target = f"gateway :{port}"
        fault.detail["players"] = mine
        self.storms += 1
        control = self.dir / "control.json"
        tmp = control.with_suffix(".tmp")
        tmp.write_text(json.dumps({"storm": {"id": self.storms, "port": port, "within": 2.0}}))
        fault.start = time.time()
        tmp.replace(control)

        def back() -> bool:
            return (
                welcomes_since(self.dir, fault.start) >= mine
                and connected(read_tables(self.dir)) >= total
            )

        ok = until(back, RECOVER_LIMIT_S)
        self._recovered(fault, ok)


def clear_control(folder: Path) -> None:
    with contextlib.suppress(OSError):
        (folder / "control.json").unlink()
