"""tests/lanes.py: which lane a test runs in, and that xdist's scheduler is given lanes."""

from __future__ import annotations

import pytest

from tests.lanes import Lanes, LaneScheduling, lane_of


def test_the_cluster_lane_holds_the_cluster_and_kit_tests_but_the_launchers() -> None:
    assert lane_of("tests/cluster/test_r30_property.py::test_r30[1]") == "cluster"
    assert lane_of("tests/loadtests/test_soak.py::test_no_table_stuck[redis]") == "cluster"
    assert lane_of("tests/cluster/test_leftovers.py::test_x") == "pages"
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
