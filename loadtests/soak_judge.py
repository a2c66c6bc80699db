"""The soak's verdict, from what the players recorded: requests and failures by kind, sockets
lost that no fault explains, points lost, and p99 `swap→ack` outside the fault windows."""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadtests.faults import Fault
from loadtests.figures import percentile
from loadtests.report import Sample

# A fault's window: from its injection to its recovery, and this long after (what the players
# saw of it may still be in flight: a frame, a welcome).
AFTERMATH_S = 2.0


def in_window(s: Sample, faults: Iterable[Fault], after: float = AFTERMATH_S) -> Fault | None:
    """The fault whose window the exchange overlaps, from its sending (`t` is when it was
    answered or given up on; `value` its duration in ms) to its end."""
    sent = s.t - s.value / 1000
    for f in faults:
        if sent <= f.end + after and s.t >= f.start:
            return f
    return None


def requests(samples: list[Sample], faults: list[Fault]) -> dict[str, Any]:
    """Every exchange by kind (`WS swap→ack`, `POST POST /api/tables`…) with its failures;
    the game's refusals apart; LOST sockets are failures unless a gateway kill explains them."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    refusals: dict[str, int] = defaultdict(int)
    lost_explained = 0
    failures: list[dict[str, Any]] = []
    killed = [f for f in faults if f.kind == "gateway_kill"]
    for s in samples:
        if s.kind.startswith("gauge") or s.kind == "LAG":
            continue  # the load generator's own gauges and loop lag: no request
        if s.kind == "REFUSED":
            refusals[s.name] += 1
            continue
        key = f"{s.kind} {s.name}"
        row = counts[key]
        row[0] += 1
        failed = s.failed
        if s.kind == "LOST":
            port = s.name.rsplit("@", 1)[-1]
            cause = next(
                (f for f in killed if f.target.endswith(f":{port}") and f.start <= s.t <= f.end),
                None,
            )
            if cause is not None:
                lost_explained += 1
            failed = cause is None
        if failed:
            row[1] += 1
            during = in_window(s, faults)
            failures.append({"t": s.t, "what": key, "during": during.kind if during else None})
    by_fault: dict[str, int] = defaultdict(int)
    for f in failures:
        by_fault[f["during"] or "none"] += 1
    return {
        "requests": {k: {"n": v[0], "failed": v[1]} for k, v in sorted(counts.items())},
        "refusals": dict(sorted(refusals.items())),
        "failures": len(failures),
        "failures_during": dict(sorted(by_fault.items())),
        "lost_sockets_explained": lost_explained,
        "failure_list": failures,
    }


def p99_outside(samples: list[Sample], faults: list[Fault], name: str = "swap→ack") -> float:
    values = [
        s.value
        for s in samples
        if s.kind == "WS" and s.name == name and not s.failed and in_window(s, faults) is None
    ]
    return round(percentile(values, 99), 1) if values else float("nan")


STEPS = ("dead", "answering", "failed", "promoted", "written", "saved", "serves", "moved")


def recovery(faults: list[Fault]) -> dict[str, dict[str, Any]]:
    """Each kind of fault's time to recover, in seconds: how many, p50, p99, max (the nearest
    rank, so the p99 of fewer than 100 is the slowest), and how many never recovered; for a node
    loss, when its node was declared dead (`dead_p50_s`, `dead_p99_s`) and when its table actors
    answered again (`answering_…`); for a lost Redis primary, each of its phases
    (loadtests/failover_watch.py: `failed_…`, `promoted_…`, `written_…`, `saved_…`,
    `serves_…`, and the table's own pace, `moved_…`)."""
    by_kind: dict[str, list[Fault]] = defaultdict(list)
    for f in faults:
        by_kind[f.kind].append(f)
    out: dict[str, dict[str, Any]] = {}
    for kind, these in sorted(by_kind.items()):
        s = [f.recover_s for f in these if f.recover_s is not None]
        out[kind] = {
            "n": len(these),
            "p50_s": round(percentile(s, 50), 2) if s else None,
            "p99_s": round(percentile(s, 99), 2) if s else None,
            "max_s": round(max(s), 2) if s else None,
            "not_recovered": len(these) - len(s),
        }
        # A node loss's steps: the node declared dead, then its actors answering again; a lost
        # primary's phases.
        for step in STEPS:
            got = [f.detail[f"{step}_s"] for f in these if f.detail.get(f"{step}_s") is not None]
            if got:
                out[kind] |= {
                    f"{step}_p50_s": round(percentile(got, 50), 2),
                    f"{step}_p99_s": round(percentile(got, 99), 2),
                }
    return out


@dataclass
class Points:
    lost: int = 0
    regressions: list[dict[str, Any]] = field(default_factory=list)
    tables: int = 0
    reveals: int = 0
    gone: list[str] = field(default_factory=list)


def points_lost(ledger: list[dict[str, Any]], final: dict[str, dict[str, Any] | None]) -> Points:
    """Per table, in the order of the table's own clock (`at`): within one match (a match ends
    with `over`, or a welcome in phase over; the next starts at `signing` of round 1), the
    scores shown to any player never go down, and the table's final scores (`final`, from
    GET /api/tables/{code} once the players have stopped) are at least the last ones shown."""
    out = Points()
    by_table: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in ledger:
        by_table[e["code"]].append(e)
    out.tables = len(by_table)
    for code, events in by_table.items():
        events.sort(key=lambda e: (e["at"], e["t"]))
        best: list[int] | None = None
        for e in [*events, {"kind": "final", "code": code}]:
            kind = e["kind"]
            if kind == "signing" and e.get("round") == 1:
                best = None
                continue
            if kind == "final":
                summary = final.get(code)
                if summary is None:
                    if events and not any(x["kind"] == "over" for x in events[-3:]):
                        out.gone.append(code)
                    continue
                scores = summary.get("scores") if summary.get("phase") != "lobby" else None
            else:
                scores = e.get("scores")
            if kind == "reveal":
                out.reveals += 1
            if scores is None:
                continue
            now = [int(x) for x in scores]
            if best is not None and len(best) == len(now):
                lost = sum(max(0, b - n) for b, n in zip(best, now, strict=True))
                if lost:
                    out.lost += lost
                    out.regressions.append(
                        {"code": code, "at": e.get("at"), "kind": kind, "had": best, "now": now}
                    )
                    best = now
                else:
                    best = [max(b, n) for b, n in zip(best, now, strict=True)]
            else:
                best = now
            if kind == "over" or (kind == "welcome" and e.get("phase") == "over"):
                best = None
    return out


def locust_failures(folder: Path) -> list[dict[str, str]]:
    """Locust's own list of failure messages (locust_failures.csv), for the report."""
    path = folder / "locust_failures.csv"
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return [
            {"name": r["Name"], "error": r["Error"][:300], "n": r["Occurrences"]}
            for r in csv.DictReader(f)
        ]
