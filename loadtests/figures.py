"""How the kit states its figures: one percentile, and one way to print a result.

Percentiles are nearest-rank: the p-th percentile of n samples is the ⌈p·n/100⌉-th smallest, a
latency some player really saw, never an interpolation between two (a p99 of 100 samples is
the 99th, of 10 samples the 10th: the slowest). Every figure of the kit and of
docs/performance.md is computed this way.

A command prints what a person reads first, if anything, then its result as ONE line of JSON,
the last line of its output (`emit`); a results folder gets the same data indented
(`write_json`).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any


def percentile(values: Iterable[float], q: float) -> float:
    """The nearest-rank `q`-th percentile (0 < q ≤ 100) of `values`; NaN without values."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[rank - 1]


def emit(result: Mapping[str, Any] | list[Any], out: IO[str] | None = None) -> None:
    """The result as one line of JSON (non-ASCII kept as is: the exchanges are named `swap→ack`),
    flushed at once: a reader of a long run's output sees each line as it comes."""
    print(json.dumps(result, ensure_ascii=False, default=str), file=out or sys.stdout, flush=True)


def write_json(path: Path, data: Mapping[str, Any] | list[Any]) -> Path:
    """The result into a results folder, indented for a person reading the file."""
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    return path
