"""`loadtests.flakes` counts each test's outcomes from pytest's own JUnit reports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from loadtests.flakes import Run, read_report, reread, summary

SUITE = """
def test_passes():
    import time
    time.sleep(0.3)  # the run's slowest test, by far

def test_fails():
    assert 1 == 2, "one is not two"

def test_skipped():
    import pytest
    pytest.skip("not here")
"""


def run_of(tmp_path: Path, index: int) -> Run:
    """A real pytest run of a tiny suite, read back as `loadtests.flakes` reads its runs."""
    (tmp_path / "test_tiny.py").write_text(SUITE)
    report = tmp_path / f"run-{index}.xml"
    code = subprocess.call(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={report}",
            str(tmp_path / "test_tiny.py"),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    run = Run(index, 1.0, code)
    read_report(report, run)
    return run


def test_a_run_is_read_from_its_junit_report(tmp_path: Path) -> None:
    run = run_of(tmp_path, 1)
    assert run.exit_code == 1
    assert (run.passed, run.skipped) == (1, 1)
    [(name, message)] = run.failed.items()
    assert name.endswith("::test_fails")
    assert "one is not two" in message
    assert run.slowest[0].endswith("::test_passes")
    assert run.slowest[1] >= 0.3


def test_a_test_failing_in_some_runs_is_flaky_and_in_all_broken(tmp_path: Path) -> None:
    first, second = run_of(tmp_path, 1), run_of(tmp_path, 2)
    second.failed["x::test_once"] = "boom"
    got = summary([first, second])
    assert got["runs"] == 2
    assert got["failures"] == 3
    assert got["executions"] == 5
    assert got["broken"] == [next(iter(first.failed))]
    assert got["flaky"] == ["x::test_once"]
    assert got["runs_green"] == 0


def test_a_folder_of_reports_is_summarised_again(tmp_path: Path, capsys: Any) -> None:
    run_of(tmp_path, 1)
    run_of(tmp_path, 2)
    assert reread(tmp_path) == 1  # a test failed
    out = capsys.readouterr().out
    assert "run 2: 1 passed, 1 failed" in out
    assert "slowest " in out
    assert "test_passes" in out
    assert '"runs": 2' in out
    assert '"failures": 2' in out
