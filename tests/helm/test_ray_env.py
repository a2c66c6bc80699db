"""The environment every Ray process of the chart shares (ray.quietEnv)."""

from __future__ import annotations

import pytest

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
