"""loadtests.runqueue reads the kernel's per-thread scheduler account and sums it per process."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

from loadtests import runqueue


def fake_proc(root: Path, pid: int, threads: list[str]) -> None:
    for i, line in enumerate(threads):
        task = root / str(pid) / "task" / str(pid + i)
        task.mkdir(parents=True)
        (task / "schedstat").write_text(line + "\n")


def test_a_process_is_the_sum_of_its_threads_and_the_summary_divides_by_turns(
    tmp_path: Path,
) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    fake_proc(before, 10, ["1000000 2000000 4", "0 0 0"])
    fake_proc(before, 11, ["5 5 1"])
    fake_proc(after, 10, ["3000000 5000000 6", "1000000 1000000 2"])
    fake_proc(after, 11, ["5 5 1"])
    a = runqueue.snapshot([10, 11, 12], before)  # 12 never existed
    b = runqueue.snapshot([10, 11, 12], after)
    assert sorted(a) == [10, 11]
    assert a[10] == runqueue.Sched(1000000, 2000000, 4)
    s = runqueue.summary(a, b, seconds=2.0)
    # 4 ms more wait over 4 more turns, shared by 2 processes over 2 s.
    assert s == {"processes": 2.0, "wait_per_slice_ms": 1.0, "wait_per_s_ms": 1.0}


def test_no_turn_is_no_figure_rather_than_zero(tmp_path: Path) -> None:
    fake_proc(tmp_path, 10, ["1 1 1"])
    a = runqueue.snapshot([10], tmp_path)
    s = runqueue.summary(a, a, seconds=1.0)
    assert math.isnan(s["wait_per_slice_ms"])
    assert runqueue.summary({}, {}, 1.0)["processes"] == 0.0


def test_the_real_kernel_counts_a_busy_child() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sum(range(3_000_000)); sys.stdin.read()"],
        stdin=subprocess.PIPE,
    )
    try:
        first = runqueue.process(child.pid)
        assert first is not None
        assert first.slices >= 1
        mine = runqueue.process(os.getpid())
        assert mine is not None
        assert mine.run_ns > 0
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=30)
    assert runqueue.process(child.pid) is None  # reaped: gone


def test_pressure_is_read_as_the_kernel_writes_it_and_shared_over_the_time(tmp_path: Path) -> None:
    (tmp_path / "pressure").mkdir()
    (tmp_path / "pressure" / "cpu").write_text(
        "some avg10=1.00 avg60=0.50 avg300=0.10 total=1500000\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    )
    (tmp_path / "pressure" / "io").write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    before = runqueue.pressure(tmp_path)  # no memory file: that kind is left out
    assert before == {"cpu": 1500000, "io": 0}
    after = {"cpu": 2500000, "io": 200000}
    assert runqueue.pressure_share(before, after, 2.0) == {"cpu": 50.0, "io": 10.0}
    assert runqueue.pressure_share(before, after, 0.0) == {}
    assert runqueue.pressure(tmp_path / "nothing") == {}
