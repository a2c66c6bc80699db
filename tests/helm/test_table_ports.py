"""The table actors' TCP data plane (`ray.tablePorts`): gateways may reach Ray pods on exactly
that range, and every Ray container is told the same range in QUATRO_TABLE_PORTS."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helm.render import CHART, Rendered, helm, pod_labels, render, render_values, selects

DEFAULT = "20000-29999"


def _ray_policy(r: Rendered) -> dict[str, Any]:
    labels = pod_labels(r)
    for policy in r.of_kind("NetworkPolicy"):
        if selects(policy["spec"]["podSelector"], labels["ray-worker"]):
            return policy
    raise AssertionError("no NetworkPolicy selects the Ray workers")


def _admitted_ranges(r: Rendered, source: str, target: str) -> list[tuple[int, int]]:
    """The TCP ranges on which `source` pods may reach `target` pods, rule by rule ((0, 65535)
    for a rule that names no port)."""
    labels = pod_labels(r)
    found = []
    for policy in r.of_kind("NetworkPolicy"):
        if not selects(policy["spec"]["podSelector"], labels[target]):
            continue
        for rule in policy["spec"].get("ingress", []):
            peers = rule.get("from", [])
            if not any(
                "podSelector" in p
                and "namespaceSelector" not in p
                and selects(p["podSelector"], labels[source])
                for p in peers
            ):
                continue
            ports = rule.get("ports")
            if not ports:
                found.append((0, 65535))
                continue
            for port in ports:
                if port.get("protocol", "TCP") == "TCP" and isinstance(port["port"], int):
                    found.append((port["port"], port.get("endPort", port["port"])))
    return found


def _table_ports_env(r: Rendered) -> set[str | None]:
    ray = r.one("RayCluster")["spec"]
    templates = [ray["headGroupSpec"]["template"]] + [
        g["template"] for g in ray["workerGroupSpecs"]
    ]
    values = set()
    for template in templates:
        for container in template["spec"]["containers"]:
            env = {e["name"]: e.get("value") for e in container.get("env", [])}
            values.add(env.get("QUATRO_TABLE_PORTS"))
    return values


@pytest.mark.parametrize(
    ("ports", "first", "last"), [(None, 20000, 29999), ("21000-21999", 21000, 21999)]
)
def test_gateways_reach_ray_pods_on_the_table_port_range(
    ports: str | None, first: int, last: int
) -> None:
    r = (
        render("default")
        if ports is None
        else render_values("quatro", json.dumps({"ray": {"tablePorts": ports}}))
    )
    policy = _ray_policy(r)
    explicit = [
        rule
        for rule in policy["spec"]["ingress"]
        if rule.get("ports") == [{"protocol": "TCP", "port": first, "endPort": last}]
    ]
    assert len(explicit) == 1, policy["spec"]["ingress"]
    (peer,) = explicit[0]["from"]
    labels = pod_labels(r)
    # Only gateways of this release: not the Ray pods, Redis or the test pod, nor another release.
    assert selects(peer["podSelector"], labels["gateway"])
    for other in ("redis", "test", "ray-worker", "ray-head"):
        assert not selects(peer["podSelector"], labels[other]), other
    assert "namespaceSelector" not in peer
    for target in ("ray-worker", "ray-head"):
        assert any(lo <= first and last <= hi for lo, hi in _admitted_ranges(r, "gateway", target))
    assert _table_ports_env(r) == {f"{first}-{last}"}


def test_nothing_but_release_pods_reaches_the_table_ports() -> None:
    r = render("default")
    for rule in _ray_policy(r)["spec"]["ingress"]:
        for peer in rule["from"]:
            assert "namespaceSelector" not in peer
            assert "ipBlock" not in peer


@pytest.mark.parametrize("bad", ["20000", "29999-20000", "80-90", "20000-70000", "a-b"])
def test_a_wrong_table_port_range_fails_the_install(bad: str) -> None:
    out = helm("template", "quatro", str(CHART), "--set", f"ray.tablePorts={bad}", check=False)
    assert out.returncode != 0
    assert "tablePorts" in out.stderr


def test_the_default_is_documented_in_values() -> None:
    out = helm("show", "values", str(CHART))
    assert f'tablePorts: "{DEFAULT}"' in out.stdout
