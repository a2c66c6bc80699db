"""Reading a results folder back: the raw exchange samples the Locust users wrote
(`samples-*.csv`), the node's process samples (`node.csv`), and the plots drawn from them."""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from loadtests.figures import percentile

EXCHANGES = (
    "hello→welcome",
    "swap→ack",
    "swap→seen",
    "floor→ack",
    "emit→ack",
    "call→reveal",
    "reconnect→welcome",
)
WINDOW_S = 10.0


@dataclass
class Sample:
    t: float
    kind: str  # WS, REFUSED, POST, GET, gauge
    name: str
    value: float
    failed: bool
    since: float | None = None  # when the sample's table went into play (epoch s)


def read_samples(folder: Path) -> list[Sample]:
    out: list[Sample] = []
    for path in sorted(folder.glob("samples-*.csv")):
        with path.open(encoding="utf-8") as f:
            for row in csv.reader(f):
                if len(row) not in (5, 6):
                    continue  # a line cut by a kill
                try:
                    since = float(row[5]) if len(row) == 6 and row[5] else None
                    out.append(
                        Sample(float(row[0]), row[1], row[2], float(row[3]), row[4] == "1", since)
                    )
                except ValueError:
                    continue
    out.sort(key=lambda s: s.t)
    return out


@dataclass
class Stat:
    name: str
    count: int = 0
    failures: int = 0
    values: list[float] = field(default_factory=list)

    def p(self, q: float) -> float:
        return percentile(self.values, q)

    def row(self) -> dict[str, object]:
        return {
            "name": self.name,
            "count": self.count,
            "failures": self.failures,
            "p50": round(self.p(50), 1),
            "p95": round(self.p(95), 1),
            "p99": round(self.p(99), 1),
            "max": round(max(self.values), 1) if self.values else math.nan,
        }


@dataclass
class Window:
    """Exchanges, refusals and failures seen between two instants."""

    t0: float
    t1: float
    stats: dict[str, Stat] = field(default_factory=dict)
    refusals: dict[str, int] = field(default_factory=dict)
    rest: dict[str, Stat] = field(default_factory=dict)
    lag: list[float] = field(default_factory=list)  # the load generator's loop lag (ms)

    @property
    def seconds(self) -> float:
        return max(1e-9, self.t1 - self.t0)

    @property
    def exchanges(self) -> int:
        return sum(s.count for s in self.stats.values())

    @property
    def failures(self) -> int:
        return sum(s.failures for s in self.stats.values()) + sum(
            s.failures for s in self.rest.values()
        )

    @property
    def failure_ratio(self) -> float:
        total = self.exchanges + sum(s.count for s in self.rest.values())
        return self.failures / total if total else 0.0

    def stat(self, name: str) -> Stat:
        return self.stats.get(name) or Stat(name)

    def lag_row(self) -> dict[str, float]:
        """The load generator's event-loop lag over the window (ms): how much of each latency
        above is the generator's own delay."""
        return {
            "p50": round(percentile(self.lag, 50), 1),
            "p99": round(percentile(self.lag, 99), 1),
            "max": round(max(self.lag), 1) if self.lag else math.nan,
        }


def window(
    samples: Iterable[Sample], t0: float, t1: float, live_before: float | None = None
) -> Window:
    """The samples of [t0, t1). With `live_before`, only the exchanges of tables that were
    already in play at that instant (the players seated before a ramp began)."""
    w = Window(t0, t1)
    for s in samples:
        if not t0 <= s.t < t1 or s.kind.startswith("gauge"):
            continue
        if s.kind == "LAG":
            w.lag.append(s.value)
            continue
        if live_before is not None and (s.since is None or s.since >= live_before):
            continue
        if s.kind == "REFUSED":
            w.refusals[s.name] = w.refusals.get(s.name, 0) + 1
            continue
        table = w.stats if s.kind == "WS" else w.rest
        st = table.setdefault(s.name, Stat(s.name))
        st.count += 1
        if s.failed:
            st.failures += 1
        else:
            st.values.append(s.value)
    return w


def gauges(
    samples: Iterable[Sample], name: str, step: float = WINDOW_S
) -> list[tuple[float, float]]:
    """A gauge summed over the Locust processes (rows of kind `gauge:<pid>`), one point per
    `step`: the last value each process reported in that step."""
    last: dict[int, dict[str, float]] = defaultdict(dict)
    for s in samples:
        if s.kind.startswith("gauge") and s.name == name:
            last[int(s.t // step)][s.kind] = s.value
    return [((b + 0.5) * step, sum(last[b].values())) for b in sorted(last)]


@dataclass
class NodeRow:
    t: float
    group: str
    cpu: float
    rss_mb: float
    procs: int
    uss_mb_actor: float | None


def read_node(path: Path) -> list[NodeRow]:
    rows: list[NodeRow] = []
    if not path.exists():
        return rows
    with path.open() as f:
        for r in csv.DictReader(f):
            uss = r.get("uss_mb_actor") or ""
            rows.append(
                NodeRow(
                    float(r["t"]),
                    r["group"],
                    float(r["cpu_pct"]),
                    float(r["rss_mb"]),
                    int(r["procs"]),
                    float(uss) if uss not in ("", "None") else None,
                )
            )
    return rows


def node_means(rows: Iterable[NodeRow], t0: float, t1: float) -> dict[str, dict[str, float]]:
    """Per group: mean CPU (% of one core), mean RSS, processes, and mean USS per table actor."""
    acc: dict[str, list[NodeRow]] = defaultdict(list)
    for r in rows:
        if t0 <= r.t < t1:
            acc[r.group].append(r)
    out: dict[str, dict[str, float]] = {}
    for group, rs in acc.items():
        uss = [r.uss_mb_actor for r in rs if r.uss_mb_actor is not None]
        out[group] = {
            "cpu": sum(r.cpu for r in rs) / len(rs),
            "rss_mb": sum(r.rss_mb for r in rs) / len(rs),
            "procs": max(r.procs for r in rs),
            "uss_mb_actor": sum(uss) / len(uss) if uss else math.nan,
        }
    return out


# -- plots ------------------------------------------------------------------------------------
def plot_all(folder: Path, samples: list[Sample], node: list[NodeRow], title: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not samples:
        return []
    t0 = samples[0].t
    written: list[Path] = []

    # Latency percentiles over time, one panel per exchange.
    names = [n for n in EXCHANGES if any(s.name == n and s.kind == "WS" for s in samples)]
    if names:
        cols = 2
        rows = math.ceil(len(names) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(12, 3.2 * rows), squeeze=False)
        buckets: dict[str, dict[int, list[float]]] = {n: defaultdict(list) for n in names}
        for s in samples:
            if s.kind == "WS" and s.name in buckets and not s.failed:
                buckets[s.name][int((s.t - t0) // WINDOW_S)].append(s.value)
        for ax, name in zip(axes.flat, names, strict=False):
            xs = sorted(buckets[name])
            for q, style in ((50, "-"), (95, "--"), (99, ":")):
                ax.plot(
                    [(x + 0.5) * WINDOW_S for x in xs],
                    [percentile(buckets[name][x], q) for x in xs],
                    style,
                    marker=".",
                    label=f"p{q}",
                )
            ax.set_title(name)
            ax.set_ylabel("ms")
            ax.set_xlabel("s since start")
            ax.grid(alpha=0.3)
            ax.legend(loc="upper left", fontsize=8)
        for ax in list(axes.flat)[len(names) :]:
            ax.axis("off")
        fig.suptitle(f"{title}: latency percentiles per {WINDOW_S:.0f} s")
        fig.tight_layout()
        written.append(_save(fig, folder / "latency.png"))
        plt.close(fig)

    # Active tables and players.
    fig, ax = plt.subplots(figsize=(10, 3.5))
    for name, label in (("tables_live", "live tables"), ("players_connected", "players connected")):
        pts = gauges(samples, name)
        ax.plot([p[0] - t0 for p in pts], [p[1] for p in pts], label=label)
    ax.set_xlabel("s since start")
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(f"{title}: activity")
    fig.tight_layout()
    written.append(_save(fig, folder / "activity.png"))
    plt.close(fig)

    # CPU and memory per process group.
    if node:
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
        groups = sorted({r.group for r in node})
        for g in groups:
            rs = [r for r in node if r.group == g]
            ax1.plot([r.t - t0 for r in rs], [r.cpu for r in rs], label=g)
            ax2.plot([r.t - t0 for r in rs], [r.rss_mb for r in rs], label=g)
        ax1.set_ylabel("CPU, % of one core")
        ax1.axhline(200, color="grey", lw=0.8, ls="--")
        ax2.set_ylabel("RSS, MiB")
        ax2.set_xlabel("s since start")
        for ax in (ax1, ax2):
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8, ncol=3)
        fig.suptitle(f"{title}: node CPU and memory by process group")
        fig.tight_layout()
        written.append(_save(fig, folder / "node.png"))
        plt.close(fig)
    return written


def _save(fig: object, path: Path) -> Path:
    fig.savefig(path, dpi=90)  # type: ignore[attr-defined]
    return path


def table(rows: Sequence[dict[str, object]], columns: Sequence[str]) -> str:
    """A Markdown table."""
    head = "| " + " | ".join(columns) + " |"
    sep = "| " + " | ".join("---" for _ in columns) + " |"
    body = ["| " + " | ".join(_fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join([head, sep, *body])


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return "–" if math.isnan(v) else f"{v:.1f}"
    return "–" if v is None else str(v)
