"""Prometheus metrics of one gateway process (served at /metrics)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

PLAYERS = Gauge("quatro_players_connected", "WebSocket connections past hello")
TABLES = Gauge("quatro_tables_followed", "Tables this gateway follows (one subscription each)")
FRAMES_IN = Counter("quatro_frames_in_total", "Client frames received", ["type"])
FRAMES_OUT = Counter("quatro_frames_out_total", "Frames sent to clients")
ERRORS = Counter("quatro_errors_total", "Error answers and refusals, by code", ["code"])
COMMAND_SECONDS = Histogram(
    "quatro_command_seconds",
    "From a client frame to its answer, table actor call included",
    ["type"],
    # Up to 10 s: a node starting tables beside live ones answered past 2.5 s (issue 21), and a
    # quantile past the last finite bound can only say "at least that".
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
SLOW_CLOSES = Counter("quatro_slow_client_closes_total", "Clients closed for falling behind")
STREAM_BATCHES = Counter("quatro_stream_batches", "Event batches received from table actors")
RESUBSCRIBES = Counter("quatro_resubscribes_total", "Table subscriptions started again")
LINK_FAULTS = Counter(
    "quatro_link_faults_total",
    "Data-plane connections to table actors that broke, by why (eof, silent, refused)",
    ["why"],
)
WATCHERS = Gauge("quatro_watchers_connected", "Connections watching a table without a seat")
WATCH_VIEWS = Counter(
    "quatro_watch_views_total",
    "Public views asked of table actors for new watchers (shared by those arriving together)",
)
POOL_TARGET = Gauge(
    "quatro_pool_target",
    "Ready table actors this gateway keeps: its minimum plus the creations it expects (their"
    " rate and its trend), capped, or the operator's floor",
)
POOL_STARTING = Gauge("quatro_pool_starting", "New table actors this gateway is starting now")
POOL_WAITING = Gauge("quatro_pool_waiting", "Creations waiting for a ready table actor")
POOL_READY = Gauge(
    "quatro_pool_ready", "Ready table actors on the shared list at this gateway's last look"
)
POOL_PARKED = Gauge(
    "quatro_pool_parked",
    "Tables parked in this gateway's cell (no actor: actors/parking.py), at its last count",
)
POOL_FLOOR = Gauge(
    "quatro_pool_floor", "Ready table actors an operator asked for now (actors/pool_floor.py)"
)


class _PoolCounts(Collector):
    """Counters the pool keeps as plain numbers (its starts, the creations it served), read at
    each scrape: their ratio is the worker processes started per table created, which actors
    serving table after table (actors/reuse.py) keep low."""

    def __init__(self) -> None:
        self.read: Callable[[], tuple[int, int, int, int]] = lambda: (0, 0, 0, 0)

    def collect(self) -> Iterator[CounterMetricFamily]:
        started, served, woken, followed = self.read()
        yield CounterMetricFamily(
            "quatro_pool_starts", "Table actors this gateway started (worker processes)", started
        )
        yield CounterMetricFamily(
            "quatro_pool_served", "Table creations this gateway served from its pool", served
        )
        wakes = CounterMetricFamily(
            "quatro_pool_woken",
            "Parked tables this gateway woke with an actor of its pool (won; not creations), or "
            "found woken by another gateway as it tried (followed)",
            labels=["how"],
        )
        wakes.add_metric(["won"], woken)
        wakes.add_metric(["followed"], followed)
        yield wakes

    def describe(self) -> Iterator[CounterMetricFamily]:
        return self.collect()


POOL_COUNTS = _PoolCounts()
REGISTRY.register(POOL_COUNTS)
COLLECTORS: tuple[_PoolCounts, ...] = (POOL_COUNTS,)  # the collectors of our own, for the dashboard
