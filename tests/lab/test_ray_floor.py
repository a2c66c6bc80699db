"""The pieces of `python -m lab.ray_floor` that need no cluster: the wake-up probe, the
per-thread reading of /proc, and the ceiling arithmetic."""

from __future__ import annotations

import os
import threading

import psutil
import pytest

from lab.ray_floor import ceiling, threads


def test_threads_reads_every_thread_of_a_process() -> None:
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, name="floor-probe")
    worker.start()
    try:
        seen = threads(os.getpid())
    finally:
        stop.set()
        worker.join()
    assert os.getpid() in seen  # the main thread's id is the process id
    assert worker.native_id in seen
    assert all(ticks >= 0 and switches >= 0 for _, ticks, switches in seen.values())


def test_ceiling_divides_the_cores_by_the_cost_of_a_table() -> None:
    cores = psutil.cpu_count() or 1
    # 1 % idle + 1 call/s × 10 ms = 2 % of a core per table, 5 % for Ray's own processes.
    assert ceiling(1.0, 10.0, 1.0, 5.0) == pytest.approx((100 * cores - 5.0) / 2.0)
    assert ceiling(1.0, 0.0, 1.0, 0.0) == pytest.approx(100 * cores)
