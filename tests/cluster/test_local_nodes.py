"""`QUATRO_LOCAL_NODES=2`: the embedded launcher joins a second Ray node to its head, table
actors spread over both, and stopping the launcher leaves none of their processes behind."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx

from cluster.procs import find_by_marker
from cluster.stack import Launched, Spec
from loadtests.placement import placement

TABLES = 4


def test_tables_spread_over_two_local_nodes(tmp_path: Path) -> None:
    stack = Launched(Spec.under_load(table_slots=20, pool=2, nodes=2), tmp_path / "stack.log")
    stack.start()
    try:
        assert stack.ray_address is not None
        assert stack.ray_temp is not None
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
        # The launcher itself stops both nodes: nothing of them is left once it has exited.
        assert stack.proc is not None
        stack.proc.send_signal(signal.SIGTERM)
        stack.proc.wait(60)
        left = find_by_marker(stack.ray_temp)
        assert left == [], [" ".join(p.cmdline())[:150] for p in left]
    finally:
        stack.stop()
