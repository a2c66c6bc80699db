"""gateway.tablePoolFloor: the ready table actors kept ahead of a known peak (actors/pool_floor.py),
given to every gateway as QUATRO_POOL_FLOOR; a value the gateways could not read is refused at
install, by its path, rather than ignored by every gateway's log."""

from __future__ import annotations

import json

import pytest

from actors.pool_floor import parse_schedule
from tests.helm.render import CHART, helm, pod_specs, render, render_values, values_file


def gateway_env(values: dict[str, object]) -> dict[str, str | None]:
    for where, spec in pod_specs(render_values("quatro", json.dumps(values, sort_keys=True))):
        if where.startswith("Deployment/"):
            for container in spec["containers"]:
                if container["name"] == "gateway":
                    return {e["name"]: e.get("value") for e in container.get("env", [])}
    raise AssertionError("no gateway container")


def test_no_floor_by_default_and_a_schedule_reaches_every_gateway() -> None:
    assert gateway_env({})["QUATRO_POOL_FLOOR"] == ""
    schedule = "18:30-23:00=40, 12:00-13:30=10"
    env = gateway_env({"gateway": {"tablePoolFloor": schedule}})
    assert env["QUATRO_POOL_FLOOR"] == schedule
    assert len(parse_schedule(str(env["QUATRO_POOL_FLOOR"]))) == 2
    for _where, spec in pod_specs(render("default")):
        for container in spec["containers"]:
            if container["name"].startswith("ray-"):
                names = {e["name"] for e in container.get("env", [])}
                assert "QUATRO_POOL_FLOOR" not in names  # the gateways' setting alone


@pytest.mark.parametrize("typo", ["evening=40", "18:30-23:00", "40 actors", "18h-23h=4"])
def test_a_floor_the_gateways_could_not_read_is_refused_at_install(typo: str) -> None:
    path = values_file({"gateway": {"tablePoolFloor": typo}})
    try:
        result = helm("template", "quatro", str(CHART), "-f", str(path), check=False)
    finally:
        path.unlink()
    assert result.returncode != 0
    assert "/gateway/tablePoolFloor" in result.stderr
