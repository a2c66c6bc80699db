"""Lighthouse (mobile) on the home page and a table page of the real stack; prints the four
scores of each page (the median of the runs), the host's CPU as Lighthouse measured it, and
every audit that pulled a score down.

    .venv/bin/python -m tests.browser.lighthouse                 # starts its own stack
    .venv/bin/python -m tests.browser.lighthouse --runs 5
    .venv/bin/python -m tests.browser.lighthouse --cpu auto      # calibrated, see below
    QUATRO_STACK_URL=http://127.0.0.1:8000 .venv/bin/python -m tests.browser.lighthouse

Lighthouse is npm's `lighthouse`, pinned below and installed into .cache/tools/lighthouse on
first use (as the Makefile installs helm); it drives Debian's chromium with the suite's flags.
The table page is a 4-seat table's lobby as a friend with the invite link first sees it.

Performance is the one category that depends on the machine: Lighthouse simulates a mid-range
phone by multiplying the CPU time it observes by 4, a factor meant for a desktop CPU (its
`benchmarkIndex` about 1000 or more). On a slower or busy host it warns that the score suffers;
`--cpu auto` then applies the multiplier its documentation gives for the measured index
(docs/throttling.md in Lighthouse's repository, "CPU throttling"). The figures printed say which
multiplier each run used.

The goal (issue 33): 95 or more in every category on both pages. Exit status 1 below it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.browser.conftest import CHROMIUM, CHROMIUM_FLAGS, ROOT
from tests.browser.own_stack import own_stack

# 12.x: Lighthouse 13 needs Node 22, Debian's is 20.
LIGHTHOUSE = "lighthouse@12.8.2"
PREFIX = ROOT / ".cache" / "tools" / "lighthouse"
BIN = PREFIX / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
GOAL = 95
DEFAULT_CPU = 4.0  # Lighthouse's own default for mobile


@dataclass(frozen=True)
class Run:
    scores: dict[str, int]
    benchmark_index: float
    cpu: float
    # Audits scored below 0.9 that weigh in a category: id → (score, what it says).
    weak: dict[str, tuple[float, str]]


def install() -> Path:
    installed = PREFIX / "node_modules" / "lighthouse" / "package.json"
    if BIN.exists() and json.loads(installed.read_text())["version"] == LIGHTHOUSE.split("@")[1]:
        return BIN
    if shutil.which("npm") is None:
        raise SystemExit("npm is missing: apt-get install npm")
    PREFIX.mkdir(parents=True, exist_ok=True)
    # A prefix of its own: npm prunes what its prefix's package.json does not name, and helm's
    # package lives in .cache/tools.
    subprocess.run(
        [
            "npm",
            "install",
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(PREFIX),
            LIGHTHOUSE,
        ],
        check=True,
    )
    return BIN


def cpu_multiplier(benchmark_index: float) -> float:
    """Lighthouse's recommended CPU slowdown for a host of this benchmark index, so that the
    simulated device stays a mid-range phone (its docs' calculator: 1x at 150, 2x at 800, 3x at
    1300, one more per 233 above)."""
    if benchmark_index >= 1300:
        return 3 + (benchmark_index - 1300) / 233
    if benchmark_index >= 800:
        return 2 + (benchmark_index - 800) / 500
    return max(1.0, 1 + (benchmark_index - 150) / 650)


def new_table(base: str) -> str:
    """A 4-seat table in its lobby, opened by a session of this script."""

    def post(path: str, body: dict[str, Any], token: str | None = None) -> Any:
        headers = {"content-type": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        req = urllib.request.Request(
            base + path, data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)

    token = post("/api/sessions", {"name": "Lighthouse"})["token"]
    return str(post("/api/tables", {"players": 4}, token)["code"])


def warm_up(base: str) -> None:
    """Ask once for every file of the client, compressed, as a server that has served a player
    before has them: the gateway compresses each on first demand, and Lighthouse's simulation
    takes the server's answer times it observes as they are."""
    try:
        with urllib.request.urlopen(f"{base}/sw.js", timeout=30) as r:
            first = r.read().decode().split("\n", 1)[0]
    except urllib.error.HTTPError:
        return  # a client from before the service worker: nothing compressed to warm
    listed = json.loads(first.removeprefix("const SHELL = ").removesuffix(";"))
    for entry in listed["files"]:
        for coding in ("br", "gzip"):
            req = urllib.request.Request(base + entry["url"], headers={"accept-encoding": coding})
            with urllib.request.urlopen(req, timeout=30) as r:
                r.read()


def lighthouse(url: str, out: Path, cpu: float) -> Run:
    env = {**os.environ, "CHROME_PATH": CHROMIUM}
    subprocess.run(
        [
            str(BIN),
            url,
            "--quiet",
            "--output=json",
            f"--output-path={out}",
            f"--only-categories={','.join(CATEGORIES)}",
            f"--chrome-flags={' '.join(CHROMIUM_FLAGS)}",
            f"--throttling.cpuSlowdownMultiplier={cpu:.2f}",
        ],
        check=True,
        env=env,
    )
    report = json.loads(out.read_text())
    scores = {c: round(100 * report["categories"][c]["score"]) for c in CATEGORIES}
    weighed = {
        ref["id"]
        for c in CATEGORIES
        for ref in report["categories"][c]["auditRefs"]
        if ref["weight"] > 0
    }
    weak = {
        aid: (a["score"], a["title"])
        for aid, a in report["audits"].items()
        if aid in weighed and a["score"] is not None and a["score"] < 0.9
    }
    return Run(scores, report["environment"]["benchmarkIndex"], cpu, weak)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per page (the median is shown)")
    parser.add_argument(
        "--cpu",
        default=str(DEFAULT_CPU),
        help="CPU slowdown multiplier, or 'auto' for Lighthouse's calibration (default 4)",
    )
    parser.add_argument("--keep", type=Path, help="write Lighthouse's JSON reports here")
    args = parser.parse_args()
    install()
    failed = False
    with own_stack() as base, tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        pages = {"home": f"{base}/", "table": f"{base}/t/{new_table(base)}"}
        warm_up(base)
        cpu = DEFAULT_CPU if args.cpu == "auto" else float(args.cpu)
        if args.cpu == "auto":
            probe = lighthouse(pages["home"], tmp / "calibration.json", DEFAULT_CPU)
            cpu = cpu_multiplier(probe.benchmark_index)
            print(f"calibration: benchmarkIndex {probe.benchmark_index:.0f} → CPU x{cpu:.2f}")
        print(
            f"Lighthouse {LIGHTHOUSE.split('@')[1]}, mobile, CPU x{cpu:.2f}, median of {args.runs}"
        )
        print(f"{'page':<7}" + "".join(f"{c:>16}" for c in CATEGORIES) + "  benchmarkIndex")
        for name, url in pages.items():
            runs = [lighthouse(url, tmp / f"{name}-{i}.json", cpu) for i in range(args.runs)]
            median = {c: round(statistics.median(r.scores[c] for r in runs)) for c in CATEGORIES}
            indexes = "/".join(f"{r.benchmark_index:.0f}" for r in runs)
            line = f"{name:<7}" + "".join(f"{median[c]:>16}" for c in CATEGORIES)
            print(f"{line}  {indexes}", flush=True)
            print(
                "         each run's performance: "
                + ", ".join(str(r.scores["performance"]) for r in runs)
            )
            failed |= any(v < GOAL for v in median.values())
            weak = {k: v for r in runs for k, v in r.weak.items()}
            for aid, (score, title) in sorted(weak.items()):
                print(f"         {score:.2f} {aid}: {title}")
        print(f"load average at the end: {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
