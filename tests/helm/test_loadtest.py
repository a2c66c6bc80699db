"""The chart's distributed load test (loadtest.enabled): off by default; when on, a Locust master
Job and a Job of workers running the image's locustfile against the gateway Service, results on
the master's volume, its figures scraped from our /metrics route, and NetworkPolicies that let
only the workers reach the master and the gateways. Rendering and the offline validation of every
object are in test_rendered.py (the `loadtest` case of render.CASES); what is particular to the
load test is here."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

from loadtests import locust_metrics
from loadtests.evening_curve import Curve
from tests.helm.render import (
    CASES,
    CHART,
    LONGEST_RELEASE,
    REPO,
    Rendered,
    helm,
    pod_labels,
    render,
    render_values,
    selects,
    values_file,
)

MASTER_PORT = 5557


def _jobs(r: Rendered) -> dict[str, dict[str, Any]]:
    """The load test's Jobs by component."""
    return {
        j["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]: j
        for j in r.of_kind("Job")
    }


def _container(job: dict[str, Any]) -> dict[str, Any]:
    (container,) = job["spec"]["template"]["spec"]["containers"]
    found: dict[str, Any] = container
    return found


def _args(job: dict[str, Any]) -> dict[str, str]:
    """--name=value arguments as a dict (flags map to "")."""
    found: dict[str, str] = {}
    for arg in _container(job)["args"]:
        name, _, value = arg.partition("=")
        found[name] = value
    return found


def _policy_for(r: Rendered, component: str) -> dict[str, Any]:
    labels = pod_labels(r)[component]
    (found,) = [p for p in r.of_kind("NetworkPolicy") if selects(p["spec"]["podSelector"], labels)]
    return found


def _admits(policy: dict[str, Any], labels: dict[str, str]) -> list[list[Any]]:
    """The ports of each rule that admits a pod of the release's namespace with these labels."""
    return [
        [p["port"] for p in rule.get("ports", [])] or ["every port"]
        for rule in policy["spec"]["ingress"]
        for peer in rule["from"]
        if "podSelector" in peer
        and "namespaceSelector" not in peer
        and selects(peer["podSelector"], labels)
    ]


@pytest.mark.parametrize("case", ["default", "scaled", "external-redis"])
def test_off_by_default_and_then_nothing_of_it_renders(case: str) -> None:
    r = render(case)
    assert r.of_kind("Job") == []
    assert "locust" not in r.text


def test_master_and_workers_run_the_image_s_locustfile_against_the_gateway_service() -> None:
    r = render("loadtest")
    jobs = _jobs(r)
    assert set(jobs) == {"locust-master", "locust-worker"}
    master, worker = jobs["locust-master"], jobs["locust-worker"]
    gateway_svc = next(
        s for s in r.of_kind("Service") if s["metadata"]["name"].endswith("-gateway")
    )
    values = r.values["loadtest"]
    m, w = _args(master), _args(worker)
    for job in (master, worker):
        c = _container(job)
        assert c["image"] == "quatro:0.1.0"  # the release's own image, which ships the file
        assert c["command"] == ["locust"]
        assert _args(job)["--locustfile"] == "/app/loadtests/locustfile.py"
        assert values["run"] in job["metadata"]["name"]
        assert job["spec"]["ttlSecondsAfterFinished"] == 86400
        assert job["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "loadgen"}
        # The players' options reach both (a worker reads some before the master's arrive).
        assert _args(job)["--players"] == "6"
        assert _container(job)["args"][-2:] == ["--match-rounds", "3"]
    assert (REPO / "loadtests" / "locustfile.py").is_file()
    # The master plays against the gateway Service, waits for every worker, and runs by itself.
    port = gateway_svc["spec"]["ports"][0]["port"]
    assert m["--host"] == f"http://{gateway_svc['metadata']['name']}:{port}"
    assert "--master" in m
    assert "--autostart" in m
    assert "--headless" not in m
    assert m["--expect-workers"] == "3" == str(worker["spec"]["parallelism"])
    assert worker["spec"]["completions"] == 3
    assert m["--users"] == "48"
    assert m["--autoquit"] == str(values.get("linger", 600))
    # Workers find the master through its Service, on the master port.
    master_svc = next(
        s for s in r.of_kind("Service") if s["metadata"]["name"] == w["--master-host"]
    )
    assert master_svc["spec"]["type"] == "ClusterIP"
    assert {p["name"]: p["port"] for p in master_svc["spec"]["ports"]} == {
        "web": 8089,
        "master": MASTER_PORT,
    }
    assert selects({"matchLabels": master_svc["spec"]["selector"]}, pod_labels(r)["locust-master"])
    assert not selects(
        {"matchLabels": master_svc["spec"]["selector"]}, pod_labels(r)["locust-worker"]
    )
    assert w["--master-port"] == str(MASTER_PORT)
    # No restart of a master: it would run again over the results.
    assert master["spec"]["backoffLimit"] == 0
    assert master["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    # Nothing exposes the UI.
    assert r.of_kind("Ingress") == []


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        (
            {"enabled": True, "results": {"existingClaim": "loadtest-results"}},
            "persistentVolumeClaim",
        ),
        ({"enabled": True}, "emptyDir"),
    ],
)
def test_results_go_to_the_master_s_volume_as_csv_and_html(
    values: dict[str, Any], kind: str
) -> None:
    r = render_values("quatro", json.dumps({"loadtest": values}))
    master = _jobs(r)["locust-master"]
    m = _args(master)
    mount = next(v for v in _container(master)["volumeMounts"] if v["name"] == "results")
    assert m["--csv"].startswith(mount["mountPath"] + "/")
    assert m["--html"].startswith(mount["mountPath"] + "/")
    assert "--csv-full-history" in m
    (volume,) = [v for v in master["spec"]["template"]["spec"]["volumes"] if v["name"] == "results"]
    assert kind in volume
    if kind == "persistentVolumeClaim":
        assert volume[kind]["claimName"] == "loadtest-results"
    else:
        assert volume[kind]["sizeLimit"] == "1Gi"


def test_only_workers_and_the_allowed_peers_reach_the_master() -> None:
    r = render("loadtest")
    labels = pod_labels(r)
    stranger = {**labels["gateway"], "app.kubernetes.io/component": "debug-shell"}
    master = _policy_for(r, "locust-master")
    assert _admits(master, labels["locust-worker"]) == [["master"]]
    for who in ("gateway", "ray-worker", "ray-head", "locust-master"):
        assert _admits(master, labels[who]) == [], who
    assert _admits(master, stranger) == []
    # The values' peers (Prometheus' namespace) reach the web UI and /metrics only.
    others = [
        rule
        for rule in master["spec"]["ingress"]
        if rule["from"] == r.values["loadtest"]["master"]["allowFrom"]
    ]
    assert [[p["port"] for p in rule["ports"]] for rule in others] == [["web"]]
    # The named ports exist on the master's container.
    ports = {p["name"]: p["containerPort"] for p in _container(_jobs(r)["locust-master"])["ports"]}
    assert ports == {"web": 8089, "master": MASTER_PORT}
    # Workers accept nothing.
    assert _policy_for(r, "locust-worker")["spec"]["ingress"] == []


def test_workers_reach_the_gateways_on_http_only_and_no_other_component() -> None:
    r = render("loadtest")
    labels = pod_labels(r)
    gateway = _policy_for(r, "gateway")
    assert _admits(gateway, labels["locust-worker"]) == [["http"]]
    assert _admits(gateway, labels["locust-master"]) == []
    for component in ("ray-head", "redis"):
        assert _admits(_policy_for(r, component), labels["locust-worker"]) == [], component
    # Without a master allowFrom, the master admits its workers and nothing else.
    bare = render("default")
    assert not [p for p in bare.of_kind("NetworkPolicy") if "locust" in p["metadata"]["name"]]


def test_the_service_monitor_scrapes_our_route_on_the_master_only() -> None:
    r = render("loadtest")
    monitors = [m for m in r.of_kind("ServiceMonitor") if "locust" in m["metadata"]["name"]]
    (monitor,) = monitors
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] == "web"
    assert endpoint["path"] == "/metrics"
    # The path our hook serves (loadtests/locust_metrics.py), by default.
    assert locust_metrics.install.__defaults__ == (endpoint["path"],)
    services = [
        s
        for s in r.of_kind("Service")
        if selects(monitor["spec"]["selector"], s["metadata"]["labels"])
    ]
    assert [s["metadata"]["name"] for s in services] == [monitor["metadata"]["name"]]
    # The master is Ready once that route answers.
    probe = _container(_jobs(r)["locust-master"])["readinessProbe"]["httpGet"]
    assert probe == {"path": "/metrics", "port": "web"}


def test_an_evening_s_curve_reaches_the_master_s_load_shape_only_when_asked() -> None:
    """`loadtest.evening`: the master's environment names the curve (the shape runs there,
    loadtests/locustfile.py) and the seats its tables are whole in; unset, nothing of it."""
    flat = _container(_jobs(render("loadtest"))["locust-master"])
    assert {e["name"] for e in flat["env"]} == {"HOME"}
    _, values = CASES["loadtest"]
    lt = {**values["loadtest"], "evening": "10:4:240:8", "players": 4}
    r = render_values(LONGEST_RELEASE, json.dumps({**values, "loadtest": lt}, sort_keys=True))
    jobs = _jobs(r)
    env = {e["name"]: e.get("value") for e in _container(jobs["locust-master"])["env"]}
    assert env == {"HOME": "/tmp", "QUATRO_EVENING": "10:4:240:8", "QUATRO_SEATS": "4"}
    assert "QUATRO_EVENING" not in {e["name"] for e in _container(jobs["locust-worker"])["env"]}
    Curve.parse(env["QUATRO_EVENING"])  # what the chart lets through, the shape reads


@pytest.mark.parametrize(
    ("values", "path"),
    [
        ({"loadtest": {"enabled": True, "players": 5}}, "/loadtest/players"),
        ({"loadtest": {"run": "Week 49"}}, "/loadtest/run"),
        ({"loadtest": {"workers": 0}}, "/loadtest/workers"),
        ({"loadtest": {"runTime": "five minutes"}}, "/loadtest/runTime"),
        ({"loadtest": {"evening": "all evening"}}, "/loadtest/evening"),
        ({"loadtest": {"master": {"webPort": MASTER_PORT}}}, "/loadtest/master/webPort"),
        ({"loadtest": {"replicas": 2}}, "/loadtest"),
    ],
)
def test_a_wrong_load_test_value_fails_with_its_path(values: dict[str, Any], path: str) -> None:
    file = values_file(values)
    try:
        done = helm("template", "quatro", str(CHART), "-f", str(file), check=False)
    finally:
        file.unlink()
    assert done.returncode != 0
    assert f"at '{path}'" in done.stderr, shlex.quote(done.stderr)
