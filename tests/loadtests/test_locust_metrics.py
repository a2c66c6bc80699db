"""The /metrics route loadtests/locust_metrics.py adds to Locust's web UI: a real Locust
Environment and master runner, requests fired through Locust's own `request` event, and the
route called through the web UI's Flask app. The text must parse as Prometheus exposition and
carry the figures Locust's stats hold.

Locust runs in a child process: importing it monkey-patches the standard library with gevent,
which this pytest process must not get."""

from __future__ import annotations

import subprocess
import sys

from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import ROOT

CHILD = r"""
import sys
from locust import events
from locust.env import Environment
from loadtests.locust_metrics import install

env = Environment(events=events)
# A master, as the chart runs it: it aggregates and serves the figures; bound on loopback only.
runner = env.create_master_runner("127.0.0.1", 0)
web_ui = env.create_web_ui("127.0.0.1", 0)
assert install(env)
for ms in (10.0, 20.0, 30.0, 400.0):
    env.events.request.fire(
        request_type="WS", name="swap→ack", response_time=ms, response_length=0, exception=None
    )
env.events.request.fire(
    request_type="WS", name="hello→welcome", response_time=50.0, response_length=0,
    exception=RuntimeError("no answer"),
)
answer = web_ui.app.test_client().get("/metrics")
sys.stdout.write(answer.headers["Content-Type"] + "\n")
sys.stdout.write(answer.get_data(as_text=True))
runner.quit()
"""


def _scrape() -> tuple[str, dict[tuple[str, frozenset[tuple[str, str]]], float]]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    content_type, text = done.stdout.split("\n", 1)
    samples = {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    return content_type, samples


def test_locust_stats_are_served_as_prometheus_text() -> None:
    content_type, samples = _scrape()
    assert content_type.startswith("text/plain; version=0.0.4")
    swap = frozenset({("method", "WS"), ("name", "swap→ack")})
    hello = frozenset({("method", "WS"), ("name", "hello→welcome")})
    assert samples[("locust_requests_total", swap)] == 4
    assert samples[("locust_failures_total", swap)] == 0
    assert samples[("locust_requests_total", hello)] == 1
    assert samples[("locust_failures_total", hello)] == 1
    assert samples[("locust_response_time_seconds_total", swap)] == 0.46
    assert samples[("locust_response_time_max_seconds", swap)] == 0.4
    # Locust's percentile is the smallest time that covers the share: of 10, 20, 30, 400 ms, the
    # median is 30.
    assert samples[("locust_response_time_quantile_seconds", swap | {("quantile", "0.5")})] == 0.03
    assert samples[("locust_response_time_quantile_seconds", swap | {("quantile", "0.99")})] == 0.4
    assert samples[("locust_users", frozenset())] == 0
    assert samples[("locust_workers", frozenset())] == 0
    assert samples[("locust_state", frozenset({("state", "ready")}))] == 1
