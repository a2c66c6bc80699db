"""Demand for tables adds worker pods: the rendered RayCluster read the way KubeRay's in-tree
autoscaler reads it (Ray's own `_derive_autoscaling_config_from_ray_cr`), then Ray's resource
demand scheduler asked what to launch for tables waiting for a `table_slot`.

No Kubernetes API server runs here, so the last step (the autoscaler patching the RayCluster's
replicas and KubeRay creating pods) is not exercised; everything up to that decision is Ray's
real code on the chart's real output."""

from __future__ import annotations

import json
import math
from functools import partial
from typing import Any

import pytest
from ray.autoscaler._private.kuberay.autoscaling_config import (
    _derive_autoscaling_config_from_ray_cr,
)
from ray.autoscaler._private.node_provider_availability_tracker import NodeAvailabilitySummary
from ray.autoscaler._private.resource_demand_scheduler import (
    _default_utilization_scorer,
    get_nodes_for,
)

from tests.helm.render import render_values

SLOTS = 60  # ray.workers.tableSlots by default


def _autoscaling(values: dict[str, Any]) -> dict[str, Any]:
    ray_cr = dict(render_values("quatro", json.dumps(values)).one("RayCluster"))
    ray_cr["metadata"] = {**ray_cr["metadata"], "namespace": "games"}
    return dict(_derive_autoscaling_config_from_ray_cr(ray_cr))


def _launch(config: dict[str, Any], existing: int, tables: int) -> tuple[dict[str, int], int]:
    """Workers Ray's scheduler adds for `tables` waiting table actors, and how many still wait."""
    types = config["available_node_types"]
    demand: list[Any] = [{"table_slot": 1.0}] * tables
    (group,) = [t for t in types if t != config["head_node_type"]]
    add, left = get_nodes_for(
        types,
        {group: existing},
        config["head_node_type"],
        config["max_workers"],
        demand,
        # As the autoscaler binds it: every node type available.
        partial(_default_utilization_scorer, node_availability_summary=NodeAvailabilitySummary({})),
    )
    return dict(add), len(left)


def test_workers_offer_table_slots_and_the_head_none() -> None:
    config = _autoscaling({})
    types = config["available_node_types"]
    head = types[config["head_node_type"]]
    assert head["resources"].get("table_slot", 0) == 0
    assert types["tables"]["resources"]["table_slot"] == SLOTS
    assert types["tables"]["resources"]["CPU"] == 0  # tables ask for a slot, never a CPU
    assert (types["tables"]["min_workers"], types["tables"]["max_workers"]) == (1, 10)
    assert config["idle_timeout_minutes"] == 5


@pytest.mark.parametrize("tables", [1, SLOTS, SLOTS + 1, 4 * SLOTS])
def test_waiting_tables_add_just_enough_workers(tables: int) -> None:
    add, waiting = _launch(_autoscaling({}), existing=0, tables=tables)
    assert add == {"tables": math.ceil(tables / SLOTS)}
    assert waiting == 0


def test_the_worker_cap_holds_and_the_rest_wait() -> None:
    config = _autoscaling({"ray": {"workers": {"maxReplicas": 3}}})
    # One full worker runs; 5 workers' worth of tables wait for a slot.
    add, waiting = _launch(config, existing=1, tables=5 * SLOTS)
    assert add == {"tables": 2}  # up to maxReplicas: 1 running + 2
    assert waiting == 3 * SLOTS
