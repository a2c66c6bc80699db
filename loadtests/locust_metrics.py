"""Locust's statistics as Prometheus text, served at /metrics by Locust's own web UI.

Locust keeps its figures in the master's memory and shows them in its web UI; nothing scrapes
them. `install` adds one route to that UI (through Locust's `init` event, from locustfile.py), so
the Prometheus that scrapes the gateways scrapes the load test too, and a run's requests,
failures and latencies sit on the same time axis as the gateway's own metrics.

Only the master's figures mean anything in distributed mode (it aggregates every worker's), so
the chart scrapes the master. Counters are Locust's running totals since the test's start: a new
run (or a reset in the UI) starts them again from 0, which Prometheus reads as a counter reset.

This module imports neither Locust nor gevent (Flask only inside `install`, in Locust's own
process): tests/helm imports it without monkey-patching the test process. The protocols below say
what is read of Locust's objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Quantiles of each request's response time, as Locust's own table reports them.
QUANTILES = (0.5, 0.95, 0.99)
LABELS = ("method", "name")


class Entry(Protocol):
    """What is read of a locust.stats.StatsEntry."""

    name: str
    method: str
    num_requests: int
    num_failures: int
    total_response_time: float
    max_response_time: float

    def get_response_time_percentile(self, percent: float) -> float: ...


class Source(Protocol):
    """What is read of a Locust runner (the master's, in distributed mode)."""

    def entries(self) -> Iterable[Entry]: ...
    def users(self) -> int: ...
    def workers(self) -> int: ...
    def state(self) -> str: ...


class RunnerSource:
    """A Source over a live runner: its RequestStats and its user and worker counts."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner

    def entries(self) -> Iterable[Entry]:
        return list(self.runner.stats.entries.values())

    def users(self) -> int:
        return int(self.runner.user_count)

    def workers(self) -> int:
        # A master counts its workers; a lone (local) runner has none.
        return int(getattr(self.runner, "worker_count", 0))

    def state(self) -> str:
        return str(self.runner.state)


class LocustCollector(Collector):
    """The families below, read from the source at each scrape (never cached: a scrape between
    two stats reports of the workers sees what the master has at that moment)."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily(
            "locust_requests", "Requests (Locust's samples) since the test started.", labels=LABELS
        )
        failures = CounterMetricFamily(
            "locust_failures", "Requests Locust counted as failures.", labels=LABELS
        )
        seconds = CounterMetricFamily(
            "locust_response_time_seconds",
            "Sum of the response times of the requests; with locust_requests_total, the mean.",
            labels=LABELS,
        )
        quantile = GaugeMetricFamily(
            "locust_response_time_quantile_seconds",
            "Response time at a quantile since the test started (Locust's percentiles).",
            labels=(*LABELS, "quantile"),
        )
        slowest = GaugeMetricFamily(
            "locust_response_time_max_seconds", "The slowest response.", labels=LABELS
        )
        for entry in self.source.entries():
            key = [entry.method or "", entry.name]
            requests.add_metric(key, entry.num_requests)
            failures.add_metric(key, entry.num_failures)
            seconds.add_metric(key, entry.total_response_time / 1000)
            slowest.add_metric(key, (entry.max_response_time or 0) / 1000)
            if entry.num_requests:
                for q in QUANTILES:
                    ms = entry.get_response_time_percentile(q)
                    quantile.add_metric([*key, f"{q:g}"], ms / 1000)
        yield from (requests, failures, seconds, quantile, slowest)
        yield GaugeMetricFamily("locust_users", "Users running now.", value=self.source.users())
        yield GaugeMetricFamily(
            "locust_workers", "Workers connected to the master.", value=self.source.workers()
        )
        state = GaugeMetricFamily(
            "locust_state", "1 for the runner's current state.", labels=("state",)
        )
        state.add_metric([self.source.state()], 1)
        yield state


def prometheus_text(source: Source) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LocustCollector(source))
    return generate_latest(registry)


def install(environment: Any, path: str = "/metrics") -> bool:
    """Adds the route to the environment's web UI, if it has one (workers and headless runs
    have none: nothing to scrape there). Returns whether it did."""
    web_ui = getattr(environment, "web_ui", None)
    if web_ui is None:
        return False
    from flask import Response  # Locust's web UI is Flask; only there is it needed

    def metrics() -> Response:
        return Response(prometheus_text(RunnerSource(environment.runner)), mimetype=CONTENT_TYPE)

    # Not behind the UI's login (when one is set): Prometheus presents no session, and these
    # are the same figures the UI's own /stats/requests serves. The NetworkPolicy decides who
    # reaches the port.
    web_ui.app.add_url_rule(path, "quatro_metrics", metrics)
    return True
