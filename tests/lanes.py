"""The suite's two lanes, one pytest-xdist worker each (tests/README.md, "Two lanes").

The cluster's tests keep both cores busy in their bursts (table actors starting, gateways, Ray),
while the browser's mostly wait for pages and timers: run side by side, each fills the other's
idle time. A lane is a whole worker's, in the session's order (tests/conftest.py), so that two
CPU-heavy tests never compete for the cores, a lane's destructive tests come after its others,
and a test always runs beside the same neighbours, which makes a failure reproducible.

xdist's own grouping (`--dist loadgroup` with `xdist_group` marks) rewrites node ids in a way
pytest 9 no longer reads, so `--dist loadgroup` here means these lanes: the scheduler below is
xdist's load-by-scope with a lane for a scope.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

# Besides tests/cluster, the kit's (the short soak's run among them). A cluster test that starts
# stacks of its own goes to the browser's lane, to even the lanes' ends (tests/README.md, "Two
# lanes": the figures each move came from).
CLUSTER_LANE = ("tests/cluster/", "tests/loadtests/")
PAGES_LANE = ("tests/cluster/test_leftovers.py",)


def lane_of(nodeid: str) -> str:
    if nodeid.startswith(PAGES_LANE) or not nodeid.startswith(CLUSTER_LANE):
        return "pages"
    return "cluster"


def in_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")  # xdist gives its workers this, and only them


def in_lane_worker(config: pytest.Config) -> bool:
    return in_worker(config) and bool(config.getvalue("loadgroup"))


# A worker's stack stops in seconds, up to a minute on a loaded machine (its Ray head, gateways,
# Chromium, a soak's stack).
WORKERS_STOP_S = 120.0
TERMINATED: list[int] = []  # the SIGTERM this process got, if it got one


def on_sigterm(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM (a CI's timeout, `kill`) ends the run as Ctrl-C does: pytest then tears down
    what the tests started instead of dying and leaving all of it running."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the teardown runs once, to its end
    TERMINATED.append(signum)
    raise KeyboardInterrupt(f"pytest got signal {signum}")


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found += [int(c) for c in task.read_text().split()]
        except OSError:
            continue
    return found


class LaneScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
    def _split_scope(self, nodeid: str) -> str:
        return lane_of(nodeid)


class Lanes:
    """Registered by tests/conftest.py when xdist runs (a plugin, since a conftest defining an
    xdist hook would fail to load without xdist). In the controller it also notes when each
    lane's last test ended, and says so after the run: the figure to balance the lanes by."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.tests: dict[str, int] = {}
        self.ended: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            lane = lane_of(report.nodeid)
            self.tests[lane] = self.tests.get(lane, 0) + 1
            self.ended[lane] = time.monotonic() - self.started

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        if in_worker(config) or config.getvalue("dist") != "loadgroup":
            return
        for lane in sorted(self.ended, key=self.ended.__getitem__):
            terminalreporter.write_line(
                f"lane {lane}: {self.tests[lane]} tests, its last ended {self.ended[lane]:.0f} s"
                " after the start"
            )

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") == "loadgroup":
            return LaneScheduling(config, log)
        return None

    @pytest.hookimpl(tryfirst=True)  # before xdist's, which kills workers 10 s after asking
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """An interrupted run waits for its workers to stop what their tests started. A Ctrl-C
        at the terminal reaches the workers too (they are in its process group); a SIGTERM to
        pytest (a CI's timeout, `kill`) only this process, which passes it on."""
        if in_worker(session.config) or exitstatus != pytest.ExitCode.INTERRUPTED:
            return
        workers = children(os.getpid())
        for pid in workers if TERMINATED else []:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + WORKERS_STOP_S
        while any(children(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
