"""loadtests.evening's curve and its minutes (no stack): the players a Locust shape asks for
over an evening, and the per-minute figures judged against issue 48's goals."""

from __future__ import annotations

import pytest

from loadtests.evening_curve import Curve
from loadtests.evening_report import Gauges, judge, minutes
from loadtests.report import Sample


def test_the_curve_rises_from_a_few_to_the_peak_and_falls_back_in_whole_tables() -> None:
    curve = Curve.parse("10:4:160:8", seats=4)
    counts = [curve.players(t) for t in range(0, 14 * 60 + 1, 10)]
    assert counts[0] == 8
    assert counts[-1] == 8
    assert max(c or 0 for c in counts) == 160
    assert curve.players(10 * 60) == 160  # the top of the rise
    assert all(c is not None and c % 4 == 0 for c in counts)
    rise = [c or 0 for c in counts[: 10 * 6 + 1]]
    assert rise == sorted(rise)  # never falls while it rises
    assert curve.players(14 * 60 + 1) is None  # over: Locust stops
    for wrong in ("10:4:160", "0:4:160:8", "10:4:8:160", "a:b:c:d"):
        with pytest.raises(ValueError, match="QUATRO_EVENING"):
            Curve.parse(wrong)


def _seated(t: float, ms: float) -> Sample:
    return Sample(t, "WS", "arrival→seated", ms, False)


def test_each_minute_is_judged_on_its_own_figures() -> None:
    t0 = 1000.0
    samples = [_seated(t0 + i, 300.0) for i in range(50)]  # minute 1: quick seats
    samples += [_seated(t0 + 60 + i, 2500.0) for i in range(3)]  # minute 2: one slow p99
    samples += [Sample(t0 + 70, "WS", "swap→ack", 20.0, False)]
    samples += [Sample(t0 + 130, "WS", "swap→ack", 80.0, False)]  # minute 3: a slow swap
    samples += [Sample(t0 + 131, "REFUSED", "swap:stale", 3.0, True)]  # a game refusal
    gauges = [
        Gauges(t0 + 1, 4, 0, 10, 0),
        Gauges(t0 + 59, 4, 5, 15, 12),  # minute 1: 5 starts for 12 tables
        Gauges(t0 + 119, 6, 9, 16, 22),  # minute 2: 1 start for 10 tables
        Gauges(t0 + 179, 6, 9, 16, 22),
    ]
    rows = minutes(samples, gauges, t0, risen_at=t0 + 60)
    assert [r["minute"] for r in rows] == [1, 2, 3]
    assert rows[0]["seated_p99_ms"] == 300.0
    assert rows[0]["starts_per_table"] == 0.42
    assert rows[1]["seated_p99_ms"] == 2500.0
    assert rows[1]["starts_per_table"] == 0.1
    assert rows[2]["swap_ack_p99_ms"] == 80.0
    assert rows[2]["failures"] == 0
    assert not rows[0]["risen"]
    assert rows[1]["risen"]
    assert judge(rows) == [
        "minute 2: arrival → seated p99 2500.0 ms",
        "minute 3: swap → ack p99 80.0 ms",
    ]  # minute 1's starts are not judged: the curve had not risen
