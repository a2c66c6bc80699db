"""How idle the cores were during a run, from `vmstat -n 10` logged beside it:

    vmstat -n 10 > vmstat.log &   # then the run; then stop vmstat
    .venv/bin/python -m tests.idle vmstat.log                  # the whole log
    .venv/bin/python -m tests.idle vmstat.log --from 2 --to 54  # minutes 2 to 54 only

Prints the mean idle share of the CPU over the window and per five minutes: what is left for
running more side by side (tests/README.md, "Where the time goes").
"""

from __future__ import annotations

import argparse
from pathlib import Path

BUCKET_MIN = 5


def idle_samples(log: str) -> list[int]:
    """The `id` column of each sample line (vmstat's header lines are skipped)."""
    rows = [line.split() for line in log.splitlines() if line.strip()]
    column = next(row for row in rows if row[:2] == ["r", "b"]).index("id")
    return [int(row[column]) for row in rows if row[0].isdigit()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--interval", type=float, default=10, help="vmstat's, in seconds")
    parser.add_argument("--from", dest="start", type=float, default=0, help="minute")
    parser.add_argument("--to", dest="end", type=float, default=float("inf"), help="minute")
    args = parser.parse_args()
    per_min = 60 / args.interval
    samples = idle_samples(args.log.read_text())
    first = int(args.start * per_min)
    window = samples[first : int(min(args.end * per_min, len(samples)))]
    assert window, "no sample in that window"
    step = int(BUCKET_MIN * per_min)
    for i in range(0, len(window), step):
        part = window[i : i + step]
        at = args.start + i / per_min
        print(f"{at:5.0f}-{at + len(part) / per_min:3.0f} min: idle {sum(part) / len(part):3.0f} %")
    print(f"mean idle {sum(window) / len(window):.1f} % over {len(window)} samples")


if __name__ == "__main__":
    main()
