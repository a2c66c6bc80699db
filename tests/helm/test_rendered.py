"""The chart as Kubernetes will see it: `helm lint --strict`, `helm template` of the default and
of every override set in render.CASES, each object validated offline against three Kubernetes
versions, yamllint on the output, and one test per finding of issue 12 on the rendered objects."""

from __future__ import annotations

import base64
import json
import re
import shlex
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from yamllint import linter
from yamllint.config import YamlLintConfig

from tests.helm.render import (
    CASES,
    CHART,
    REPO,
    Rendered,
    helm,
    pod_labels,
    pod_specs,
    render,
    render_values,
    selects,
    values_file,
)

# The chart's oldest Kubernetes (Chart.yaml kubeVersion), one in the middle and the newest
# schema kubernetes-validate ships.
K8S_VERSIONS = ("1.29", "1.33", "1.37")
# Custom resources: no schema in kubernetes-validate. The RayCluster is validated against KubeRay's
# CRD in test_raycluster_crd.py; no Prometheus-operator CRD is at hand, so ServiceMonitor and
# PrometheusRule get the focused checks below.
CUSTOM_KINDS = {"RayCluster", "ServiceMonitor", "PrometheusRule"}
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# Ray's containers and the gateway run the Quatro image; Redis is the official one.
QUATRO_CONTAINERS = {"gateway", "ray-head", "ray-worker", "smoke", "locust-master", "locust-worker"}

case_ids = sorted(CASES)


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec["containers"]]


def _gateway_container(r: Rendered) -> dict[str, Any]:
    containers: list[dict[str, Any]] = r.one("Deployment")["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "gateway")


def _ray(r: Rendered) -> dict[str, Any]:
    return r.one("RayCluster")


def _ray_containers(r: Rendered) -> list[dict[str, Any]]:
    return [
        c
        for where, spec in pod_specs(r)
        if where.startswith("RayCluster/")
        for c in spec["containers"]
    ]


# -- helm itself ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", case_ids)
def test_helm_lint_strict(case: str) -> None:
    _, values = CASES[case]
    path = values_file(values)
    try:
        result = helm("lint", "--strict", str(CHART), "-f", str(path), check=False)
    finally:
        path.unlink()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


@pytest.mark.parametrize("case", case_ids)
@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_every_object_is_valid_kubernetes(case: str, version: str) -> None:
    r = render(case)
    errors = []
    for doc in r.docs:
        if doc["kind"] in CUSTOM_KINDS:
            continue
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{doc['kind']}/{doc['metadata']['name']}: {exc.message}")
    assert errors == []


def test_only_the_known_custom_kinds_escape_schema_validation() -> None:
    kinds = {d["kind"] for case in CASES for d in render(case).docs}
    assert kinds - CUSTOM_KINDS, "nothing left to validate"
    for kind in kinds - CUSTOM_KINDS:
        doc = next(d for case in CASES for d in render(case).docs if d["kind"] == kind)
        kubernetes_validate.validate(doc, K8S_VERSIONS[-1], strict=True)


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_ray_pod_templates_are_valid_pods(version: str) -> None:
    """No RayCluster CRD here: its head and worker templates are plain pod templates, so they
    are validated as Pods (the part of the CRD where mistakes hide)."""
    for case in case_ids:
        for where, spec in pod_specs(render(case)):
            if where.startswith("RayCluster/"):
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": spec}
                kubernetes_validate.validate(pod, version, strict=True)


@pytest.mark.parametrize("case", case_ids)
def test_rendered_yaml_is_tidy(case: str) -> None:
    config = YamlLintConfig(
        "extends: default\n"
        "rules:\n"
        # toYaml writes block sequences flush with their key, which YAML allows.
        "  indentation: {spaces: consistent, indent-sequences: whatever}\n"
        # The dashboard ConfigMap embeds PromQL expressions that do not break well; a Redis
        # Cluster's URL names every node, and a URL does not break at all.
        "  line-length: {max: 150, allow-non-breakable-inline-mappings: true}\n"
        "  document-start: {present: true}\n"
        "  truthy: {allowed-values: ['true', 'false'], check-keys: false}\n"
    )
    problems = [
        f"{p.line}:{p.column} {p.rule}: {p.message}" for p in linter.run(render(case).text, config)
    ]
    assert problems == []


def test_a_wrong_value_fails_at_install_with_its_path() -> None:
    path = values_file({"gateway": {"replicas": "two"}, "ray": {"authMode": "token"}})
    try:
        result = helm("template", "quatro", str(CHART), "-f", str(path), check=False)
    finally:
        path.unlink()
    assert result.returncode != 0
    assert "/gateway/replicas" in result.stderr
    assert "authMode" in result.stderr


def test_external_redis_needs_a_host_and_a_secret() -> None:
    path = values_file({"redis": {"enabled": False}})
    try:
        result = helm("template", "quatro", str(CHART), "-f", str(path), check=False)
    finally:
        path.unlink()
    assert result.returncode != 0
    assert "/redis/external/host" in result.stderr
    assert "/redis/auth/existingSecret" in result.stderr


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", case_ids)
def test_names_fit_kubernetes_and_kuberay_limits(case: str) -> None:
    r = render(case)
    for doc in r.docs:
        name = doc["metadata"]["name"]
        assert DNS_LABEL.match(name), name
        assert len(name) <= 63, name
    ray_name = _ray(r)["metadata"]["name"]
    assert len(ray_name) <= 53, ray_name  # KubeRay refuses longer: it derives names from it
    # StatefulSet pods carry "<name>-<revision hash>" as a label value (at most 63).
    for sts in r.of_kind("StatefulSet"):
        assert len(sts["metadata"]["name"]) + 11 <= 63
    # Two objects of one kind never share a name, however hard the names were cut.
    seen = [(d["kind"], d["metadata"]["name"]) for d in r.docs]
    assert len(seen) == len(set(seen))


def test_readme_install_does_not_render_quatro_quatro() -> None:
    readme = (CHART.parent / "README.md").read_text()
    installs = [
        shlex.split(line)
        for line in readme.splitlines()
        if line.startswith("helm install") and "helm/quatro" in line
    ]
    assert installs, "the README shows no `helm install … helm/quatro`"
    for argv in installs:
        release = argv[2]
        r = render_values(release, "{}")
        for doc in r.docs:
            assert "quatro-quatro" not in doc["metadata"]["name"]


def test_name_and_fullname_overrides_are_used() -> None:
    r = render("fullname-override")
    _, values = CASES["fullname-override"]
    full = values["fullnameOverride"]
    assert r.one("Deployment")["metadata"]["name"].endswith("-gateway")
    assert all(full[:20] in d["metadata"]["name"] for d in r.docs)
    assert (
        render("token-existing-secret").one("Deployment")["metadata"]["name"]
        == "games-cards-gateway"
    )


# -- pods that work together ------------------------------------------------------------------


@pytest.mark.parametrize("case", case_ids)
def test_gateway_runs_its_own_ray_node_then_the_driver(case: str) -> None:
    r = render(case)
    gateway = _gateway_container(r)
    script = " ".join(gateway["command"] + gateway["args"])
    env = _env(gateway)
    head_svc = f"{_ray(r)['metadata']['name']}-head-svc"
    assert env["RAY_HEAD_ADDRESS"]["value"] == f"{head_svc}:6379"
    assert 'ray start --address="$RAY_HEAD_ADDRESS"' in script
    assert "--num-cpus=0" in script
    assert """--resources='{"table_slot": 0}'""" in script
    store = int(re.search(r"--object-store-memory=(\d+)", script).group(1))  # type: ignore[union-attr]
    # Any failed step stops the pod instead of starting a gateway with no Ray node.
    assert script.split("\n")[0].endswith("set -e")
    assert script.rstrip().endswith("exec python -m cluster up")
    # The driver attaches to the local node instead of needing a raylet it does not have.
    assert env["RAY_ADDRESS"]["value"] == "auto"
    assert "startupProbe" in gateway
    assert gateway["readinessProbe"]["httpGet"]["path"] == "/readyz"
    shm = next(
        v for v in r.one("Deployment")["spec"]["template"]["spec"]["volumes"] if v["name"] == "shm"
    )
    assert shm["emptyDir"]["medium"] == "Memory"
    assert int(shm["emptyDir"]["sizeLimit"].removesuffix("Mi")) * 2**20 > store
    assert {"name": "shm", "mountPath": "/dev/shm"} in gateway["volumeMounts"]


@pytest.mark.parametrize("case", ["default", "token-existing-secret", "scaled"])
def test_ray_token_reaches_every_ray_process_and_the_gateway(case: str) -> None:
    r = render(case)
    _, values = CASES[case]
    existing = values.get("ray", {}).get("auth", {}).get("existingSecret")
    secrets = {s["metadata"]["name"]: s for s in r.of_kind("Secret")}
    if existing:
        name = existing
        assert name not in secrets  # the operator's own Secret is left alone
    else:
        (name,) = [n for n, s in secrets.items() if "auth_token" in s["data"]]
        assert len(base64.b64decode(secrets[name]["data"]["auth_token"])) >= 32
    ray = _ray(r)
    assert ray["spec"]["authOptions"] == {"mode": "token", "secretName": name}
    autoscaler = ray["spec"]["autoscalerOptions"]
    for where, container in [
        *[(c["name"], c) for c in _ray_containers(r)],
        ("gateway", _gateway_container(r)),
        ("autoscaler", autoscaler),
    ]:
        env = _env(container)
        assert env["RAY_AUTH_MODE"]["value"] == "token", where
        ref = env["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": name, "key": "auth_token"}, where


def test_token_secret_is_kept_across_upgrades() -> None:
    """`lookup` finds the Secret of the release being upgraded: its token is reused, never
    drawn again (a new one would cut every gateway off the running cluster)."""
    text = (CHART / "templates" / "_helpers.tpl").read_text()
    kept = text.split('define "quatro.keptSecret"')[1].split("end -}}\n\n")[0]
    assert 'lookup "v1" "Secret" .ctx.Release.Namespace .name' in kept
    secrets = (CHART / "templates" / "secrets.yaml").read_text()
    assert secrets.count("quatro.keptSecret") == 2


def test_auth_disabled_renders_no_token() -> None:
    r = render("auth-disabled")
    assert "authOptions" not in _ray(r)["spec"]
    assert all("auth_token" not in s["data"] for s in r.of_kind("Secret"))
    assert _env(_gateway_container(r))["RAY_AUTH_MODE"]["value"] == "disabled"
    assert "WARNING: ray.auth.mode is disabled" in r.notes


@pytest.mark.parametrize(
    ("values", "most"),
    [
        ({}, 10 * 60),  # the head hosts no tables; 10 workers of 60 slots
        ({"ray": {"workers": {"maxReplicas": 3, "tableSlots": 20}}}, 60),
        ({"ray": {"autoscaling": {"enabled": False}}}, 0),  # a fixed cluster cannot grow
    ],
)
def test_gateways_know_how_far_the_tables_can_grow(values: dict[str, Any], most: int) -> None:
    env = _env(_gateway_container(render_values("quatro", json.dumps(values))))
    assert env["QUATRO_MAX_TABLE_SLOTS"]["value"] == str(most)
    assert int(env["QUATRO_SLOT_RESERVE"]["value"]) > 0


@pytest.mark.parametrize("case", ["default", "external-redis"])
def test_gcs_fault_tolerance_uses_the_redis_of_the_release(case: str) -> None:
    r = render(case)
    gcs = _ray(r)["spec"]["gcsFaultToleranceOptions"]
    url = _env(_gateway_container(r))["REDIS_URL"]["value"]
    host_port = url.split("@")[1].split("/")[0]
    assert gcs["redisAddress"] == host_port
    gateway_ref = _env(_gateway_container(r))["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert gcs["redisPassword"]["valueFrom"]["secretKeyRef"] == gateway_ref


def test_kuberay_operator_version_is_pinned_and_documented() -> None:
    r = render("default")
    version = _ray(r)["metadata"]["annotations"]["quatro.dev/kuberay-operator-version"]
    major, minor, _ = (int(x) for x in version.split("."))
    assert (major, minor) >= (1, 6)
    readme = (CHART.parent / "README.md").read_text()
    assert f"--version {version}" in readme


def test_raycluster_structure() -> None:
    """What the RayCluster CRD would check, and what KubeRay needs of it."""
    for case in case_ids:
        ray = _ray(render(case))
        assert ray["apiVersion"] == "ray.io/v1"
        spec = ray["spec"]
        assert spec["rayVersion"] == CASES[case][1].get("ray", {}).get("version", "2.60.0")
        groups = [spec["headGroupSpec"], *spec["workerGroupSpecs"]]
        for group in groups:
            # rayStartParams is a map of strings: a number or a boolean is refused.
            assert all(isinstance(v, str) for v in group["rayStartParams"].values())
            assert group["template"]["spec"]["containers"]
        # The head's container is the first one: KubeRay reads the Ray ports from it.
        head = spec["headGroupSpec"]["template"]["spec"]["containers"][0]
        assert {"containerPort": 6379, "name": "gcs-server"} in head["ports"]
        assert spec["headGroupSpec"]["rayStartParams"]["num-cpus"] == "0"
        for group in spec["workerGroupSpecs"]:
            assert DNS_LABEL.match(group["groupName"])
            assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
            assert "table_slot" in group["rayStartParams"]["resources"]
        allowed = {
            "rayVersion",
            "authOptions",
            "upgradeStrategy",
            "gcsFaultToleranceOptions",
            "enableInTreeAutoscaling",
            "autoscalerOptions",
            "headGroupSpec",
            "workerGroupSpecs",
        }
        assert set(spec) <= allowed
        # Never Recreate: it would stop every Ray pod, and every table, at once.
        assert spec["upgradeStrategy"] == {"type": "None"}


# -- locked down ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", case_ids)
def test_every_container_is_locked_down(case: str) -> None:
    r = render(case)
    specs = list(pod_specs(r))
    assert len(specs) >= 4  # gateway, head, workers, test pod (and Redis when it is ours)
    for where, spec in specs:
        pod_sc = spec.get("securityContext", {})
        assert pod_sc.get("runAsNonRoot") is True, where
        assert pod_sc.get("runAsUser", 0) != 0, where
        assert pod_sc.get("seccompProfile") == {"type": "RuntimeDefault"}, where
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for c in _containers(spec):
            sc = c.get("securityContext", {})
            label = f"{where}/{c['name']}"
            assert sc.get("readOnlyRootFilesystem") is True, label
            assert sc.get("allowPrivilegeEscalation") is False, label
            assert sc.get("capabilities", {}).get("drop") == ["ALL"], label
            assert "add" not in sc.get("capabilities", {}), label
            assert sc.get("seccompProfile", pod_sc.get("seccompProfile")) == {
                "type": "RuntimeDefault"
            }, label
            if c["name"] in QUATRO_CONTAINERS:
                tmp = next(m for m in c["volumeMounts"] if m["mountPath"] == "/tmp")
                assert "emptyDir" in volumes[tmp["name"]], label
    autoscaler = _ray(r)["spec"].get("autoscalerOptions")
    if autoscaler:
        assert autoscaler["securityContext"]["readOnlyRootFilesystem"] is True


@pytest.mark.parametrize("case", ["default", "scaled", "long-release-one-replica"])
def test_network_policies_admit_only_their_peers(case: str) -> None:
    r = render(case)
    labels = pod_labels(r)
    stranger = {**labels["gateway"], "app.kubernetes.io/component": "debug-shell"}
    policies = {p["metadata"]["name"]: p for p in r.of_kind("NetworkPolicy")}
    assert len(policies) == 3

    def policy_for(component: str) -> dict[str, Any]:
        (found,) = [
            p for p in policies.values() if selects(p["spec"]["podSelector"], labels[component])
        ]
        assert found["spec"]["policyTypes"] == ["Ingress"]
        return found

    # Both Ray components share one policy; the gateway and Redis have their own.
    assert policy_for("ray-head") is policy_for("ray-worker")

    def same_namespace_peers(policy: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            peer["podSelector"]
            for rule in policy["spec"]["ingress"]
            for peer in rule["from"]
            if "namespaceSelector" not in peer
        ]

    def admitted(policy: dict[str, Any], who: dict[str, str]) -> bool:
        return any(selects(sel, who) for sel in same_namespace_peers(policy))

    redis = policy_for("redis") if "redis" in labels else None
    if redis is not None:
        for component in ("gateway", "ray-head", "ray-worker"):
            assert admitted(redis, labels[component]), component
        assert not admitted(redis, stranger)
        assert not admitted(redis, labels["test"])
        assert [p["port"] for rule in redis["spec"]["ingress"] for p in rule["ports"]] == ["redis"]
    ray = policy_for("ray-head")
    for component in ("gateway", "ray-head", "ray-worker"):
        assert admitted(ray, labels[component]), component
    assert not admitted(ray, stranger)
    # Ray's ports are mostly random: its peer rule names peers and leaves every port open to
    # them. A rule with ports is the table actors' data plane, for gateways only
    # (test_table_ports.py checks its range).
    assert any("ports" not in rule for rule in ray["spec"]["ingress"])
    for rule in ray["spec"]["ingress"]:
        if "ports" in rule:
            for peer in rule["from"]:
                assert selects(peer["podSelector"], labels["gateway"])
                assert not selects(peer["podSelector"], labels["ray-worker"])
    gateway = policy_for("gateway")
    assert admitted(gateway, labels["test"])
    for component in ("ray-head", "ray-worker"):
        assert admitted(gateway, labels[component]), component
    # Whatever may reach the gateway from elsewhere (the ingress controller) reaches http only.
    for rule in gateway["spec"]["ingress"]:
        if any("namespaceSelector" in peer for peer in rule["from"]):
            assert [p["port"] for p in rule["ports"]] == ["http"]
        elif any(selects(peer["podSelector"], stranger) for peer in rule["from"]):
            raise AssertionError(f"a stranger pod reaches the gateway through {rule}")


def test_network_policies_name_the_ingress_controller_when_told() -> None:
    r = render("scaled")
    gateway = next(
        p for p in r.of_kind("NetworkPolicy") if p["metadata"]["name"].endswith("-gateway")
    )
    peers = [peer for rule in gateway["spec"]["ingress"] for peer in rule["from"]]
    assert {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}} in [
        p.get("namespaceSelector") for p in peers
    ]


@pytest.mark.parametrize("case", case_ids)
def test_notes_never_print_a_password(case: str) -> None:
    r = render(case)
    assert not re.search(r"redis://[^\s]*@", r.notes)
    assert not re.search(r"://:[^\s]+", r.notes)
    for secret in r.of_kind("Secret"):
        for value in secret["data"].values():
            assert base64.b64decode(value).decode() not in r.notes


@pytest.mark.parametrize("case", case_ids)
def test_redis_password_is_only_in_secrets(case: str) -> None:
    r = render(case)
    gateway = _gateway_container(r)
    names = [e["name"] for e in gateway["env"]]
    env = _env(gateway)
    # Kubernetes expands $(REDIS_PASSWORD) only from variables defined earlier in the list.
    assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL")
    assert "secretKeyRef" in env["REDIS_PASSWORD"]["valueFrom"]
    url = env["REDIS_URL"]["value"]
    if "+cluster://" in url:
        # A cluster's URL names the seeds only: the factory reads REDIS_PASSWORD itself.
        assert "@" not in url
        assert "$(" not in url
    else:
        user = "$(REDIS_USERNAME)" if "REDIS_USERNAME" in env else ""
        assert url.split("//")[1].startswith(f"{user}:$(REDIS_PASSWORD)@"), url
    passwords = [
        base64.b64decode(v).decode() for s in r.of_kind("Secret") for v in s["data"].values()
    ]
    others = yaml.safe_dump_all([d for d in r.docs if d["kind"] != "Secret"])
    assert passwords == [] or not any(p in others for p in passwords)


def test_redis_is_protected_bounded_and_pinned() -> None:
    r = render("default")
    sts = r.one("StatefulSet")
    redis = sts["spec"]["template"]["spec"]["containers"][0]
    script = " ".join(redis["args"])
    assert "--maxmemory-policy noeviction" in script
    assert re.search(r"--maxmemory \d+(kb|mb|gb)", script)
    # The password is read from stdin as config, never put on redis-server's command line.
    assert "requirepass" in script
    assert "$REDIS_PASSWORD" in script
    assert "--requirepass" not in script
    assert "secretKeyRef" in _env(redis)["REDISCLI_AUTH"]["valueFrom"]
    assert re.fullmatch(r"redis:\d+\.\d+\.\d+", redis["image"])
    assert "storageClassName" not in sts["spec"]["volumeClaimTemplates"][0]["spec"]
    scaled = render("scaled").one("StatefulSet")
    assert scaled["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"] == "fast-ssd"


def test_external_redis_renders_no_redis_of_its_own() -> None:
    r = render("external-redis")
    assert r.of_kind("StatefulSet") == []
    assert r.of_kind("Secret") == [s for s in r.of_kind("Secret") if "auth_token" in s["data"]]
    env = _env(_gateway_container(r))
    assert env["REDIS_URL"]["value"] == "redis://:$(REDIS_PASSWORD)@redis.example.internal:6380/2"
    assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "managed-redis",
        "key": "password",
    }


# -- games are never killed by an operator's routine ------------------------------------------


@pytest.mark.parametrize("case", case_ids)
def test_gateway_pauses_before_the_drain(case: str) -> None:
    r = render(case)
    spec = r.one("Deployment")["spec"]["template"]["spec"]
    gateway = _gateway_container(r)
    pause = " ".join(gateway["lifecycle"]["preStop"]["exec"]["command"])
    seconds = int(re.search(r"sleep (\d+)", pause).group(1))  # type: ignore[union-attr]
    assert seconds > 0
    # After the pause, uvicorn's drain (up to 10 s) must still fit before SIGKILL.
    assert spec["terminationGracePeriodSeconds"] >= seconds + 10


@pytest.mark.parametrize("case", case_ids)
def test_workers_move_their_tables_before_they_stop(case: str) -> None:
    r = render(case)
    group = _ray(r)["spec"]["workerGroupSpecs"][0]["template"]
    (worker,) = group["spec"]["containers"]
    hook = worker["lifecycle"]["preStop"]["exec"]["command"]
    script = hook[-1]
    found = re.search(r"python -m actors\.drain --deadline (\d+)", script)
    assert found, script
    # The tables move first, then Ray stops; both inside the grace period.
    assert script.index("actors.drain") < script.index("ray stop")
    assert group["spec"]["terminationGracePeriodSeconds"] >= int(found.group(1)) + 10
    annotations = group["metadata"].get("annotations", {})
    assert annotations.get("cluster-autoscaler.kubernetes.io/safe-to-evict") == "false"
    assert annotations.get("karpenter.sh/do-not-disrupt") == "true"


def test_worker_eviction_annotations_can_be_dropped() -> None:
    values = {"ray": {"workers": {"protectFromAutoscalers": False, "podAnnotations": {"a": "b"}}}}
    r = render_values("quatro", json.dumps(values))
    group = _ray(r)["spec"]["workerGroupSpecs"][0]["template"]
    assert group["metadata"]["annotations"] == {"a": "b"}


def test_pdb_only_with_more_than_one_replica() -> None:
    assert render("long-release-one-replica").of_kind("PodDisruptionBudget") == []
    pdb = render("default").one("PodDisruptionBudget")
    assert "minAvailable" not in pdb["spec"]
    assert pdb["spec"]["maxUnavailable"] == 1
    labels = pod_labels(render("default"))["gateway"]
    assert selects(pdb["spec"]["selector"], labels)


def test_hpa_service_monitor_and_ingress_are_optional() -> None:
    default = render("default")
    for kind in ("HorizontalPodAutoscaler", "ServiceMonitor", "Ingress"):
        assert default.of_kind(kind) == []
    r = render("scaled")
    hpa = r.one("HorizontalPodAutoscaler")
    deployment = r.one("Deployment")
    # With an HPA the Deployment leaves replicas to it (an upgrade would reset them otherwise).
    assert "replicas" not in deployment["spec"]
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    metrics = {m["type"]: m for m in hpa["spec"]["metrics"]}
    assert metrics["Pods"]["pods"]["metric"]["name"] == "quatro_players_connected"
    assert metrics["Resource"]["resource"]["name"] == "cpu"
    monitor = r.one("ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    service = (
        r.one("Service")
        if len(r.of_kind("Service")) == 1
        else next(
            s
            for s in r.of_kind("Service")
            if s["metadata"]["name"] == deployment["metadata"]["name"]
        )
    )
    assert selects(monitor["spec"]["selector"], service["metadata"]["labels"])
    assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"
    assert {p["name"] for p in service["spec"]["ports"]} >= {
        monitor["spec"]["endpoints"][0]["port"]
    }
    ingress = r.one("Ingress")
    assert ingress["metadata"]["annotations"] == {"example.com/idle-timeout": "3600"}


def test_ingress_has_no_hard_coded_controller_annotations() -> None:
    r = render_values("quatro", '{"gateway": {"ingress": {"enabled": true}}}')
    assert "annotations" not in r.one("Ingress")["metadata"]


def test_scheduling_values_reach_each_component() -> None:
    r = render("scaled")
    gateway = r.one("Deployment")["spec"]["template"]["spec"]
    assert gateway["nodeSelector"] == {"pool": "edge"}
    assert gateway["tolerations"][0]["key"] == "edge"
    assert gateway["topologySpreadConstraints"][0]["maxSkew"] == 1
    workers = _ray(r)["spec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert workers["nodeSelector"] == {"pool": "tables"}
    assert "nodeSelector" not in _ray(r)["spec"]["headGroupSpec"]["template"]["spec"]


# -- operator comforts ------------------------------------------------------------------------


def test_helm_test_pod_plays_a_table() -> None:
    r = render("default")
    pod = r.one("Pod")
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    assert pod["spec"]["restartPolicy"] == "Never"
    (container,) = pod["spec"]["containers"]
    service = next(s for s in r.of_kind("Service") if s["metadata"]["name"].endswith("-gateway"))
    url = _env(container)["QUATRO_URL"]["value"]
    assert url == f"http://{service['metadata']['name']}:{service['spec']['ports'][0]['port']}"
    config = r.one("ConfigMap")
    assert config["data"]["smoke.py"] == (CHART / "files" / "smoke.py").read_text()
    script = config["data"]["smoke.py"]
    for step in ("/readyz", "/api/sessions", "/api/tables", "/bots", "/start", '"round"'):
        assert step in script


def _exported_metrics() -> set[str]:
    from prometheus_client.metrics import MetricWrapperBase

    from gateway import metrics

    exported = set()
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            exported |= {family.name for family in value.describe()}
    for collector in metrics.COLLECTORS:  # read at each scrape (the pool's counters)
        exported |= {family.name for family in collector.describe()}
    return exported


def _metric_families(exprs: list[str]) -> set[str]:
    used = {m for e in exprs for m in re.findall(r"\bquatro_[a-z_]+", e)}
    return {re.sub(r"_(total|bucket|sum|count|created)$", "", m) for m in used}


def test_grafana_dashboard_charts_every_gateway_metric_and_no_other() -> None:
    text = (CHART / "dashboards" / "quatro-gateway.json").read_text()
    dashboard = json.loads(text)
    targets = [(p, t) for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs = [t["expr"] for _, t in targets if "expr" in t]
    assert _metric_families(exprs) == _exported_metrics()
    # The rest are Grafana's math on the panel's own queries (a ratio whose PromQL would not
    # fit a line): each names only queries of its panel.
    for panel, target in targets:
        if "expr" not in target:
            assert target["datasource"]["type"] == "__expr__", target
            names = set(re.findall(r"\$(\w+)", target["expression"]))
            assert names and names <= {t["refId"] for t in panel["targets"] if "expr" in t}
    config = next(
        c for c in render("scaled").of_kind("ConfigMap") if "quatro-gateway.json" in c["data"]
    )
    assert config["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(config["data"]["quatro-gateway.json"]) == dashboard


def test_alerts_watch_exported_metrics_and_are_documented() -> None:
    rule = render("scaled").one("PrometheusRule")
    alerts = [r for g in rule["spec"]["groups"] for r in g["rules"]]
    assert _metric_families([a["expr"] for a in alerts]) <= _exported_metrics()
    guide = (REPO / "docs" / "operations.md").read_text()
    for alert in alerts:
        assert f"`{alert['alert']}`" in guide, alert["alert"]
    assert render("default").of_kind("PrometheusRule") == []


def test_operations_guide_covers_the_routines() -> None:
    guide = (REPO / "docs" / "operations.md").read_text().lower()
    for topic in (
        "install",
        "upgrade",
        "scale",
        "back up redis",
        "rotate the ray token",
        "dashboard",
        "alert",
        "redis cluster",
        "a primary lost",
        "from standalone to cluster",
        "more primaries",
    ):
        assert topic in guide, topic


def test_chart_files_exist() -> None:
    assert (CHART / "values.schema.json").is_file()
    assert Path(CHART / "files" / "smoke.py").is_file()


def test_gateways_keep_idle_connections_longer_than_an_ingress_does() -> None:
    """ingress-nginx and AWS ALB reuse upstream connections idle for up to 60 s: a gateway that
    closed them sooner would turn those reuses into 502s."""
    env = _env(_gateway_container(render_values("quatro", "{}")))
    assert int(env["QUATRO_KEEP_ALIVE"]["value"]) > 60
    env = _env(
        _gateway_container(render_values("quatro", '{"gateway": {"keepAliveSeconds": 620}}'))
    )
    assert env["QUATRO_KEEP_ALIVE"]["value"] == "620"


def test_gateways_believe_the_proxies_they_are_told_of() -> None:
    """Issue 47: behind an ingress, the gateway must read the client from X-Forwarded-For, or
    every player shares the ingress's address (one quota of new sessions, one address tag)."""
    env = _env(_gateway_container(render_values("quatro", "{}")))
    assert env["QUATRO_TRUSTED_PROXIES"]["value"] == ""
    told = '{"gateway": {"trustedProxies": "10.42.0.0/16, fd00::/8"}}'
    env = _env(_gateway_container(render_values("quatro", told)))
    assert env["QUATRO_TRUSTED_PROXIES"]["value"] == "10.42.0.0/16, fd00::/8"
