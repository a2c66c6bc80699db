"""tests/lanes.py: which lane a test runs in, and that xdist's scheduler is given lanes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from subprocess import STDOUT

import pytest

from cluster.gateway_process import ROOT
from tests.lanes import Lanes, LaneScheduling, lane_of


def test_the_cluster_lane_holds_the_cluster_and_kit_tests_but_one_launcher_test() -> None:
    assert lane_of("tests/cluster/test_r30_property.py::test_r30[1]") == "cluster"
    assert lane_of("tests/loadtests/test_soak.py::test_no_table_stuck[redis]") == "cluster"
    assert lane_of("tests/cluster/test_leftovers.py::test_x") == "pages"
    assert lane_of("tests/cluster/test_autoscaling.py::test_x") == "cluster"
    assert lane_of("tests/browser/test_replay.py::test_x") == "pages"
    assert lane_of("tests/engine/test_wire.py::test_x") == "pages"
    assert lane_of("tests/store/test_failover.py::test_x") == "pages"


def test_the_scheduler_s_scopes_are_the_lanes_and_only_loadgroup_uses_it(
    pytestconfig: pytest.Config,
) -> None:
    # Built without its workers (xdist's __init__ wants them): only the scope is asked here.
    sched = LaneScheduling.__new__(LaneScheduling)
    assert sched._split_scope("tests/cluster/test_cells.py::test_x") == "cluster"
    assert sched._split_scope("tests/browser/test_watch.py::test_x[en-US]") == "pages"
    saved = pytestconfig.option.dist
    try:
        pytestconfig.option.dist = "load"
        assert Lanes().pytest_xdist_make_scheduler(pytestconfig, None) is None
    finally:
        pytestconfig.option.dist = saved


SUITE_CONFTEST = """
import os, signal, subprocess, threading, time
from pathlib import Path
import pytest
from tests.lanes import Lanes, on_sigterm

OUT = Path(os.environ["LANES_OUT"])

def pytest_configure(config):
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_sigterm)
    config.pluginmanager.register(Lanes(), "quatro-lanes")

@pytest.fixture(scope="session")
def child():
    proc = subprocess.Popen(["sleep", "300"])
    (OUT / f"up-{proc.pid}").touch()
    yield proc
    time.sleep(12)  # longer than xdist gives a worker it asked to end (10 s)
    proc.terminate()
    proc.wait()
    (OUT / f"down-{proc.pid}").touch()
"""
WAITING_TEST = """
import time

def test_waits(child):
    time.sleep(300)
"""


def test_a_stopped_run_waits_for_each_lane_to_stop_what_it_started(tmp_path: Path) -> None:
    """A SIGTERM to pytest reaches its workers, and pytest waits while they tear their session
    fixtures down (a stack's processes) instead of killing them 10 s later, as xdist would."""
    suite, out = tmp_path / "suite", tmp_path / "out"
    out.mkdir()
    (suite / "tests" / "cluster").mkdir(parents=True)
    (suite / "tests" / "browser").mkdir(parents=True)
    (suite / "conftest.py").write_text(SUITE_CONFTEST)
    (suite / "tests" / "cluster" / "test_a.py").write_text(WAITING_TEST)
    (suite / "tests" / "browser" / "test_b.py").write_text(WAITING_TEST)
    env = {**os.environ, "LANES_OUT": str(out), "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    argv += ["--import-mode=importlib", "-n", "2", "--dist", "loadgroup", "-o", "timeout=0"]
    proc = subprocess.Popen(argv, cwd=suite, env=env, stdout=subprocess.PIPE, stderr=STDOUT)
    try:
        deadline = time.monotonic() + 60
        while len(list(out.glob("up-*"))) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "the two lanes' fixtures did not start in 60 s"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=90)[0].decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
    up = sorted(p.name[3:] for p in out.glob("up-*"))
    down = sorted(p.name[5:] for p in out.glob("down-*"))
    assert len(up) == 2, output
    assert down == up, output


def test_a_run_in_lanes_says_when_each_lane_ended(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    for folder in ("cluster", "browser"):
        (suite / "tests" / folder).mkdir(parents=True)
        (suite / "tests" / folder / f"test_{folder}.py").write_text(
            "def test_one():\n    pass\n\ndef test_two():\n    pass\n"
        )
    (suite / "conftest.py").write_text(
        "from tests.lanes import Lanes\n\n"
        "def pytest_configure(config):\n"
        '    config.pluginmanager.register(Lanes(), "quatro-lanes")\n'
    )
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    argv += ["--import-mode=importlib", "-n", "2", "--dist", "loadgroup"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, cwd=suite, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    ended = [line for line in done.stdout.splitlines() if line.startswith("lane ")]
    assert sorted(line.split(":")[0] for line in ended) == ["lane cluster", "lane pages"], ended
    assert all(": 2 tests, its last ended " in line for line in ended), ended
