"""The short soak (issue 20): `python -m loadtests.soak` on a stack of its own — four 6-seat tables
of Locust players, two gateways, two Ray worker nodes — with every fault injected once, 30 s
apart: a table actor SIGKILLed, a gateway SIGKILLed (its players come back through the other),
the Ray node carrying the most tables lost, Redis restarted from its append-only file, a table
actor SIGSTOPped, a burst of creations, a reconnect storm. It must end with no point lost, no
stuck table, every fault recovered from, and no failed exchange, the node loss included: its
tables come back after Ray declares the node dead (2-3 s) and restarts them, within the 40 s a
command waits through a restart (gateway/table_link.py REQUEST_WAIT_S).

Then the same soak on a Redis Cluster (three primaries, a replica each, issue 35), where
`redis_primary_kill` takes the place of `redis_restart`: the primary serving a table in play
SIGKILLed, its replica promoted, play going on with every point.

Four to six minutes each on the 2-core machine, one after the other, most of it waiting for
faults and recoveries: they run in the background from the start of the session
(`background_run`, tests/background.py) while the other tests use the cores, and these tests,
ordered last, judge them.

The soak runs as a child process (its Locust child monkey-patches the standard library)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from loadtests.faults import CLUSTER_ONLY, FAULTS, OPT_IN, SINGLE_ONLY
from tests.background import Background

ARGS = ["--tables", "4", "--minutes", "9", "--fault-every", "30", "--once"]
LIMIT_S = 1800  # both soaks
STORES = {"one-redis": [], "redis-cluster": ["--redis-cluster"]}
# The soak takes 4-6 minutes here, past the project's 300 s per test: pytest-timeout counts the
# module fixture's wait in the first test's setup, so it must allow what the soak may take.
pytestmark = [
    pytest.mark.cluster,
    pytest.mark.slow,
    pytest.mark.background,
    pytest.mark.timeout(LIMIT_S + 60),
]


def background_run(out: Path) -> Background:
    """Both soaks, one after the other (each alone on its stack): the second runs whatever the
    first's outcome, and each writes its report to a folder of its own."""
    runs = [
        shlex.join(
            [sys.executable, "-m", "loadtests.soak", *ARGS, *extra, "--out", str(out / name)]
        )
        for name, extra in STORES.items()
    ]
    return Background(["sh", "-c", "; ".join(runs)], out, LIMIT_S)


@pytest.fixture(scope="module")
def soaks(background: Background) -> dict[str, dict[str, Any]]:
    rc, stdout, stderr = background.wait()
    lines = [x for x in stdout.splitlines() if x.startswith("{")]
    print("\n".join(lines))
    reports = {}
    for name in STORES:
        found = background.out / name / "soak.json"
        assert found.exists(), f"{name}: no report; the soaks said:\n{stderr[-6000:]}"
        report: dict[str, Any] = json.loads(found.read_text())
        report["stderr"] = stderr[-6000:]
        report["rc"] = rc
        report["gateway_warnings"] = gateway_warnings(background.out / name / "stack")
        reports[name] = report
    return reports


@pytest.fixture(params=list(STORES))
def soak(request: pytest.FixtureRequest, soaks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    report = soaks[request.param]
    report["store"] = request.param
    return report


def gateway_warnings(folder: Path, keep: int = 40) -> list[str]:
    """The gateways' last warnings and errors (what a refused creation or a failed command
    said), each line cut short: CI keeps a part of a failure's output, and the soak's folder
    is gone with the run."""
    found = []
    for path in sorted(folder.glob("gateway-*.log")):
        for line in path.read_text(errors="replace").splitlines():
            if "WARNING" in line or "ERROR" in line:
                found.append(f"{path.stem}: {line[:300]}")
    return found[-keep:]


def why(report: dict[str, Any]) -> str:
    """What a failed assertion prints: first what CI must keep (each fault and its details, the
    failures, the gateways' warnings), then the soak's own output."""
    keep = ("failure_list", "locust_failures", "regressions", "gone", "stuck")
    details = {k: report[k] for k in keep}
    faults = "\n".join(json.dumps(f) for f in report["line"]["faults"])
    warnings = "\n".join(report["gateway_warnings"])
    return (
        f"faults:\n{faults}\n{json.dumps(details)}\ngateways:\n{warnings}\n"
        f"{json.dumps(report['line'])}\n{report['stderr']}"
    )


def test_every_fault_was_injected_once_and_recovered_from(soak: dict[str, Any]) -> None:
    faults = soak["line"]["faults"]
    other = CLUSTER_ONLY if soak["store"] == "one-redis" else SINGLE_ONLY
    kinds = sorted(k for k in FAULTS if k not in other and k not in OPT_IN)
    assert sorted(f["kind"] for f in faults) == kinds, why(soak)
    assert all(f["recover_s"] is not None for f in faults), why(soak)
    by_kind = {f["kind"]: f for f in faults}
    # Each fault hit something: players on the killed gateway and in the storm, tables on the
    # lost node, every burst creation answered.
    assert by_kind["gateway_kill"]["players"] > 0, why(soak)
    assert by_kind["storm"]["players"] > 0, why(soak)
    assert by_kind["node_loss"]["tables"] > 0, why(soak)
    assert by_kind["burst"]["created"] == 4, why(soak)
    if soak["store"] == "redis-cluster":  # a primary serving a table in play, failed over
        assert by_kind["redis_primary_kill"]["promoted_s"] is not None, why(soak)
    # The killed gateway's players lost their sockets, and came back through the other.
    assert soak["line"]["lost_sockets_explained"] >= by_kind["gateway_kill"]["players"]


def test_no_exchange_fails(soak: dict[str, Any]) -> None:
    line = soak["line"]
    assert line["failures"] == 0, why(soak)
    assert sum(line["failures_during"].values()) == 0, why(soak)
    # Real matches were played and measured, or the zero above proves nothing.
    assert line["requests"]["WS swap→ack"]["n"] > 100, why(soak)
    assert line["requests"]["WS reconnect→welcome"]["n"] > 0, why(soak)
    assert line["p99_swap_ack_ms"] == line["p99_swap_ack_ms"], why(soak)  # not NaN


def test_no_point_lost(soak: dict[str, Any]) -> None:
    line = soak["line"]
    assert line["reveals_seen"] > 0, why(soak)
    assert line["points_lost"] == 0, why(soak)
    assert line["tables_gone"] == 0, why(soak)


def test_no_table_stuck(soak: dict[str, Any]) -> None:
    assert soak["line"]["tables_stuck"] == 0, why(soak)
