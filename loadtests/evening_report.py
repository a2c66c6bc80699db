"""The evening's figures minute by minute (loadtests/evening.py): from the players' raw samples
and the gateway's counters read every few seconds.

Per minute: arrival → seated p50/p99 (asking for a seat: a table, a friend's seat or Play now,
until its `welcome`), the live tables (what the gateway follows), the ready actors (the pool's
list at the gateway's last look), the actor starts per table created (worker processes the
pools started over the creations they served, that minute), the live tables' `swap→ack` p99,
the failures, and the tables parked at the minute's most (actors/parking.py: no actor holds
them, and neither the live tables nor the starts count them). Judged against the issue's goals:
seated p99 ≤ 2 s and swap→ack p99 ≤ 50 ms in every minute, and ≤ 0.2 starts per table created
in every minute once the curve has risen (the minutes that begin at its peak or after)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loadtests.figures import percentile
from loadtests.report import Sample

SEATED_P99_MS = 2000.0
SWAP_P99_MS = 50.0
STARTS_PER_TABLE = 0.2


@dataclass(frozen=True, slots=True)
class Gauges:
    """The gateway's figures at one look (epoch s)."""

    t: float
    ready: float
    tables: float
    starts: float  # counters since the gateway started
    served: float
    parked: float = 0.0  # tables parked (no actor; actors/parking.py), not among `tables`


def _nearest(values: list[float], q: float) -> float | None:
    """The kit's nearest-rank percentile (loadtests/figures.py); None for a minute without."""
    return percentile(values, q) if values else None


def minutes(
    samples: list[Sample], gauges: list[Gauges], began: float, risen_at: float
) -> list[dict[str, Any]]:
    """One row per whole minute since `began` (epoch s); `risen_at`: when the curve has risen."""
    end = max([s.t for s in samples] + [g.t for g in gauges] + [began])
    rows: list[dict[str, Any]] = []
    for m in range(int((end - began) // 60) + 1):
        lo, hi = began + 60 * m, began + 60 * (m + 1)
        here = [s for s in samples if lo <= s.t < hi]
        seated = [s.value for s in here if s.name == "arrival→seated" and not s.failed]
        swaps = [s.value for s in here if s.name == "swap→ack" and not s.failed]
        failed = sum(1 for s in here if s.failed and s.kind not in ("LOST", "REFUSED"))
        looks = [g for g in gauges if lo <= g.t < hi]
        before = [g for g in gauges if g.t < lo]
        first = before[-1] if before else (looks[0] if looks else None)
        last = looks[-1] if looks else None
        starts = served = 0.0
        if first is not None and last is not None:
            starts, served = last.starts - first.starts, last.served - first.served
        rows.append(
            {
                "minute": m + 1,
                "seated": len(seated),
                "seated_p50_ms": _r(_nearest(seated, 50)),
                "seated_p99_ms": _r(_nearest(seated, 99)),
                "live_tables": _r(max((g.tables for g in looks), default=None)),
                "ready_actors": _r(min((g.ready for g in looks), default=None)),
                "parked_tables": _r(max((g.parked for g in looks), default=None)),
                "tables_created": int(served),
                "starts_per_table": round(starts / served, 2) if served else None,
                "swaps": len(swaps),
                "swap_ack_p99_ms": _r(_nearest(swaps, 99)),
                "failures": failed,
                "risen": lo >= risen_at,
            }
        )
    return rows


def judge(rows: list[dict[str, Any]]) -> list[str]:
    """The goals missed, one line each ([] when every minute met them)."""
    missed: list[str] = []
    for row in rows:
        m = row["minute"]
        if row["seated_p99_ms"] is not None and row["seated_p99_ms"] > SEATED_P99_MS:
            missed.append(f"minute {m}: arrival → seated p99 {row['seated_p99_ms']} ms")
        if row["swap_ack_p99_ms"] is not None and row["swap_ack_p99_ms"] > SWAP_P99_MS:
            missed.append(f"minute {m}: swap → ack p99 {row['swap_ack_p99_ms']} ms")
        per = row["starts_per_table"]
        if row["risen"] and per is not None and per > STARTS_PER_TABLE:
            missed.append(f"minute {m}: {per} actor starts per table created")
        if row["failures"]:
            missed.append(f"minute {m}: {row['failures']} failures")
    return missed


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "min  seated  p50 ms   p99 ms  live  ready  created  starts/table  swap p99 ms  failed"
        "  parked"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"{r['minute']:3d}{'*' if r['risen'] else ' '} {r['seated']:6d}"
            f" {_f(r['seated_p50_ms'])}"
            f" {_f(r['seated_p99_ms'])} {_f(r['live_tables'], 5, 0)} {_f(r['ready_actors'], 6, 0)}"
            f" {r['tables_created']:8d} {_f(r['starts_per_table'], 13, 2)}"
            f" {_f(r['swap_ack_p99_ms'], 12)} {r['failures']:7d}"
            f" {_f(r.get('parked_tables'), 7, 0)}"
        )
    lines.append("(*: the curve has risen: the starts per table are judged from there)")
    return "\n".join(lines)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


def _f(x: float | None, width: int = 8, digits: int = 1) -> str:
    return f"{'-':>{width}}" if x is None else f"{x:{width}.{digits}f}"
