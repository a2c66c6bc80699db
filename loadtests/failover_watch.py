"""Waiting out a lost Redis primary (loadtests/faults.py, `redis_primary_kill`), one phase at a
time, so that a slow recovery says where its time went instead of being guessed at. Each phase
is seen from outside the stack, in seconds from the SIGKILL:

    failed_s    a surviving node flags the killed one `fail` (the node timeout, then a
                majority of primaries agreeing through gossip)
    promoted_s  a node's CLUSTER SLOTS names another primary for the table's slot (the
                replica's election)
    saved_s     the table's log on its new primary holds an event past the last one the killed
                primary held: the table actor's first save there (its client's and its retries'
                part)
    moved_s     the table's players were shown an event that happened after the promotion (what
                the players saw; the locustfile writes its state every 0.5 s)
    serves_s    both gateways opened a session (their clients' part); `gateway_s` each one's

The fault is over when every phase is. They are polled together, every `POLL_S`, so that one
slow phase does not hide when the others ended; a gateway's probe is bounded by `PROBE_S`.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis

from actors import keys
from cluster.procs import RedisServer
from cluster.redis_cluster import LocalRedisCluster
from loadtests.watch import read_tables

POLL_S = 0.1
PROBE_S = 5.0  # a gateway's answer to a session probe; a slower one is a failed probe
PHASES = ("failed", "promoted", "saved", "moved", "serves")


def tail_seq(cluster: LocalRedisCluster, node: RedisServer, code: str) -> int:
    """The seq of the last event of `code`'s log on `node` (-1: none, or no answer)."""
    with contextlib.suppress(redis.RedisError, ValueError, IndexError, TypeError):
        with cluster.client(node) as c:
            last = c.lrange(keys.log(code), -1, -1)
        return int(json.loads(last[0])[0]) if last else -1
    return -1


@dataclass
class Failover:
    """One primary lost under one table: `poll()` until it says every phase is over."""

    cluster: LocalRedisCluster
    lost: RedisServer
    code: str
    players: Path  # the players' state files (loadtests/watch.py)
    gateways: list[str]  # each gateway's base URL
    start: float = 0.0  # time.time() of the SIGKILL
    seq_before: int = -1  # the last seq of the table's log on the primary before the kill
    at: dict[str, float] = field(default_factory=dict)  # phase -> time.time() first seen
    gateway_at: dict[str, float] = field(default_factory=dict)
    probes: dict[str, list[str]] = field(default_factory=dict)  # each gateway's failed probes
    phase_at_kill: str = ""

    def kill(self) -> None:
        self.seq_before = tail_seq(self.cluster, self.lost, self.code)
        self.phase_at_kill = str(read_tables(self.players).get(self.code, {}).get("phase", ""))
        self.start = time.time()
        self.cluster.kill(self.lost)

    def poll(self) -> bool:
        """Look at every phase not yet over; True once all are."""
        if "failed" not in self.at and self._flagged_failed():
            self._seen("failed")
        if "promoted" not in self.at:
            primary = self._primary()
            if primary is not None and primary is not self.lost:
                self._seen("promoted")
        if "promoted" in self.at:
            if "saved" not in self.at and self._saved():
                self._seen("saved")
            if "moved" not in self.at and self._moved():
                self._seen("moved")
            if "serves" not in self.at and self._serves():
                self._seen("serves")
        return all(p in self.at for p in PHASES)

    def detail(self) -> dict[str, Any]:
        """Each phase's time from the kill (None: not seen), and what the probes said."""

        def since(t: float | None) -> float | None:
            return None if t is None else round(t - self.start, 2)

        out: dict[str, Any] = {f"{p}_s": since(self.at.get(p)) for p in PHASES}
        out["gateway_s"] = [since(self.gateway_at.get(url)) for url in self.gateways]
        out["phase"] = self.phase_at_kill
        failed = {url[-5:]: p[:6] for url, p in self.probes.items() if p}
        if failed:
            out["failed_probes"] = failed
        return out

    def _seen(self, phase: str) -> None:
        self.at[phase] = time.time()

    def _primary(self) -> RedisServer | None:
        try:
            return self.cluster.primary_of(keys.log(self.code))
        except RuntimeError:
            return None

    def _flagged_failed(self) -> bool:
        for node in self.cluster.nodes:
            if node.proc is None:
                continue
            with contextlib.suppress(redis.RedisError), self.cluster.client(node) as c:
                known = c.execute_command("CLUSTER NODES")  # {address: {flags, …}}
                for address, info in known.items():
                    flags = str(info.get("flags", "")).split(",")
                    if address.endswith(f":{self.lost.port}") and "fail" in flags:
                        return True
                return False
        return False

    def _saved(self) -> bool:
        primary = self._primary()
        if primary is None or primary is self.lost:
            return False
        return tail_seq(self.cluster, primary, self.code) > self.seq_before

    def _moved(self) -> bool:
        since_ms = int(self.at["promoted"] * 1000)
        return int(read_tables(self.players).get(self.code, {}).get("last_at", 0)) > since_ms

    def _serves(self) -> bool:
        for url in self.gateways:
            if url in self.gateway_at:
                continue
            asked = time.time()
            try:
                res = httpx.post(f"{url}/api/sessions", json={"name": "probe"}, timeout=PROBE_S)
                ok, said = res.status_code in (200, 201), str(res.status_code)
            except httpx.HTTPError as exc:
                ok, said = False, type(exc).__name__
            if ok:
                self.gateway_at[url] = time.time()
            else:
                took = time.time() - asked
                note = f"{asked - self.start:.1f}:{said}:{took:.1f}"
                self.probes.setdefault(url, []).append(note)
        return len(self.gateway_at) == len(self.gateways)
