"""The CI smoke run of the Locust kit: two 6-seat tables of Locust players on the real stack
(tests/conftest.py), about 20 seconds with the rules' clock sped up tenfold (test hook) and
players ten times faster, dropping and coming back often. It fails on any failed exchange, and
when any exchange name is missing from Locust's own stats: each must have been measured.

Locust runs as a child process (it monkey-patches the standard library with gevent)."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest

from loadtests.report import EXCHANGES, read_samples
from loadtests.runner import Play, locust_command
from tests.conftest import ROOT, Stack

pytestmark = pytest.mark.cluster

SECONDS = 22
TABLES = 2
PLAY = Play(players=6, pace=10.0, drop_rate=6.0, time_scale=0.1)


def _stats(path: Path) -> dict[tuple[str, str], dict[str, str]]:
    with path.open(newline="") as f:
        return {(row["Type"], row["Name"]): row for row in csv.DictReader(f)}


def test_two_tables_of_locust_players(stack: Stack, tmp_path: Path) -> None:
    users = TABLES * PLAY.players
    cmd = locust_command(
        stack.a.url, tmp_path, PLAY, users=users, spawn_rate=users, seconds=SECONDS
    )
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=SECONDS + 90)
    log = (tmp_path / "locust.log").read_text() if (tmp_path / "locust.log").exists() else ""
    where = f"locust said:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}\n{log[-4000:]}"

    stats = _stats(tmp_path / "locust_stats.csv")
    failed = {k: r["Failure Count"] for k, r in stats.items() if int(r["Failure Count"])}
    assert not failed, f"failed exchanges {failed}\n{where}"
    assert done.returncode == 0, where
    missing = [n for n in EXCHANGES if int(stats.get(("WS", n), {}).get("Request Count", 0)) == 0]
    assert not missing, f"exchanges never measured: {missing}\n{where}"
    assert (tmp_path / "report.html").stat().st_size > 0

    # The raw samples hold what Locust counted (and what came in while its users stopped), and
    # every table was live at some point.
    samples = read_samples(tmp_path)
    swaps = [s for s in samples if s.kind == "WS" and s.name == "swap→ack"]
    assert len(swaps) >= int(stats[("WS", "swap→ack")]["Request Count"]) > 0
    live = [s.value for s in samples if s.kind.startswith("gauge") and s.name == "tables_live"]
    assert max(live, default=0) == TABLES
    # Each swap says since when its table plays (a capacity ramp judges the older tables
    # apart), and the generator measured its own loop's lag all along (a probe every 50 ms).
    assert all(s.since is not None and s.since <= s.t for s in swaps)
    lags = [s for s in samples if s.kind == "LAG" and s.name == "loop"]
    assert len(lags) >= SECONDS * 5, len(lags)
