"""What `python -m loadtests.capacity` writes: capacity.json and capacity.md (one row per step),
the steps' plot, and the last line it prints."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from loadtests import runqueue
from loadtests.figures import write_json
from loadtests.node import NODE_GROUPS, machine
from loadtests.report import plot_all, read_node, read_samples, table

LIMITS = {"swap→ack": 50.0, "swap→seen": 80.0}


def capacity_line(results: list[dict[str, Any]], players: int) -> str:
    """`Capacity: N live tables of P`, and N against the node's ceiling as measured at the
    largest step that held (the cost per table is steadiest where most tables share it)."""
    held = [r for r in results if r["held"]]
    if not held:
        return f"Capacity: 0 live tables of {players}"
    best = max(held, key=lambda r: r["tables"])
    line = f"Capacity: {best['tables']} live tables of {players}"
    ceiling = best.get("ceiling")
    if ceiling:
        share = 100 * best["tables"] / ceiling
        line += f" — ceiling {ceiling:.0f} at 100 % CPU, capacity ÷ ceiling {share:.0f} %"
    return line


def write_report(
    out: Path,
    a: argparse.Namespace,
    results: list[dict[str, Any]],
    t_start: float,
    final: bool = False,
) -> None:
    write_json(
        out / "capacity.json",
        {"args": {k: str(v) for k, v in vars(a).items()}, "machine": machine(), "steps": results},
    )
    rows = []
    for r in results:
        if "exchanges" not in r:
            rows.append({"tables": r["tables"], "held": "no: " + "; ".join(r["why"])})
            continue
        ex = r["exchanges"]
        node = r["node"]
        ramp = r.get("ramp") or {}
        server = r["server_swap→ack"]
        rows.append(
            {
                "tables": r["tables"],
                "players": r["players"],
                "held": "yes" if r["held"] else "no",
                "ack p50/p95/p99": _ppp(ex["swap→ack"]),
                "ramp ack p99 (live)": ramp.get("swap→ack", {}).get("p99", math.nan),
                "ramp server ack p99": ramp.get("server_swap→ack", {}).get("p99", math.nan),
                "ramp lag p99": ramp.get("lag", {}).get("p99", math.nan),
                "ramp tables/s": ramp.get("new_tables_per_s"),
                "ramp actor wait/slice ms": ramp.get("runqueue", {}).get(
                    "wait_per_slice_ms", math.nan
                ),
                "ramp gateway wait/slice ms": ramp.get("gateway_runqueue", {}).get(
                    "wait_per_slice_ms", math.nan
                ),
                "actor wait/slice ms": r.get("runqueue", {}).get("wait_per_slice_ms", math.nan),
                "ramp PSI cpu/mem/io %": _psi(ramp.get("pressure", {})),
                "PSI cpu/mem/io %": _psi(r.get("pressure", {})),
                "server ack p50/p99": f"{server['p50']}/{server['p99']}",
                "lag p99": r["lag"]["p99"],
                "seen p50/p95/p99": _ppp(ex["swap→seen"]),
                "floor p99": ex["floor→ack"]["p99"],
                "emit p99": ex["emit→ack"]["p99"],
                "call→reveal p99": ex["call→reveal"]["p99"],
                "hello p99": ex["hello→welcome"]["p99"],
                "failures": f"{r['failures']} ({100 * r['failure_ratio']:.3f}%)",
                **{f"cpu {g}": round(node.get(g, {}).get("cpu", math.nan), 1) for g in NODE_GROUPS},
                "cpu locust": round(node.get("locust", {}).get("cpu", math.nan), 1),
                "USS/actor MiB": round(
                    node.get("table_actors", {}).get("uss_mb_actor", math.nan), 1
                ),
                "actor calls/s": r["actor_calls_per_s"],
                **(
                    {"tables per node": "/".join(map(str, r["tables_per_node"]))}
                    if r.get("tables_per_node")
                    else {}
                ),
                "load avg": r["load_avg"][0],
                "CPU/table": r["cpu_per_table"],
                "ceiling": r["ceiling"],
                "of ceiling %": (
                    round(100 * r["tables"] / r["ceiling"], 1) if r["ceiling"] else None
                ),
            }
        )
    cols = list(rows[-1].keys()) if rows and len(rows[-1]) > 2 else ["tables", "held"]
    for r in rows:
        for c in r:
            if c not in cols:
                cols.append(c)
    text = [
        "# Capacity of one node",
        "",
        f"Steps {a.steps}, hold {a.hold:g} s after {a.settle:g} s of settling, pace {a.pace:g}.",
        f"Bounds: p99 swap→ack ≤ {a.max_p99_ack:g} ms, p99 swap→seen ≤ {a.max_p99_seen:g} ms, "
        f"failures ≤ {100 * a.max_failures:g}%. CPU in % of one core (200 = the whole machine).",
        "`ramp ack p99 (live)`: the tables in play before a step's ramp, while its tables were "
        "created. `actor wait/slice`: the table actors' mean wait for a core before each turn "
        "on one (the kernel's schedstat), over the ramp and over the hold. `PSI`: the share of "
        "time some task waited for a core, for memory, for I/O (the kernel's pressure stall "
        "information). `server ack`: the "
        "gateway's own time for a swap (its histogram). `lag p99`: "
        "the load generator's event-loop lag. `ceiling`: the tables that would fill every core "
        "at the step's CPU per table above the idle node's.",
        "",
        table(rows, cols),
        "",
        capacity_line(results, a.players),
    ]
    (out / "capacity.md").write_text("\n".join(text) + "\n")
    if final:
        samples = read_samples(out)
        node = read_node(out / "node.csv")
        plot_all(out, samples, node, "capacity run")
        plot_steps(out, results)


def _psi(share: dict[str, float]) -> str:
    return "/".join(str(share.get(k, "–")) for k in runqueue.PRESSURES)


def _ppp(row: dict[str, Any]) -> str:
    return f"{row['p50']}/{row['p95']}/{row['p99']}"


def plot_steps(out: Path, results: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [r for r in results if "exchanges" in r]
    if not done:
        return
    xs = [r["tables"] for r in done]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    for name, limit in LIMITS.items():
        ax1.plot(xs, [r["exchanges"][name]["p99"] for r in done], "o-", label=f"p99 {name}")
        ax1.axhline(limit, ls=":", color="grey")
    ax1.set_xlabel("live tables")
    ax1.set_ylabel("ms")
    ax1.legend()
    ax1.grid(alpha=0.3)
    for g in (*NODE_GROUPS, "locust"):
        ax2.plot(xs, [r["node"].get(g, {}).get("cpu", math.nan) for r in done], "o-", label=g)
    ax2.axhline(200, ls="--", color="grey")
    ax2.set_xlabel("live tables")
    ax2.set_ylabel("CPU, % of one core")
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    fig.suptitle("capacity steps")
    fig.tight_layout()
    fig.savefig(out / "steps.png", dpi=90)
    plt.close(fig)
