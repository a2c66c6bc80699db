"""lab.page_faults times a first touch of fresh memory apart from the loop's own cost."""

from __future__ import annotations

from lab.page_faults import measure


def test_a_first_touch_costs_more_than_touching_again() -> None:
    figures = measure(16)
    assert figures["mib"] == 16.0
    # A fault per page against none: the first pass is the slower one everywhere.
    assert figures["first_touch_ms"] > figures["again_ms"]
    assert figures["fault_us"] > 0
