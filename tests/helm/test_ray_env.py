"""The environment every Ray process of the chart shares (ray.quietEnv)."""

from __future__ import annotations

import pytest

from actors.reuse import DEFAULT_TABLES
from cluster.procs import RAY_HEALTH_CHECK
from tests.helm.render import CASES, pod_specs, render

QUATRO_CONTAINERS = {"gateway", "ray-head", "ray-worker"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_ray_process_reports_usage_outside_the_cluster(case: str) -> None:
    seen = set()
    for _where, spec in pod_specs(render(case)):
        for container in spec["containers"]:
            if container["name"] in QUATRO_CONTAINERS:
                env = {e["name"]: e.get("value") for e in container.get("env", [])}
                assert env.get("RAY_USAGE_STATS_ENABLED") == "0", container["name"]
                seen.add(container["name"])
    assert seen == QUATRO_CONTAINERS


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_ray_nodes_keep_two_malloc_arenas_and_the_gateway_its_default(case: str) -> None:
    """ray.nodeEnv: the Ray nodes' environment, which their table actors inherit (0.8 MiB of
    private memory less per actor, docs/performance.md), as cluster.procs.RAY_NODE_ENV."""
    seen = {}
    for _where, spec in pod_specs(render(case)):
        for container in spec["containers"]:
            if container["name"] in QUATRO_CONTAINERS:
                env = {e["name"]: e.get("value") for e in container.get("env", [])}
                seen[container["name"]] = env.get("MALLOC_ARENA_MAX")
    assert seen == {"gateway": None, "ray-head": "2", "ray-worker": "2"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_ray_nodes_detect_a_lost_node_as_make_run_does(case: str) -> None:
    """ray.healthCheckEnv: the GCS on the head declares a lost node dead in seconds, with the
    settings measured for `make run` and the test stacks (cluster.procs.RAY_HEALTH_CHECK, issue
    37); the gateway runs no GCS and gets none of them."""
    seen = {}
    for _where, spec in pod_specs(render(case)):
        for container in spec["containers"]:
            if container["name"] in QUATRO_CONTAINERS:
                env = {e["name"]: e.get("value") for e in container.get("env", [])}
                seen[container["name"]] = {k: v for k, v in env.items() if "health_check" in k}
    assert seen == {"gateway": {}, "ray-head": RAY_HEALTH_CHECK, "ray-worker": RAY_HEALTH_CHECK}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_ray_nodes_say_how_many_tables_an_actor_serves(case: str) -> None:
    """ray.nodeEnv.QUATRO_ACTOR_TABLES: read by the table actors (actors/reuse.py), so set on
    the Ray nodes, whose workers inherit it; the gateway has no use for it."""
    seen = {}
    for _where, spec in pod_specs(render(case)):
        for container in spec["containers"]:
            if container["name"] in QUATRO_CONTAINERS:
                env = {e["name"]: e.get("value") for e in container.get("env", [])}
                seen[container["name"]] = env.get("QUATRO_ACTOR_TABLES")
    tables = str(DEFAULT_TABLES)  # the chart says what the actors would do unset
    assert seen == {"gateway": None, "ray-head": tables, "ray-worker": tables}
