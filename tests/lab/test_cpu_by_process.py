"""lab.cpu_by_process: what it counts, on a command that burns a known share of a core."""

from __future__ import annotations

import sys

from lab.cpu_by_process import kind_of, measure


def test_ray_workers_are_told_from_the_raylet_whose_name_they_carry() -> None:
    worker = "ray::TableActor\0--raylet-name=/tmp/ray/sockets/raylet\0"
    assert kind_of(worker) == "table actor"
    raylet = "/x/ray/core/src/ray/raylet/raylet\0--python_worker_command=python default_worker.py"
    assert kind_of(raylet) == "raylet"
    assert kind_of("ray::DashboardAgent") == "Ray dashboard and agents"
    assert kind_of("python\0-m\0gateway") == "gateway"
    assert kind_of("sleep\0" + "1") == "other"


def test_a_busy_child_s_cpu_is_counted_and_what_ran_before_is_not() -> None:
    """With `tree`, since the suite's other lane starts processes of its own meanwhile (a
    machine-wide count would add them up too)."""
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass"
    # A grandchild: the shell forks the burner, so descendants are followed, not just the child.
    result = measure(["sh", "-c", f"{sys.executable} -c '{burn}'; true"], 0.05, tree=True)
    assert result["exit"] == 0
    by_kind = result["cpu_s_by_kind"]
    assert isinstance(by_kind, dict)
    # The grandchild burnt 0.6 s of CPU, plus its interpreter's start; pytest (running since
    # before, and the command's parent) is left out.
    assert 0.6 <= by_kind["other"] <= 3.0, by_kind
    assert set(by_kind) == {"other"}, by_kind
