"""Ray's own autoscaler (v2, as KubeRay runs it) on the chart's settings, with real table actors
on a head, redis-server and workers of this test's own (loadtests/autoscale.py says how): tables
beyond the head's slots add a worker; a worker whose tables play on is kept through the idle
timeout and beyond; a scale-down through the chart's preStop drain moves its tables to a worker
added for them without losing anything of them; an idle worker is removed after the timeout.

The chart's idle timeout (300 s) would make this test take over 10 minutes. It runs with
CI_IDLE_S instead: the autoscaler applies the same rule whatever the value (a node idle longer
than `idle_timeout_s` is terminated, ray/autoscaler/v2/scheduler.py), so what is checked is that
rule, with the chart's slots; `python -m loadtests.autoscale` measures with the chart's own value.
The test runs in a child process, so that this one never becomes a driver of that cluster (the
rest of the suite's driver belongs to the session's stack)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import yaml

from loadtests.autoscale import (
    KEEP_PAST_IDLE_S,
    REMOVE_WITHIN_S,
    UP_WITHIN_S,
    VALUES,
    ChartScaling,
    autoscaling_config,
)
from tests.conftest import ROOT

CI_IDLE_S = 10.0
RUN_WITHIN_S = 240.0  # the whole scenario, start-up and teardown included (~50 s measured)


def test_the_autoscaler_reads_the_charts_settings() -> None:
    values = yaml.safe_load(VALUES.read_text())["ray"]
    chart = ChartScaling.read()
    assert chart.enabled is values["autoscaling"]["enabled"] is True
    config = autoscaling_config(chart, "127.0.0.1:1", CI_IDLE_S, 2)
    head, worker = (config["available_node_types"][t] for t in ("ray.head.default", "tables"))
    assert head["resources"]["table_slot"] == values["head"]["tableSlots"]
    assert worker["resources"]["table_slot"] == values["workers"]["tableSlots"]
    assert worker["resources"]["CPU"] == 0  # the chart's num-cpus "0": tables ask for none
    assert config["idle_timeout_minutes"] * 60 == CI_IDLE_S
    # CI_IDLE_S stands in for a longer timeout, never a shorter one.
    assert values["autoscaling"]["idleTimeoutSeconds"] >= CI_IDLE_S


def test_tables_scale_workers_up_and_down_without_losing_a_point() -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "loadtests.autoscale", "--idle-timeout", str(CI_IDLE_S)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_WITHIN_S,
        check=False,
    )
    took = time.monotonic() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    failure = (done.returncode, done.stdout[-2000:], done.stderr[-6000:])
    assert done.returncode == 0, failure
    assert lines, failure
    figures = json.loads(lines[-1])
    print(f"autoscale ({took:.0f} s):", lines[-1])

    assert figures["idle_timeout_s"] == CI_IDLE_S
    assert figures["worker_slots"] == ChartScaling.read().worker_slots
    assert 0 < figures["worker_up_s"] <= UP_WITHIN_S
    # Kept through the timeout and beyond, two tables answering a command every second.
    assert figures["kept_busy_s"] >= CI_IDLE_S + KEEP_PAST_IDLE_S - 1
    assert figures["commands_answered"] >= 2 * (CI_IDLE_S + KEEP_PAST_IDLE_S) * 0.8
    assert figures["tables_played_through"] == 2
    assert figures["drained_removed_s"] <= CI_IDLE_S + REMOVE_WITHIN_S
    assert CI_IDLE_S - 1 <= figures["idle_removed_s"] <= CI_IDLE_S + REMOVE_WITHIN_S
