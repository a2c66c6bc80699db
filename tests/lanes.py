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

from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

# Besides tests/cluster, the kit's (the short soak's run among them); the launchers started
# whole (test_leftovers) go beside the browser's, which would otherwise end 6 minutes before
# the cluster's (a clean run's per-test durations, added up by lane: tests/README.md).
CLUSTER_LANE = ("tests/cluster/", "tests/loadtests/")
PAGES_LANE = ("tests/cluster/test_leftovers.py",)


def lane_of(nodeid: str) -> str:
    if nodeid.startswith(PAGES_LANE) or not nodeid.startswith(CLUSTER_LANE):
        return "pages"
    return "cluster"


class LaneScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
    def _split_scope(self, nodeid: str) -> str:
        return lane_of(nodeid)


class Lanes:
    """Registered by tests/conftest.py when xdist runs (a plugin, since a conftest defining an
    xdist hook would fail to load without xdist)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") == "loadgroup":
            return LaneScheduling(config, log)
        return None
