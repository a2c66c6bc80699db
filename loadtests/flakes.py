"""The flake rate: a part of the suite run several times in a row, each test's outcomes counted.

    python -m loadtests.flakes                          # tests/cluster, 5 runs
    python -m loadtests.flakes --runs 3 tests/cluster/test_restore.py
    python -m loadtests.flakes --read results/flakes-20261201-132210   # a folder's reports again

Each run is a plain `python -m pytest` of the same paths, one after the other (never side by
side: on a small machine two runs would each slow the other's timers), with a JUnit XML report
in `--out`. Nothing is retried: a test that failed once counts as failed in that run. Prints a
line per run (with its slowest test), every test that failed at least once (with its runs and
the first line of its message), then one JSON line: runs, tests, failures, the flake rate (test
failures over test executions), the tests that failed in some runs and passed in others
(`flaky`), and those that failed in every run (`broken`). Exits 1 when any test failed.
"""

from __future__ import annotations

import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from loadtests import cli
from loadtests.figures import emit, write_json


@dataclass
class Run:
    index: int
    seconds: float
    exit_code: int
    passed: int = 0
    skipped: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # test id -> first line of its message
    slowest: tuple[str, float] = ("", 0.0)  # the test that took longest, and its seconds


def read_report(path: Path, run: Run) -> None:
    """Fill `run` from a JUnit XML report (pytest's `--junitxml`)."""
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        took = float(case.get("time", "0") or 0)
        if took > run.slowest[1]:
            run.slowest = (name, took)
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            message = (bad.get("message") or bad.text or "").strip().splitlines()
            run.failed[name] = message[0][:160] if message else "(no message)"
        elif case.find("skipped") is not None:
            run.skipped += 1
        else:
            run.passed += 1


def one_run(index: int, paths: list[str], out: Path, extra: list[str]) -> Run:
    report = out / f"run-{index}.xml"
    log = out / f"run-{index}.log"
    started = time.monotonic()
    with log.open("wb") as sink:
        code = subprocess.call(
            [sys.executable, "-m", "pytest", "-q", f"--junitxml={report}", *extra, *paths],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    run = Run(index, time.monotonic() - started, code)
    if report.exists():
        read_report(report, run)
    return run


def summary(runs: list[Run]) -> dict[str, object]:
    fails: dict[str, list[int]] = defaultdict(list)
    for run in runs:
        for name in run.failed:
            fails[name].append(run.index)
    executions = sum(r.passed + len(r.failed) for r in runs)
    failures = sum(len(r.failed) for r in runs)
    tests = max((r.passed + len(r.failed) for r in runs), default=0)
    return {
        "runs": len(runs),
        "tests": tests,
        "executions": executions,
        "failures": failures,
        "flake_rate": round(failures / executions, 5) if executions else None,
        "runs_green": sum(1 for r in runs if not r.failed and r.exit_code == 0),
        "flaky": sorted(n for n, at in fails.items() if len(at) < len(runs)),
        "broken": sorted(n for n, at in fails.items() if len(at) == len(runs)),
        "minutes": [round(r.seconds / 60, 1) for r in runs],
    }


def reread(folder: Path) -> int:
    """The summary of the runs whose reports are in `folder` (a measurement stopped early)."""
    runs = []
    for report in sorted(folder.glob("run-*.xml"), key=lambda p: int(p.stem.split("-")[1])):
        run = Run(int(report.stem.split("-")[1]), _seconds(report), 0)
        read_report(report, run)
        runs.append(run)
    for run in runs:
        print(
            f"run {run.index}: {run.passed} passed, {len(run.failed)} failed in "
            f"{run.seconds / 60:.1f} min; slowest {run.slowest[0]} ({run.slowest[1]:.0f} s)"
        )
        for name, message in run.failed.items():
            print(f"  FAILED {name}: {message}")
    result = summary(runs)
    emit(result)
    return 1 if result["failures"] else 0


def _seconds(report: Path) -> float:
    suite = ET.parse(report).getroot()
    if suite.tag != "testsuite":  # pytest wraps its one suite in <testsuites>
        found = suite.find("testsuite")
        suite = found if found is not None else suite
    return float(suite.get("time", "0") or 0)


def main() -> int:
    parser = cli.command("flakes", __doc__)
    parser.add_argument("paths", nargs="*", default=["tests/cluster"])
    parser.add_argument("--runs", type=int, default=5)
    cli.add_out(parser, "flakes")
    parser.add_argument("--pytest-arg", action="append", default=[], help="passed to pytest")
    parser.add_argument(
        "--read", type=Path, default=None, help="summarise the run-N.xml reports of a folder"
    )
    args = parser.parse_args()
    if args.read is not None:
        return reread(args.read)
    out = cli.out_dir(args.out, "flakes")
    runs: list[Run] = []
    for i in range(1, max(1, args.runs) + 1):
        run = one_run(i, args.paths, out, args.pytest_arg)
        runs.append(run)
        print(
            f"run {i}: {run.passed} passed, {len(run.failed)} failed, {run.skipped} skipped "
            f"in {run.seconds / 60:.1f} min (pytest exit {run.exit_code}); "
            f"slowest {run.slowest[0]} ({run.slowest[1]:.0f} s)",
            flush=True,
        )
        if run.exit_code not in (0, 1):  # 2-5: interrupted, internal error, usage, nothing
            print(f"  pytest could not run the tests: see {out}/run-{i}.log", flush=True)
    for run in runs:
        for name, message in run.failed.items():
            print(f"run {run.index} FAILED {name}: {message}")
    result = summary(runs)
    write_json(out / "flakes.json", result)
    emit(result)
    broken_run = any(r.exit_code not in (0, 1) for r in runs)
    return 1 if result["failures"] or broken_run else 0


if __name__ == "__main__":
    raise SystemExit(main())
