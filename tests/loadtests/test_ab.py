"""The A/B runner's summary reads a finished capacity run as capacity wrote it."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest

from loadtests.ab import markdown, rows_of, setting, summarise


def test_a_setting_is_a_name_and_its_environment() -> None:
    assert setting("play0:QUATRO_PLAY_NICE=0,QUATRO_RAY_NICE=15") == (
        "play0",
        {"QUATRO_PLAY_NICE": "0", "QUATRO_RAY_NICE": "15"},
    )
    assert setting("ray15:QUATRO_PLAY_NICE=") == ("ray15", {"QUATRO_PLAY_NICE": ""})
    with pytest.raises(argparse.ArgumentTypeError, match="KEY=VALUE"):
        setting("x:NOPE")


def test_each_step_of_a_run_is_one_row(tmp_path: Path) -> None:
    step = {
        "tables": 80,
        "held": False,
        "why": ["p99 swap→ack 60.4 ms > 50"],
        "exchanges": {"swap→ack": {"p99": 60.4}},
        "server_swap→ack": {"p50": 4.0, "p99": 47.2},
        "lag": {"p50": 0.7, "p99": 15.8},
        "ramp": {
            "new_tables_per_s": 0.9,
            "swap→ack": {"p99": math.nan},
            "server_swap→ack": {"p50": 3.0, "p99": 41.0},
            "lag": {"p50": 1.0, "p99": 900.0},
            "runqueue": {"processes": 8.0, "wait_per_slice_ms": 2.5, "wait_per_s_ms": 300.0},
        },
        "runqueue": {"processes": 88.0, "wait_per_slice_ms": 0.4, "wait_per_s_ms": 20.0},
        "ceiling": 248.0,
    }
    (tmp_path / "capacity.json").write_text(json.dumps({"steps": [step]}))
    (row,) = rows_of("play0", 2, tmp_path)
    assert row["tables"] == 80
    assert row["held"] is False
    assert (row["ack p99"], row["server ack p99"], row["lag p99"]) == (60.4, 47.2, 15.8)
    assert row["ramp ack p99 (live)"] is None  # no live table during the first ramp
    assert row["of ceiling %"] == 32.3
    assert (row["ramp server ack p99"], row["ramp lag p99"]) == (41.0, 900.0)
    assert (row["ramp actor wait/slice ms"], row["actor wait/slice ms"]) == (2.5, 0.4)
    line = (
        "| play0 | 2 | 80 | False | 60.4 | 47.2 | 15.8 |  | 41.0 | 900.0 | 0.9 | 2.5 | 0.4 | 32.3 |"
    )
    assert line in markdown([row])
    (missing,) = rows_of("play0", 3, tmp_path / "nothing")
    assert missing["why"] == ["no result"]


def test_a_folder_of_runs_is_summarised_in_the_order_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, run, tables in (("a", 1, 10), ("b", 1, 20), ("a", 2, 30)):
        (tmp_path / f"{name}-{run}").mkdir()
        step = {"tables": tables, "held": True, "exchanges": {}, "ramp": {}}
        (tmp_path / f"{name}-{run}" / "capacity.json").write_text(json.dumps({"steps": [step]}))
    assert summarise(tmp_path, ["a", "b"]) == 0
    rows = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("| a") or line.startswith("| b")
    ]
    assert [r.split(" | ")[2] for r in rows] == ["10", "20", "30"]
