"""The players' hooks into Locust: our options on its command line, the raw samples and the
soak's board set up at its init (not on the master in distributed mode: the workers play and
write, the master only aggregates), every request event into the samples, and a last flush as
it quits. Locust's figures as Prometheus text on its web UI (loadtests/locust_metrics.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from locust import events
from locust.env import Environment
from locust.runners import MasterRunner

from loadtests.locust_metrics import install as install_metrics_route
from loadtests.users.options import Options, add_options
from loadtests.users.samples import SAMPLES
from loadtests.users.soak_board import SOAK


def _on_init(environment: Environment, **_: Any) -> None:
    # Locust's figures as Prometheus text on the web UI (the master's, in distributed mode).
    install_metrics_route(environment)
    if isinstance(environment.runner, MasterRunner):
        return  # the workers play and write; the master only aggregates
    opts = Options.of(environment)
    SAMPLES.configure(opts.samples_dir)
    SOAK.configure(opts.soak_dir)


def _on_request(
    request_type: str,
    name: str,
    response_time: float,
    exception: BaseException | None = None,
    context: dict[str, Any] | None = None,
    **_: Any,
) -> None:
    since = (context or {}).get("live_since")
    SAMPLES.add(request_type, name, response_time or 0.0, exception is not None, since)


def _on_quit(environment: Environment, **_: Any) -> None:
    SAMPLES.flush()
    SOAK.flush()


def _listen(hook: Any, handler: Callable[..., None]) -> None:
    hook.add_listener(handler)  # locust's hooks are untyped


def install() -> None:
    """Once, from the locustfile."""
    _listen(events.init_command_line_parser, add_options)
    _listen(events.init, _on_init)
    _listen(events.request, _on_request)
    _listen(events.quitting, _on_quit)
