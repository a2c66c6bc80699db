"""The kit's one percentile (nearest rank) on samples whose answer is known, and its one way of
printing a result."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from loadtests.figures import emit, percentile, write_json


def test_a_percentile_is_a_sample_someone_saw_by_nearest_rank() -> None:
    ten = [float(x) for x in range(1, 11)]
    assert percentile(ten, 50) == 5.0  # ⌈0.5·10⌉ = 5th (a floor index would say the 6th)
    assert percentile(ten, 90) == 9.0
    assert percentile(ten, 91) == 10.0
    assert percentile(ten, 99) == 10.0  # of ten samples, the slowest
    assert percentile(ten, 100) == 10.0
    assert percentile(ten, 1) == 1.0
    hundred = [float(x) for x in range(1, 101)]
    assert [percentile(hundred, q) for q in (50, 95, 99, 100)] == [50.0, 95.0, 99.0, 100.0]


def test_order_does_not_matter_and_nothing_is_interpolated() -> None:
    samples = [12.5, 3.0, 99.0, 7.25, 40.0]
    shuffled = samples[:]
    random.Random(7).shuffle(shuffled)
    for q in (1, 20, 21, 50, 80, 81, 99, 100):
        got = percentile(shuffled, q)
        assert got == percentile(samples, q)
        assert got in samples
    assert percentile(samples, 50) == 12.5  # ⌈2.5⌉ = 3rd of 3.0, 7.25, 12.5, 40.0, 99.0
    assert percentile(samples, 99) == 99.0


def test_no_samples_no_figure() -> None:
    assert math.isnan(percentile([], 99))
    assert percentile([4.0], 50) == percentile([4.0], 99) == 4.0


def test_a_result_is_one_json_line_last(capsys: pytest.CaptureFixture[str]) -> None:
    print("a summary for people")
    emit({"exchange": "swap→ack", "p99": 12.5, "when": Path("x")})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "a summary for people"
    assert len(lines) == 2
    assert "swap→ack" in lines[-1]  # as written, not escaped
    assert json.loads(lines[-1]) == {"exchange": "swap→ack", "p99": 12.5, "when": "x"}


def test_a_results_file_holds_the_same_data(tmp_path: Path) -> None:
    data = {"steps": [{"tables": 60, "held": True}], "name": "swap→seen"}
    path = write_json(tmp_path / "r.json", data)
    text = path.read_text()
    assert "\n  " in text
    assert "swap→seen" in text
    assert json.loads(text) == data
