"""Two cells on one machine: one shared redis-server, two stacks of our own (cluster/stack.py,
cells `a` and `b`, one Ray token between them: the fleet's link secret), one gateway homed in
each with its internal port. Used by tests/cluster/test_cells.py and `python -m loadtests.cells`.

`kill("a")` is the hard loss of a cell: its gateway and every process of its Ray (head, raylet,
workers: the table actors) get SIGKILL by PID, nothing stopped in order."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from redis import Redis

from actors import keys
from cluster.procs import RedisServer, free_port
from cluster.ray_auth import TOKEN_FILE, write_token
from cluster.stack import Spec, Stack

NAMESPACE = "quatro-cells"
NAMES = ("a", "b")


@dataclass
class TwoCells:
    logs: Path
    table_slots: int = 16
    extra_env: dict[str, str] = field(default_factory=dict)
    redis: RedisServer = field(default_factory=RedisServer)
    token_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="qcells-")))
    cells: dict[str, Stack] = field(default_factory=dict)

    def start(self) -> TwoCells:
        self.redis.start()
        token = write_token(self.token_dir)  # one token, so one link secret, for both cells
        for name in NAMES:
            spec = Spec(
                table_slots=self.table_slots,
                gateways=0,  # started below, once both heads are up
                namespace=NAMESPACE,
                object_store_mb=128,
                pool=1,
                test_hooks=True,
                settings={
                    "QUATRO_CELL": name,
                    "QUATRO_POOL_MAX": "1",
                    "QUATRO_SLOT_RESERVE": "2",
                    **self.extra_env,
                },
            )
            cell = Stack(
                spec, self.logs / name, redis=self.redis, own_redis=False, token_path=token
            )
            self.cells[name] = cell.start()
        for cell in self.cells.values():
            cell.gateways.append(cell.gateway(QUATRO_INTERNAL_PORT=str(free_port())))
        for cell in self.cells.values():
            cell.a.wait_ready()
        return self

    def secret(self) -> str:
        """The fleet's link secret: the Ray token both cells share."""
        return (self.token_dir / TOKEN_FILE).read_text().strip()

    def url(self, name: str) -> str:
        return self.cells[name].url

    def store(self) -> Redis:
        return Redis.from_url(self.redis.url, decode_responses=True)

    def record(self, code: str) -> dict[str, Any]:
        r = self.store()
        try:
            return dict(json.loads(r.get(keys.table(code)) or "{}"))
        finally:
            r.close()

    def snapshot(self, code: str) -> dict[str, Any]:
        r = self.store()
        try:
            return dict(json.loads(r.get(keys.snapshot(code)) or "{}"))
        finally:
            r.close()

    def log(self, code: str) -> list[list[Any]]:
        """The table's stored event log (its last 256 events), oldest first."""
        r = self.store()
        try:
            return [json.loads(x) for x in r.lrange(keys.log(code), 0, -1)]
        finally:
            r.close()

    def registry(self) -> dict[str, dict[str, Any]]:
        """The cells whose registry record lives now."""
        r = self.store()
        try:
            found: dict[str, dict[str, Any]] = {}
            for name in sorted(str(n) for n in r.smembers(keys.CELLS)):
                raw = r.get(keys.cell(name))
                if raw is not None:
                    found[name] = dict(json.loads(raw))
            return found
        finally:
            r.close()

    def kill(self, name: str) -> list[int]:
        """SIGKILL the cell's gateway and every process of its Ray, by PID; the PIDs killed."""
        cell = self.cells[name]
        doomed = self._processes_of(cell)
        for proc in doomed:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                proc.kill()
        _, alive = psutil.wait_procs(doomed, timeout=10)
        assert not alive, f"still alive after SIGKILL: {alive}"
        for popen in (cell.a.proc, cell.head.proc):
            if popen is not None:
                with contextlib.suppress(Exception):
                    popen.wait(5)
        return [p.pid for p in doomed]

    def _processes_of(self, cell: Stack) -> list[psutil.Process]:
        """The cell's gateway and Ray head with all their descendants, and any process that
        names the head's private temp dir in its command line or its environment (Ray's
        workers retitle themselves `ray::TableActor`, and start sessions of their own)."""
        marker = str(cell.head.temp_dir)
        found: dict[int, psutil.Process] = {}
        for popen in [gw.proc for gw in cell.gateways] + [cell.head.proc]:
            if popen is None:
                continue
            with contextlib.suppress(psutil.NoSuchProcess):
                root = psutil.Process(popen.pid)
                for p in [root, *root.children(recursive=True)]:
                    found[p.pid] = p
        for p in psutil.process_iter(["pid", "cmdline"]):
            if p.pid == os.getpid() or p.pid in found:
                continue
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                if marker in " ".join(p.info["cmdline"] or []) or any(
                    marker in v for v in p.environ().values()
                ):
                    found[p.pid] = p
        return list(found.values())

    def stop(self) -> None:
        for cell in self.cells.values():
            for gw in cell.gateways:
                gw.stop()
        for cell in self.cells.values():
            # What its head's stop leaves (its workers retitle themselves and may outlive the
            # raylet for a while): only processes of this cell, found by its private temp dir.
            leftovers = self._processes_of(cell)
            cell.head.stop()
            for proc in leftovers:
                with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                    proc.kill()
            psutil.wait_procs(leftovers, timeout=10)
            cell.stop()  # the head's temp dir; the shared redis-server is ours to stop
        self.redis.cleanup()
        shutil.rmtree(self.token_dir, ignore_errors=True)
