"""tests.durations adds pytest's per-test times up per file and per folder, set-up and
tear-down included, and reads nothing else of the log as a time."""

from __future__ import annotations

from tests.durations import per_file

LOG = """\
tests/cluster/test_a.py ..                                  [ 50%]
============================= slowest durations ==============================
432.79s call     tests/cluster/test_a.py::test_one
20.06s setup    tests/browser/test_b.py::test_two[en-view0]
1.50s teardown tests/cluster/test_a.py::test_one
0.25s call     tests/cluster/test_c.py::test_three
(9 durations < 0.005s hidden.  Use -vv to show these durations.)
=== 3 passed in 454.60s (0:07:34) ===
"""


def test_times_add_up_per_file_and_per_folder() -> None:
    files = {name: round(s, 2) for name, s in per_file(LOG).items()}
    assert files == {
        "tests/cluster/test_a.py": 434.29,
        "tests/browser/test_b.py": 20.06,
        "tests/cluster/test_c.py": 0.25,
    }
    folders = per_file(LOG, folders=True)
    assert folders.keys() == {"tests/cluster", "tests/browser"}
    assert round(folders["tests/cluster"], 2) == 434.54
