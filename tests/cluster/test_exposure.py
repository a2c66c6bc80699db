"""`make run` with two local Ray nodes (`QUATRO_LOCAL_NODES=2`), started once for the module: table
actors spread over both nodes; it exposes nothing of Ray: every listening TCP socket of the
embedded stack is on loopback, a Ray driver without the run's token is refused, one with it
connects; and stopping the launcher leaves no process of either node behind (issue 10, part 2).
The last test stops the launcher: it stays last."""

from __future__ import annotations

import ipaddress
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from cluster.gateway_process import ROOT
from cluster.procs import find_by_marker
from cluster.stack import Launched, Spec
from loadtests.placement import placement
from tests.cluster.test_ray_join_auth import REFUSED_TRIES

DRIVER_DEADLINE_S = 120.0
TABLES = 4
# Joins the cluster as a driver and proves it by reading the cluster's resources.
DRIVER = """
import sys, ray
ray.init(address=sys.argv[1], log_to_driver=False)
print("CONNECTED", ray.cluster_resources().get("table_slot"), flush=True)
"""


def _stack_processes(stack: Launched) -> list[psutil.Process]:
    assert stack.pid is not None
    assert stack.ray_temp is not None
    launcher = psutil.Process(stack.pid)
    procs = {p.pid: p for p in [launcher, *launcher.children(recursive=True)]}
    for p in find_by_marker(stack.ray_temp):  # Ray's workers that started sessions of their own
        procs.setdefault(p.pid, p)
    return list(procs.values())


def _is_loopback(ip: str) -> bool:
    addr = ipaddress.ip_address(ip.split("%")[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback


def _listeners(procs: list[psutil.Process]) -> list[tuple[str, str, int]]:
    found = []
    for p in procs:
        try:
            name = " ".join(p.cmdline())[:90]
            conns = p.net_connections(kind="tcp")
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        found += [(name, c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN]
    return found


def _driver(address: str, **env: str) -> subprocess.Popen[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    # Like cluster.connect: keep 127.0.0.1, so that only the token decides.
    full.update(env, RAY_USAGE_STATS_ENABLED="0", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, address],
        cwd=ROOT,
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _outcome(proc: subprocess.Popen[str], deadline: float) -> tuple[int | None, str]:
    """Exit code (None if it still ran at the deadline: then killed) and output."""
    try:
        out, _ = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out


@pytest.fixture(scope="module")
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launched]:
    """`make run` with a second local Ray node: a worker node's processes must be on loopback
    too, and carry tables."""
    log = tmp_path_factory.mktemp("launched") / "stack.log"
    stack = Launched(Spec.under_load(table_slots=20, pool=2, nodes=2), log)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


def test_tables_spread_over_two_local_nodes(launched: Launched) -> None:
    stack = launched
    assert stack.ray_address is not None
    assert "Ray node 2 joined" in stack.tail(20000)
    with httpx.Client(base_url=stack.url, timeout=60) as c:
        for i in range(TABLES):  # one host each: a player may keep only 3 lobbies open
            token = c.post("/api/sessions", json={"name": f"Host {i}"}).json()["token"]
            auth = {"Authorization": f"Bearer {token}"}
            r = c.post("/api/tables", json={"players": 4}, headers=auth)
            assert r.status_code == 201, r.text
    nodes = placement(stack.ray_address, token_path=stack.ray_token_path)
    assert len(nodes) == 2, nodes
    assert sum(n["tables"] for n in nodes.values()) == TABLES
    # SPREAD: each node carries tables (Ray's default would fill the first node's half).
    assert all(n["tables"] + n["pool"] >= 2 for n in nodes.values()), nodes
    assert all(n["tables"] >= 1 for n in nodes.values()), nodes


def test_make_run_listens_on_loopback_only_and_wants_the_token(launched: Launched) -> None:
    stack = launched
    assert stack.ray_address is not None
    assert stack.ray_temp is not None
    with httpx.Client(base_url=stack.url, timeout=60) as c:  # table actors exist
        token = c.post("/api/sessions", json={"name": "Host"}).json()["token"]
        r = c.post("/api/tables", json={"players": 4}, headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 201, r.text
    procs = _stack_processes(stack)
    names = " ".join(" ".join(p.cmdline()) for p in procs)
    for name in ("TableActor", "gcs_server", "raylet"):
        assert name in names, names
    raylets = [p for p in procs if p.name() == "raylet"]
    assert len(raylets) == 2, raylets
    listeners = _listeners(procs)
    assert len(listeners) >= 5, listeners  # GCS, raylet, workers, gateway, redis at least
    exposed = [sock for sock in listeners if not _is_loopback(sock[1])]
    assert exposed == [], exposed
    print(f"{len(listeners)} listening TCP sockets in {len(procs)} processes, on loopback")
    assert not any("ray.util.client.server" in n for n, _, _ in listeners), listeners

    assert stack.ray_token_path is not None, stack.tail()
    token_file = Path(stack.ray_token_path)
    assert token_file.stat().st_mode & 0o077 == 0
    assert token_file.parent.stat().st_mode & 0o077 == 0
    assert token_file.read_text().strip() not in stack.tail(100000)  # never logged

    deadline = time.monotonic() + DRIVER_DEADLINE_S
    wrong = _driver(
        stack.ray_address, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN="0" * 64, **REFUSED_TRIES
    )
    none = _driver(stack.ray_address, RAY_AUTH_MODE="disabled", **REFUSED_TRIES)
    right = _driver(stack.ray_address, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(token_file))
    for refused in (wrong, none):
        code, out = _outcome(refused, deadline)
        assert "CONNECTED" not in out, out[-2000:]
        assert code != 0, out[-2000:]
        assert "InvalidAuthToken" in out, out[-2000:]  # refused for the token, not else
    code, out = _outcome(right, deadline)
    assert code == 0, out[-2000:]
    assert "CONNECTED 40.0" in out, out[-2000:]

    # SIGTERM: the launcher stops everything it started.
    assert stack.proc is not None
    stack.proc.send_signal(signal.SIGTERM)
    stack.proc.wait(60)
    _, alive = psutil.wait_procs(procs, timeout=10)
    alive = [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
    assert alive == [], alive
    assert find_by_marker(stack.ray_temp) == []
