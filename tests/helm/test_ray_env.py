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
