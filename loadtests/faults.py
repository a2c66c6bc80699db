"""The soak's faults, one at a time: each injects itself into the stack, waits (bounded) until
the players are back to normal, and says when it started, when it was over and how long the
recovery took, as seen by the players themselves (their tables' events, their welcomes).

    actor_kill     SIGKILL of one table actor's process (Ray restarts it from its snapshot)
    gateway_kill   SIGKILL of the gateway carrying the most players (they come back through the
                   other; the killed one is then started again on its port)
    node_loss      SIGKILL of the Ray worker node's processes (its tables come back on the head;
                   a new worker node is then started)
    redis_restart  redis-server stopped and started again on its port, from its append-only file
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
import redis

from actors import keys
from loadtests.soak_stack import SoakStack

if TYPE_CHECKING:
    from actors.protocol import Status
from loadtests.watch import MOVING, connected, read_tables, welcomes_since

FAULTS = (
    "actor_kill",
    "gateway_kill",
    "node_loss",
    "redis_restart",
    "actor_stop",
    "burst",
    "storm",
)
RECOVER_LIMIT_S = 120.0  # a fault not recovered from within this is reported as not recovered
POLL_S = 0.25

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


def until(check: Callable[[], bool], limit: float) -> bool:
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_S)
    return True


class Injector:
    """Knows the stack and the players' folder; `run(kind)` injects one fault."""

    def __init__(self, stack: SoakStack, soak_dir: Path, burst: int, stop_s: float) -> None:
        self.stack = stack
        self.dir = soak_dir
        self.burst_size = burst
        self.stop_s = stop_s
        self.rng = random.Random(20)
        self.storms = 0
        self.burst_codes: list[str] = []

    # -- helpers ------------------------------------------------------------------------------
    def redis(self) -> redis.Redis:
        assert self.stack.redis is not None
        return redis.Redis.from_url(self.stack.redis.url, decode_responses=True, socket_timeout=5)

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
        procs = [psutil.Process(node.proc.pid)]
        with contextlib.suppress(psutil.Error):
            procs += procs[0].children(recursive=True)
        fault.start = time.time()
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.kill()
        with contextlib.suppress(Exception):
            node.proc.wait(10)
        node.proc = None
        ok = until(self.moved_on(here, int(fault.start * 1000)), RECOVER_LIMIT_S)
        self._recovered(fault, ok)
        self.stack.nodes[i] = self.stack.new_node()  # for the next node loss
        fault.end = max(fault.end, time.time())

    def _node_of(self, code: str) -> str:
        try:
            return self.ping(code).node
        except Exception:
            return ""

    def redis_restart(self, fault: Fault) -> None:
        r = self.stack.redis
        assert r is not None
        fault.target = f"redis :{r.port}"
        fault.start = time.time()
        r.stop()
        r.start()

        def serves() -> bool:
            for gw in self.stack.gateways:
                try:
                    res = httpx.post(f"{gw.url}/api/sessions", json={"name": "probe"}, timeout=5)
                except httpx.HTTPError:
                    return False
                if res.status_code != 201 and res.status_code != 200:
                    return False
            return True

        ok = until(serves, RECOVER_LIMIT_S)
        self._recovered(fault, ok)

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
                status, code = res.status_code, str(res.json().get("code", ""))
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
