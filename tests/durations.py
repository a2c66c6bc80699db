"""Where a run of the suite spent its time, file by file: read from pytest's own output.

    PYTEST_ARGS=--durations=0 make test > run.log 2>&1
    .venv/bin/python -m tests.durations run.log           # the 25 costliest files
    .venv/bin/python -m tests.durations run.log --top 0   # every file
    .venv/bin/python -m tests.durations run.log --folders # per folder (tests/cluster, ...)

pytest prints each test's set-up, call and tear-down (`--durations=0`: all of them); this adds
them up per file, so that the next speed-up starts from what costs most, not from a guess. A
session fixture's start is charged to the first test that asked for it.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"^(\d+(?:\.\d+)?)s (setup|call|teardown)\s+(\S+?)::")


def per_file(log: str, folders: bool = False) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    for line in log.splitlines():
        m = LINE.match(line)
        if m:
            name = m.group(3).rsplit("/", 1)[0] if folders else m.group(3)
            seconds[name] += float(m.group(1))
    return dict(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="pytest's output, run with --durations=0")
    parser.add_argument("--top", type=int, default=25, help="files shown (0: all)")
    parser.add_argument("--folders", action="store_true", help="add up per folder instead")
    args = parser.parse_args()
    seconds = per_file(args.log.read_text(encoding="utf-8", errors="replace"), args.folders)
    total = sum(seconds.values())
    ranked = sorted(seconds.items(), key=lambda kv: -kv[1])
    for name, s in ranked[: args.top or None]:
        print(f"{s:8.1f} s  {100 * s / total:5.1f} %  {name}")
    print(f"{total:8.1f} s  in {len(seconds)} {'folders' if args.folders else 'files'}")


if __name__ == "__main__":
    main()
