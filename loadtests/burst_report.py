"""What `python -m loadtests.burst` found: the JSON result (failures by kind, arrival → seated
p50/p99, by kind of player) and the summary a person reads before it."""

from __future__ import annotations

from collections import Counter
from typing import Any

from loadtests.burst_plan import Outcome
from loadtests.figures import percentile

MAX_SAMPLES = 8  # failure messages kept for the summary


def report(
    outcomes: list[Outcome], window: float, seed: int, url: str, wall_s: float
) -> dict[str, Any]:
    seated = [o for o in outcomes if o.seated_s is not None]
    ms = [o.seated_s * 1000 for o in seated if o.seated_s is not None]
    failed = [o for o in outcomes if o.failure is not None]

    def times(kind: str) -> dict[str, float]:
        got = [o.seated_s * 1000 for o in seated if o.plan.kind == kind and o.seated_s is not None]
        return {
            "n": len(got),
            "p50_ms": round(percentile(got, 50), 1),
            "p99_ms": round(percentile(got, 99), 1),
        }

    return {
        "players": len(outcomes),
        "window_s": window,
        "seed": seed,
        "url": url,
        "seated": len(seated),
        "failed": len(failed),
        "failures": dict(Counter(o.failure.kind for o in failed if o.failure)),
        "refusals": dict(Counter(r for o in outcomes for r in o.refusals)),
        "arrival_to_seated_ms": {
            "p50": round(percentile(ms, 50), 1),
            "p99": round(percentile(ms, 99), 1),
            "max": round(max(ms, default=float("nan")), 1),
        },
        "by_kind": {k: times(k) for k in ("host", "friend", "quick")},
        "friends_waiting_for_link": sum(o.waited_for_link for o in outcomes),
        "script_late_ms_max": round(max((o.late_s for o in outcomes), default=0) * 1000, 1),
        "wall_s": round(wall_s, 1),
    }


def summary(result: dict[str, Any], outcomes: list[Outcome]) -> str:
    t = result["arrival_to_seated_ms"]
    lines = [
        f"burst: {result['players']} players in {result['window_s']} s (seed {result['seed']}) "
        f"at {result['url']}",
        f"  seated {result['seated']}/{result['players']}, failed {result['failed']}; "
        f"arrival → seated p50 {t['p50']} ms, p99 {t['p99']} ms, max {t['max']} ms",
    ]
    for kind, row in result["by_kind"].items():
        lines.append(f"  {kind:6} n={row['n']:4}  p50 {row['p50_ms']} ms  p99 {row['p99_ms']} ms")
    if result["refusals"]:
        lines.append(f"  documented refusals waited out: {result['refusals']}")
    for kind, n in sorted(result["failures"].items(), key=lambda kv: -kv[1]):
        lines.append(f"  FAILED {n} × {kind}")
    samples = [str(o.failure) for o in outcomes if o.failure is not None][:MAX_SAMPLES]
    lines += [f"    e.g. player: {s}" for s in samples]
    return "\n".join(lines)
