"""`loadtests.flakes` counts each test's outcomes from pytest's own JUnit reports."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two real pytest runs of a tiny suite, their JUnit reports in one folder, as
    `loadtests.flakes` leaves them: made once for the module (each run is a Python process
    importing pytest), read back by each test as `loadtests.flakes` reads its runs."""
    folder = tmp_path_factory.mktemp("flakes")
    (folder / "test_tiny.py").write_text(SUITE)
    # The tiny suite needs none of the venv's pytest plugins (hypothesis, locust, schemathesis,
    # xdist...): loading them was most of each run's seconds.
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    for index in (1, 2):
        code = subprocess.call(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--junitxml={folder / f'run-{index}.xml'}",
                str(folder / "test_tiny.py"),
            ],
            cwd=folder,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        (folder / f"exit-{index}").write_text(str(code))
    return folder


def run_of(folder: Path, index: int) -> Run:
    """Run `index` of `runs`, read afresh from its report."""
    run = Run(index, 1.0, int((folder / f"exit-{index}").read_text()))
    read_report(folder / f"run-{index}.xml", run)
    return run


def test_a_run_is_read_from_its_junit_report(runs: Path) -> None:
    run = run_of(runs, 1)
    assert run.exit_code == 1
    assert (run.passed, run.skipped) == (1, 1)
    [(name, message)] = run.failed.items()
    assert name.endswith("::test_fails")
    assert "one is not two" in message
    assert run.slowest[0].endswith("::test_passes")
    assert run.slowest[1] >= 0.3


def test_a_test_failing_in_some_runs_is_flaky_and_in_all_broken(runs: Path) -> None:
    first, second = run_of(runs, 1), run_of(runs, 2)
    second.failed["x::test_once"] = "boom"
    got = summary([first, second])
    assert got["runs"] == 2
    assert got["failures"] == 3
    assert got["executions"] == 5
    assert got["broken"] == [next(iter(first.failed))]
    assert got["flaky"] == ["x::test_once"]
    assert got["runs_green"] == 0


def test_a_folder_of_reports_is_summarised_again(runs: Path, capsys: Any) -> None:
    assert reread(runs) == 1  # a test failed
    out = capsys.readouterr().out
    assert "run 2: 1 passed, 1 failed" in out
    assert "slowest " in out
    assert "test_passes" in out
    assert '"runs": 2' in out
    assert '"failures": 2' in out
