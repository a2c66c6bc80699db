"""Lighthouse (mobile, its defaults) on the home page and a table page of the real stack; prints
the four scores of each page (the median of the runs) and every audit that pulled one down.

    .venv/bin/python -m tests.browser.lighthouse            # starts its own stack
    .venv/bin/python -m tests.browser.lighthouse --runs 5
    QUATRO_STACK_URL=http://127.0.0.1:8000 .venv/bin/python -m tests.browser.lighthouse

Lighthouse is npm's `lighthouse`, pinned below and installed into .cache/tools/lighthouse on
first use (as the Makefile installs helm); it drives Debian's chromium with the suite's flags.
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


@dataclass(frozen=True)
class Run:
    scores: dict[str, int]
    # Audits scored below 0.9 that weigh in a category: id → (score, what it says).
    weak: dict[str, tuple[float, str]]


def install() -> Path:
    if BIN.exists():
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


def new_table(base: str) -> str:
    """A 4-seat table in its lobby, opened by a session of this script: its page is what a
    friend who got the invite link sees first."""

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


def lighthouse(url: str, out: Path) -> Run:
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
    return Run(scores, weak)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per page (the median is shown)")
    parser.add_argument("--keep", type=Path, help="write Lighthouse's JSON reports here")
    args = parser.parse_args()
    install()
    failed = False
    with own_stack() as base, tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        pages = {"home": f"{base}/", "table": f"{base}/t/{new_table(base)}"}
        print(f"Lighthouse {LIGHTHOUSE.split('@')[1]}, mobile, {args.runs} run(s) per page")
        print(f"{'page':<7}" + "".join(f"{c:>16}" for c in CATEGORIES))
        for name, url in pages.items():
            runs = [lighthouse(url, tmp / f"{name}-{i}.json") for i in range(args.runs)]
            median = {c: round(statistics.median(r.scores[c] for r in runs)) for c in CATEGORIES}
            print(f"{name:<7}" + "".join(f"{median[c]:>16}" for c in CATEGORIES), flush=True)
            failed |= any(v < GOAL for v in median.values())
            weak = {k: v for r in runs for k, v in r.weak.items()}
            for aid, (score, title) in sorted(weak.items()):
                print(f"         {score:.2f} {aid}: {title}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
