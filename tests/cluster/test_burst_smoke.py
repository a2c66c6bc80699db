"""`python -m loadtests.burst` on the real test stack, small: 24 players arriving within 3 s,
half of them hosts and friends joining by code, half pressing Play now. Every one must be seated
(welcomed at the seat REST gave), with no failure of any kind and no refusal waited out (the test
stack's quotas and slots are far from a burst this size), and the report must hold the figures
it promises. And on a cluster with no room, the script must say that nobody was seated, and why.
(Here, not in tests/loadtests: this suite runs async tests off the main thread.)"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path

import pytest

from loadtests.burst import burst
from loadtests.burst_report import summary
from tests.cluster.test_restore import actor_name
from tests.conftest import Stack, own_database

PLAYERS = 24
WINDOW_S = 3.0


async def test_a_small_burst_seats_every_player_without_a_failure(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    result, outcomes, tables = await burst(
        stack.a.url, PLAYERS, WINDOW_S, table_share=0.5, quick_share=0.5, seed=3
    )
    try:
        with capsys.disabled():
            print(f"\n[burst smoke]\n{summary(result, outcomes)}\n{json.dumps(result)}")
        assert result["failures"] == {}, summary(result, outcomes)
        assert result["failed"] == 0
        assert result["seated"] == PLAYERS
        assert all(o.seated_s is not None for o in outcomes)
        kinds = result["by_kind"]
        assert kinds["host"]["n"] == 3
        assert kinds["friend"]["n"] == 9
        assert kinds["quick"]["n"] == 12
        times = result["arrival_to_seated_ms"]
        assert all(math.isfinite(times[k]) and times[k] > 0 for k in ("p50", "p99", "max"))
        assert times["p50"] <= times["p99"] <= times["max"]
        # Arrivals spread over the window: the script kept its schedule.
        assert result["script_late_ms_max"] < 1000
        # 3 private tables, and the 12 quick players at public tables of four.
        assert len(tables) >= 3 + 3
    finally:
        ray = stack.driver()
        for code in tables:  # lobbies and bot matches would hold their slots for minutes
            with contextlib.suppress(Exception):
                ray.kill(ray.get_actor(actor_name(stack, code), namespace=stack.namespace))


async def test_a_burst_on_a_full_cluster_reports_every_player_unseated_and_why(
    stack: Stack, tmp_path: Path
) -> None:
    # A gateway that may start no table (its reserve is above any free count) and has no pool:
    # its keys in Redis database 1, so the stack's shared pool cannot open a table for it.
    own_db, store = own_database(stack, 1)
    gw = stack.gateway(
        tmp_path,
        REDIS_URL=own_db,
        QUATRO_POOL_SIZE="0",
        QUATRO_SLOT_RESERVE="100000",
        QUATRO_RETRY_AFTER="1",
    )
    try:
        gw.wait_ready()
        result, outcomes, tables = await burst(
            gw.url, 8, 1.0, table_share=0.5, quick_share=0.5, seed=5, deadline_s=4.0
        )
    finally:
        gw.stop()
        store.flushdb()
        store.close()
    out = summary(result, outcomes)
    assert result["seated"] == 0, out
    assert result["failed"] == 8, out
    # The host and the quick players waited out `no_room` (or quick play's `unavailable`) until
    # their deadline; the host's friends never got a link.
    assert result["failures"] == {"not seated by the deadline": 5, "its host has no table": 3}, out
    no_room = sum(n for k, n in result["refusals"].items() if k.startswith("no_room on "))
    assert no_room >= 5, out
    assert tables == set()
    assert math.isnan(result["arrival_to_seated_ms"]["p50"])
    assert "FAILED 5 × not seated by the deadline" in out
