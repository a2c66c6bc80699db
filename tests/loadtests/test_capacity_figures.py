"""The figures `loadtests.capacity` prints beside the hold: the ramp's tables already in play, the
gateway's own time from its histogram, the load generator's lag, and the ceiling."""

from __future__ import annotations

import math

import psutil
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from loadtests.capacity import ceiling
from loadtests.capacity_report import capacity_line
from loadtests.report import Sample, window
from loadtests.runner import parse_metrics, server_quantile

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1)


def histogram_text(observations: list[float]) -> str:
    """The exposition of a real prometheus_client histogram shaped like the gateway's."""
    registry = CollectorRegistry()
    h = Histogram("quatro_command_seconds", "x", ["type"], buckets=BUCKETS, registry=registry)
    for seconds in observations:
        h.labels("swap").observe(seconds)
        h.labels("ready").observe(1.0)  # another kind: never mixed in
    return generate_latest(registry).decode()


def test_the_servers_quantile_comes_from_the_bucket_deltas_between_two_scrapes() -> None:
    before = parse_metrics(histogram_text([0.2] * 50))  # slow swaps before the window
    # In the window: 98 swaps of 2 ms (bucket 1-2.5 ms), 2 of 40 ms (bucket 25-50 ms).
    after = parse_metrics(histogram_text([0.2] * 50 + [0.002] * 98 + [0.04] * 2))
    p50 = server_quantile(before, after, "quatro_command_seconds", "swap", 0.5)
    p99 = server_quantile(before, after, "quatro_command_seconds", "swap", 0.99)
    assert 1.0 < p50 <= 2.5
    assert 25.0 < p99 <= 50.0
    assert math.isnan(server_quantile(after, after, "quatro_command_seconds", "swap", 0.99))
    # The count the actor-call figure reads is still the plain counter.
    assert after["quatro_command_seconds_count[swap]"] == 150


def test_a_ramp_window_keeps_only_the_tables_in_play_before_it() -> None:
    ramp_at = 100.0
    samples = [
        Sample(101.0, "WS", "swap→ack", 5.0, False, since=50.0),  # live before the ramp
        Sample(102.0, "WS", "swap→ack", 900.0, False, since=101.5),  # a new table
        Sample(103.0, "WS", "swap→ack", 7.0, False, since=None),  # not yet in play
        Sample(103.5, "LAG", "loop", 12.0, False),
        Sample(103.6, "LAG", "loop", 2.0, False),
    ]
    w = window(samples, ramp_at, 110.0, live_before=ramp_at)
    assert w.stat("swap→ack").values == [5.0]
    assert sorted(w.lag) == [2.0, 12.0]
    assert w.failure_ratio == 0.0  # the lag probe is not a request
    assert window(samples, ramp_at, 110.0).stat("swap→ack").count == 3
    assert w.lag_row()["max"] == 12.0


def test_the_ceiling_is_what_fills_every_core_at_a_steps_cost_per_table() -> None:
    got = ceiling(cpu=110.0, fixed=10.0, tables=50)
    assert got is not None
    per_table, tables = got
    assert per_table == 2.0
    assert tables == (100.0 * (psutil.cpu_count() or 1) - 10.0) / 2.0
    assert ceiling(cpu=10.0, fixed=10.0, tables=50) is None
    results = [
        {"tables": 40, "held": True, "ceiling": 160.0},
        {"tables": 80, "held": True, "ceiling": 150.0},
        {"tables": 120, "held": False, "ceiling": 140.0},
    ]
    line = capacity_line(results, 6)
    assert line.startswith("Capacity: 80 live tables of 6")
    assert "ceiling 150" in line
    assert "53 %" in line
