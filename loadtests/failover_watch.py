"""Waiting out a lost Redis primary (loadtests/faults.py, `redis_primary_kill`), one phase at a
time, so that a slow recovery says where its time went instead of being guessed at. Each phase
is seen from outside the stack, in seconds from the SIGKILL:

    failed_s    a surviving node flags the killed one `fail` (the node timeout, then a
                majority of primaries agreeing through gossip)
    promoted_s  a node's CLUSTER SLOTS names another primary for the table's slot (the
                replica's election)
    written_s   the table's actor wrote to its slot on the new primary: an event past the last
                one the killed primary held, or its beat (the table's time in
                `quatro:{CODE}:alive`, written every second while its clock runs and nothing
                was saved) past the one it held (its client's and its retries' part)
    saved_s     every event the players had been shown at the promotion is in the new
                primary's log (a table whose last events the replica never got heals them at its
                next save: docs/reliability.md, "The store's failover")
    serves_s    both gateways opened a session (their clients' part); `gateway_s` each one's

The fault is over when the last of `promoted`, `written`, `saved` and `serves` is: the store
holds what the players saw, and serves the table's actor and both gateways again. One more is
reported, and waited for a while after (`AFTER_S`), but not counted: a lost primary does not hold
a table still (its events are published while its saves fail), so when its players next see an
event says nothing of the store, only of the table's own pace (its 30 s pause, a deal nobody can
play waiting for R22):

    moved_s     the players were shown an event that happened after the promotion (the
                locustfile writes its state every 0.5 s)

They are polled together, every `POLL_S`, so that one slow phase does not hide when the others
ended; a gateway's probe is bounded by `PROBE_S`.
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
OVER = ("promoted", "written", "saved", "serves")  # the fault is over when all are
PHASES = ("failed", *OVER)
REPORTED = ("moved",)  # the table's own pace: reported, not counted
# How long after the kill the reported phase is waited for (null if later): within the soak's
# shortest interval between faults (30 s), so that waiting for it never delays the next one.
AFTER_S = 20.0


@dataclass(frozen=True)
class Written:
    """What a node holds of the table: its log's last event (seq, table time) and its beat."""

    seq: int = -1
    at: int = -1
    alive: int = -1

    @classmethod
    def on(cls, cluster: LocalRedisCluster, node: RedisServer, code: str) -> Written:
        """As `node` has it now (all -1: nothing, or no answer)."""
        with contextlib.suppress(redis.RedisError, ValueError, IndexError, TypeError):
            with cluster.client(node) as c:
                last = c.lrange(keys.log(code), -1, -1)
                alive = c.get(keys.alive(code))
            entry: list[Any] = json.loads(last[0]) if last else [-1, "", 0, {}, -1]
            return cls(int(entry[0]), int(entry[4]), int(str(alive)) if alive else -1)
        return cls()


@dataclass
class Failover:
    """One primary lost under one table: `poll()` until it says the fault is over, then
    `poll_reported()` until every phase is seen (or `AFTER_S`)."""

    cluster: LocalRedisCluster
    lost: RedisServer
    code: str
    players: Path  # the players' state files (loadtests/watch.py)
    gateways: list[str]  # each gateway's base URL
    start: float = 0.0  # time.time() of the SIGKILL
    before: Written = field(default_factory=Written)  # what the killed primary held
    shown_at: int = 0  # the table time of the last event the players saw at the promotion
    at: dict[str, float] = field(default_factory=dict)  # phase -> time.time() first seen
    gateway_at: dict[str, float] = field(default_factory=dict)
    probes: dict[str, list[str]] = field(default_factory=dict)  # each gateway's failed probes
    phase_at_kill: str = ""

    def kill(self) -> None:
        self.before = Written.on(self.cluster, self.lost, self.code)
        self.phase_at_kill = str(self._table().get("phase", ""))
        self.start = time.time()
        self.cluster.kill(self.lost)

    def poll(self) -> bool:
        """Look at every phase not yet over; True once the fault is."""
        if "failed" not in self.at and self._flagged_failed():
            self._seen("failed")
        if "promoted" not in self.at:
            primary = self._primary()
            if primary is not None and primary is not self.lost:
                self.shown_at = int(self._table().get("last_at", 0))
                self._seen("promoted")
        if "promoted" in self.at:
            self._poll_store()
            if "serves" not in self.at and self._serves():
                self._seen("serves")
        return all(p in self.at for p in OVER)

    def poll_reported(self) -> bool:
        """True once every phase is seen, or `AFTER_S` after the kill."""
        self.poll()
        return all(p in self.at for p in PHASES + REPORTED) or time.time() - self.start > AFTER_S

    def detail(self) -> dict[str, Any]:
        """Each phase's time from the kill (None: not seen), and what the probes said."""

        def since(t: float | None) -> float | None:
            return None if t is None else round(t - self.start, 2)

        out: dict[str, Any] = {f"{p}_s": since(self.at.get(p)) for p in PHASES + REPORTED}
        out["gateway_s"] = [since(self.gateway_at.get(url)) for url in self.gateways]
        out["phase"] = self.phase_at_kill
        failed = {url[-5:]: p[:6] for url, p in self.probes.items() if p}
        if failed:
            out["failed_probes"] = failed
        return out

    def _seen(self, phase: str) -> None:
        self.at[phase] = time.time()

    def _table(self) -> dict[str, Any]:
        return dict(read_tables(self.players).get(self.code, {}))

    def _primary(self) -> RedisServer | None:
        try:
            return self.cluster.primary_of(keys.log(self.code))
        except RuntimeError:
            return None

    def _poll_store(self) -> None:
        if all(p in self.at for p in ("written", "saved", "moved")):
            return
        primary = self._primary()
        if primary is None or primary is self.lost:
            return
        now = Written.on(self.cluster, primary, self.code)
        if "written" not in self.at and (
            now.seq > self.before.seq or now.alive > self.before.alive
        ):
            self._seen("written")
        if "saved" not in self.at and now.at >= self.shown_at:
            self._seen("saved")
        if "moved" not in self.at:
            since_ms = int(self.at["promoted"] * 1000)
            if int(self._table().get("last_at", 0)) > since_ms:
                self._seen("moved")

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
