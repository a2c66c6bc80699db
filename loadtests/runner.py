"""Starting Locust as a child process (never imported here: gevent would monkey-patch the caller)
and reading the gateway's own Prometheus counters around a run."""

from __future__ import annotations

import math
import re
import signal
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

LOCUSTFILE = Path(__file__).with_name("locustfile.py")


def stop_on_signals() -> None:
    """Stop cleanly on SIGTERM, and on SIGINT even when started in the background (where the
    shell has SIGINT ignored): the `finally` blocks stop the stack and Locust by PID."""

    def _stop(sig: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)


@dataclass(frozen=True)
class Play:
    """How the simulated players play (the locustfile's own options)."""

    players: int = 6
    pace: float = 1.0
    match_rounds: int = 0
    drop_rate: float = 0.0
    time_scale: float = 1.0

    def args(self) -> list[str]:
        return [
            "--players",
            str(self.players),
            "--pace",
            str(self.pace),
            "--match-rounds",
            str(self.match_rounds),
            "--drop-rate",
            str(self.drop_rate),
            "--time-scale",
            str(self.time_scale),
        ]


def locust_command(
    url: str,
    out: Path,
    play: Play,
    *,
    users: int | None,
    spawn_rate: float,
    seconds: int | None,
    processes: int = 1,
) -> list[str]:
    """`locust --headless` writing CSV stats (with history), the HTML report and the raw samples
    into `out`. Without `users`/`seconds` a load shape drives it (QUATRO_LOAD_CONTROL)."""
    cmd = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--headless"]
    cmd += ["--host", url, "--only-summary", "--stop-timeout", "3"]
    cmd += ["--csv", str(out / "locust"), "--csv-full-history", "--html", str(out / "report.html")]
    cmd += [
        "--samples-dir",
        str(out),
        "--loglevel",
        "WARNING",
        "--logfile",
        str(out / "locust.log"),
    ]
    if users is not None:
        cmd += ["-u", str(users), "-r", str(spawn_rate)]
    if seconds is not None:
        cmd += ["-t", f"{seconds}s"]
    if processes > 1:
        cmd += ["--processes", str(processes)]
    return cmd + play.args()


_LINE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)$")


def scrape(url: str) -> dict[str, float]:
    """The gateway's counters, summed over labels except `type` (kept as `name[type]`) and a
    histogram bucket's `le` (`name[type]@le`)."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return {}
    return parse_metrics(text)


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus' text format, keyed as `scrape` says."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m is None or line.startswith("#"):
            continue
        name = m["name"]
        labels = m["labels"] or ""
        kind = re.search(r'type="([^"]*)"', labels)
        key = f"{name}[{kind.group(1)}]" if kind else name
        le = re.search(r'le="([^"]*)"', labels)
        if le is not None:
            key += f"@{le.group(1)}"  # a histogram's bucket: kept apart per bound
        try:
            out[key] = out.get(key, 0.0) + float(m["value"])
        except ValueError:
            continue
    return out


# Frames the gateway answers without calling a table actor.
NOT_ACTOR_CALLS = ("ping", "bad", "rl", "hello", "x")


def actor_commands(before: dict[str, float], after: dict[str, float]) -> float:
    """Client commands that became one table-actor call each (`act`), between two scrapes."""
    total = 0.0
    for key, value in after.items():
        if not key.startswith("quatro_command_seconds_count["):
            continue
        kind = key[len("quatro_command_seconds_count[") : -1]
        if kind in NOT_ACTOR_CALLS:
            continue
        total += value - before.get(key, 0.0)
    return total


def stream_batches(before: dict[str, float], after: dict[str, float]) -> float | None:
    key = "quatro_stream_batches_total"
    if key not in after:
        return None
    return after[key] - before.get(key, 0.0)


def server_quantile(
    before: dict[str, float], after: dict[str, float], metric: str, kind: str, q: float
) -> float:
    """The `q` quantile (0-1, in ms) of a gateway histogram between two scrapes, interpolated
    within its bucket as Prometheus' histogram_quantile does; NaN without observations. The
    server's side of an exchange: from the frame's arrival to its answer's departure."""
    prefix = f"{metric}_bucket[{kind}]@"
    bounds: list[tuple[float, float]] = []
    for key, value in after.items():
        if key.startswith(prefix):
            le = key[len(prefix) :]
            bound = math.inf if le == "+Inf" else float(le)
            bounds.append((bound, value - before.get(key, 0.0)))
    bounds.sort()
    if not bounds or bounds[-1][1] <= 0:
        return math.nan
    rank = q * bounds[-1][1]
    lower, below = 0.0, 0.0
    for bound, count in bounds:
        if count >= rank:
            if math.isinf(bound):
                return lower * 1000  # past the last finite bound: that bound, at least
            inside = count - below
            share = (rank - below) / inside if inside > 0 else 1.0
            return (lower + (bound - lower) * share) * 1000
        lower, below = bound, count
    return math.nan
