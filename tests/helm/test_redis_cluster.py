"""redis.mode: standalone | cluster, on the rendered objects (issue 35, "The chart").

The chart's own Redis Cluster (a StatefulSet, its headless Service, its bootstrap Job, a
PodDisruptionBudget, NetworkPolicies for its bus and client ports), an external cluster over TLS,
where Ray's GCS keeps its state in each mode, and the findings of a static analysis (checkov) that
were real: service-account tokens mounted where nothing uses them, Redis at a low uid. The pods
themselves run in tests/deploy, on a three-primary cluster with a primary killed mid-match."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from typing import Any

import pytest

from tests.helm.render import (
    CASES,
    CHART,
    LONGEST_RELEASE,
    Rendered,
    helm,
    pod_labels,
    pod_specs,
    render,
    render_values,
    selects,
    values_file,
)

CLUSTER_CASES = ["redis-cluster", "redis-cluster-large"]
SCRIPTS = ("node.sh", "ready.sh", "handoff.sh", "bootstrap.sh")


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container.get("env", [])}


def _sts(r: Rendered, component: str) -> dict[str, Any]:
    (found,) = [
        s
        for s in r.of_kind("StatefulSet")
        if s["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] == component
    ]
    return found


def _cluster_values(case: str) -> dict[str, Any]:
    defaults = {"primaries": 3, "replicasPerPrimary": 1, "antiAffinity": "soft"}
    return {**defaults, **CASES[case][1]["redis"].get("cluster", {})}


def _redis_clients(r: Rendered) -> dict[str, dict[str, Any]]:
    """The containers that talk to the game store: the gateway and every Ray container."""
    found = {}
    for where, spec in pod_specs(r):
        if where.startswith(("Deployment/", "RayCluster/")):
            for c in spec["containers"]:
                found[f"{where}/{c['name']}"] = c
    return found


def _policy(r: Rendered, component: str) -> dict[str, Any]:
    labels = pod_labels(r)[component]
    (found,) = [p for p in r.of_kind("NetworkPolicy") if selects(p["spec"]["podSelector"], labels)]
    return found


def _admits(policy: dict[str, Any], labels: dict[str, str], port: str) -> bool:
    for rule in policy["spec"]["ingress"]:
        ports = [p["port"] for p in rule.get("ports", [])]
        if ports and port not in ports:
            continue
        if any(selects(peer["podSelector"], labels) for peer in rule["from"]):
            return True
    return False


def _as(component: str, r: Rendered) -> dict[str, str]:
    """The labels a pod of this release with that component would carry."""
    base = pod_labels(r)["gateway"]
    return {**base, "app.kubernetes.io/component": component}


# -- the chart's own cluster ------------------------------------------------------------------


@pytest.mark.parametrize("case", CLUSTER_CASES)
def test_cluster_is_a_statefulset_of_primaries_and_replicas_with_volumes(case: str) -> None:
    r = render(case)
    values = _cluster_values(case)
    sts = _sts(r, "redis-cluster")
    nodes = values["primaries"] * (1 + values["replicasPerPrimary"])
    assert sts["spec"]["replicas"] == nodes
    # A node is Ready only inside a formed cluster: OrderedReady would wait on node 0 forever.
    assert sts["spec"]["podManagementPolicy"] == "Parallel"
    assert sts["spec"]["updateStrategy"] == {"type": "RollingUpdate"}
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    storage = values.get("persistence", {})
    assert claim["spec"]["resources"]["requests"]["storage"] == storage.get("size", "1Gi")
    assert claim["spec"].get("storageClassName") == storage.get("storageClass")
    spec = sts["spec"]["template"]["spec"]
    (redis,) = spec["containers"]
    assert {"name": "data", "mountPath": "/data"} in redis["volumeMounts"]
    assert redis["resources"]["requests"]["cpu"]
    assert redis["resources"]["requests"]["memory"]
    assert {p["name"]: p["containerPort"] for p in redis["ports"]} == {"redis": 6379, "bus": 16379}
    env = _env(redis)
    assert env["REDIS_NODES"]["value"] == str(nodes)
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    for name in ("REDIS_PASSWORD", "REDISCLI_AUTH"):
        assert "secretKeyRef" in env[name]["valueFrom"], name
    assert redis["lifecycle"]["preStop"]["exec"]["command"] == ["/bin/sh", "/scripts/handoff.sh"]
    # The handoff waits up to 20 s for a replica: inside the grace period.
    assert spec["terminationGracePeriodSeconds"] >= 30
    assert redis["readinessProbe"]["exec"]["command"] == ["/bin/sh", "/scripts/ready.sh"]


@pytest.mark.parametrize("case", CLUSTER_CASES)
def test_nodes_announce_stable_names_of_a_headless_service(case: str) -> None:
    """Pods come back on new addresses: the nodes announce <pod>.<headless service>, and the
    clients are redirected there (cluster-preferred-endpoint-type hostname)."""
    r = render(case)
    sts = _sts(r, "redis-cluster")
    name = sts["metadata"]["name"]
    (svc,) = [
        s for s in r.of_kind("Service") if s["metadata"]["name"] == sts["spec"]["serviceName"]
    ]
    assert svc["spec"]["clusterIP"] == "None"
    # Nodes must find each other to become Ready: their records exist before they are.
    assert svc["spec"]["publishNotReadyAddresses"] is True
    assert selects({"matchLabels": svc["spec"]["selector"]}, pod_labels(r)["redis-cluster"])
    assert {p["name"]: p["port"] for p in svc["spec"]["ports"]} == {"redis": 6379, "bus": 16379}
    env = _env(sts["spec"]["template"]["spec"]["containers"][0])
    assert (
        env["REDIS_NODE_SUFFIX"]["value"] == f".{svc['metadata']['name']}.default.svc.cluster.local"
    )
    assert env["REDIS_STS"]["value"] == name
    node = (CHART / "files" / "redis-cluster" / "node.sh").read_text()
    command = node[node.index("exec redis-server") :]
    for flag in (
        "--cluster-enabled yes",
        "--cluster-config-file nodes.conf",  # in /data: the node keeps its identity
        '--cluster-announce-hostname "$self"',
        "--cluster-preferred-endpoint-type hostname",
        "--appendonly yes",
        "--maxmemory-policy noeviction",
        '--cluster-node-timeout "$REDIS_NODE_TIMEOUT_MS"',
    ):
        assert flag in command, flag
    assert 'self="$POD_NAME$REDIS_NODE_SUFFIX"' in node
    # The password never on the command line: a here-document, and replicas authenticate too.
    assert "requirepass" not in command.split("<<")[0]
    assert 'masterauth "$REDIS_PASSWORD"' in command


@pytest.mark.parametrize("case", CLUSTER_CASES)
def test_nodes_are_spread_and_disrupted_one_at_a_time(case: str) -> None:
    r = render(case)
    values = _cluster_values(case)
    sts = _sts(r, "redis-cluster")
    spec = sts["spec"]["template"]["spec"]
    anti = spec["affinity"]["podAntiAffinity"]
    key = (
        "requiredDuringSchedulingIgnoredDuringExecution"
        if values["antiAffinity"] == "hard"
        else "preferredDuringSchedulingIgnoredDuringExecution"
    )
    (term,) = anti[key]
    term = term.get("podAffinityTerm", term)
    assert term["topologyKey"] == "kubernetes.io/hostname"
    labels = pod_labels(r)
    assert selects(term["labelSelector"], labels["redis-cluster"])
    assert not selects(term["labelSelector"], labels["redis"])
    if "topologySpreadConstraints" in values:
        assert spec["topologySpreadConstraints"] == values["topologySpreadConstraints"]
    (pdb,) = [
        p
        for p in r.of_kind("PodDisruptionBudget")
        if selects(p["spec"]["selector"], labels["redis-cluster"])
    ]
    assert pdb["spec"] == {**pdb["spec"], "maxUnavailable": 1}
    assert "minAvailable" not in pdb["spec"]
    for other in ("redis", "gateway", "ray-worker"):
        assert not selects(pdb["spec"]["selector"], labels[other])


def test_an_affinity_of_the_operator_replaces_the_spread() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["redis"]}]}
                ]
            }
        }
    }
    values = {"redis": {"mode": "cluster", "cluster": {"affinity": affinity}}}
    r = render_values("quatro", json.dumps(values))
    assert _sts(r, "redis-cluster")["spec"]["template"]["spec"]["affinity"] == affinity


@pytest.mark.parametrize("case", CLUSTER_CASES)
def test_a_job_forms_the_cluster_once_and_reruns_only_when_its_shape_changes(case: str) -> None:
    r = render(case)
    values = _cluster_values(case)
    (job,) = [
        j
        for j in r.of_kind("Job")
        if j["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        == "redis-bootstrap"
    ]
    # Not a hook: nodes are Ready only once formed, so a post-install hook would deadlock
    # `helm install --wait`.
    assert "helm.sh/hook" not in job["metadata"].get("annotations", {})
    spec = job["spec"]["template"]["spec"]
    assert spec["restartPolicy"] == "Never"
    assert job["spec"]["backoffLimit"] >= 1
    assert job["spec"]["activeDeadlineSeconds"] > 0
    (boot,) = spec["containers"]
    assert boot["command"] == ["/bin/sh", "/scripts/bootstrap.sh"]
    assert (
        boot["image"]
        == _sts(r, "redis-cluster")["spec"]["template"]["spec"]["containers"][0]["image"]
    )
    env = _env(boot)
    assert env["REDIS_PRIMARIES"]["value"] == str(values["primaries"])
    assert env["REDIS_REPLICAS"]["value"] == str(values["replicasPerPrimary"])
    node_env = _env(_sts(r, "redis-cluster")["spec"]["template"]["spec"]["containers"][0])
    for name in ("REDIS_STS", "REDIS_NODES", "REDIS_NODE_SUFFIX"):
        assert env[name]["value"] == node_env[name]["value"], name
    assert "secretKeyRef" in env["REDISCLI_AUTH"]["valueFrom"]
    # The same values name the same Job (an upgrade leaves a finished one alone); another shape
    # or image names another (a Job's template cannot change).
    release, base = CASES[case]
    again = render_values(release, json.dumps(base, sort_keys=True))
    assert job["metadata"]["name"] in [j["metadata"]["name"] for j in again.of_kind("Job")]
    for change in (
        {"replicasPerPrimary": values["replicasPerPrimary"] + 1},
        {"primaries": values["primaries"] + 1},
    ):
        changed = json.loads(json.dumps(base))
        changed["redis"]["cluster"] = {**changed["redis"].get("cluster", {}), **change}
        other = render_values(release, json.dumps(changed, sort_keys=True))
        assert job["metadata"]["name"] not in [j["metadata"]["name"] for j in other.of_kind("Job")]
    script = (CHART / "files" / "redis-cluster" / "bootstrap.sh").read_text()
    assert 'redis-cli --cluster create $addrs --cluster-replicas "$REDIS_REPLICAS"' in script
    assert "--cluster-yes" in script


def test_the_scripts_are_the_chart_s_files_and_changing_them_rolls_the_nodes() -> None:
    r = render("redis-cluster")
    sts = _sts(r, "redis-cluster")
    (config,) = [
        c for c in r.of_kind("ConfigMap") if c["metadata"]["name"] == sts["metadata"]["name"]
    ]
    for script in SCRIPTS:
        assert config["data"][script] == (CHART / "files" / "redis-cluster" / script).read_text()
    assert re.fullmatch(
        r"[0-9a-f]{64}", sts["spec"]["template"]["metadata"]["annotations"]["checksum/scripts"]
    )


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_scripts_are_posix_sh(script: str) -> None:
    """They run in the official Redis image's /bin/sh (dash): parsed here by dash, and by
    shellcheck where it is installed."""
    path = CHART / "files" / "redis-cluster" / script
    dash = shutil.which("dash")
    assert dash, "dash (Debian's /bin/sh) is not installed"
    subprocess.run([dash, "-n", str(path)], check=True)
    if shutil.which("shellcheck"):
        subprocess.run(["shellcheck", "-s", "sh", str(path)], check=True)


# -- who talks to it --------------------------------------------------------------------------


@pytest.mark.parametrize("case", CLUSTER_CASES)
def test_gateways_and_ray_pods_get_every_node_as_a_seed_and_the_password_apart(case: str) -> None:
    r = render(case)
    sts = _sts(r, "redis-cluster")
    name, nodes = sts["metadata"]["name"], sts["spec"]["replicas"]
    suffix = _env(sts["spec"]["template"]["spec"]["containers"][0])["REDIS_NODE_SUFFIX"]["value"]
    seeds = ",".join(f"{name}-{i}{suffix}:6379" for i in range(nodes))
    clients = _redis_clients(r)
    assert {"ray-head", "ray-worker", "gateway"} == {c.rsplit("/", 1)[1] for c in clients}
    secret = _env(sts["spec"]["template"]["spec"]["containers"][0])["REDIS_PASSWORD"]["valueFrom"]
    for where, container in clients.items():
        env = _env(container)
        assert env["REDIS_URL"]["value"] == f"redis+cluster://{seeds}", where
        assert env["REDIS_PASSWORD"]["valueFrom"] == secret, where
        assert "REDIS_CA_FILE" not in env, where
    # DNS names fit: each label at most 63 characters.
    for seed in seeds.split(","):
        assert all(0 < len(label) <= 63 for label in seed.split(":")[0].split("."))


@pytest.mark.parametrize("case", CLUSTER_CASES)
def test_ray_s_gcs_keeps_a_standalone_redis_of_its_own(case: str) -> None:
    """Ray's GCS refuses a Redis Cluster of more than one shard: in cluster mode it keeps its
    state in the chart's standalone Redis (same name as in standalone mode), used by nothing
    else."""
    r = render(case)
    standalone = _sts(r, "redis")
    gcs = r.one("RayCluster")["spec"]["gcsFaultToleranceOptions"]
    assert gcs["redisAddress"] == f"{standalone['metadata']['name']}:6379"
    (service,) = [
        s for s in r.of_kind("Service") if s["metadata"]["name"] == standalone["metadata"]["name"]
    ]
    assert selects({"matchLabels": service["spec"]["selector"]}, pod_labels(r)["redis"])
    password = _env(standalone["spec"]["template"]["spec"]["containers"][0])["REDIS_PASSWORD"]
    assert gcs["redisPassword"] == {"valueFrom": password["valueFrom"]}
    name = standalone["metadata"]["name"]
    for where, container in _redis_clients(r).items():
        url = _env(container)["REDIS_URL"]["value"]
        assert f"//{name}:" not in url, where
        assert f",{name}:" not in url, where


def test_without_gcs_fault_tolerance_cluster_mode_has_no_standalone_redis() -> None:
    values = {"redis": {"mode": "cluster"}, "ray": {"gcsFaultTolerance": {"enabled": False}}}
    r = render_values("quatro", json.dumps(values))
    components = {
        s["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        for s in r.of_kind("StatefulSet")
    }
    assert components == {"redis-cluster"}
    assert "gcsFaultToleranceOptions" not in r.one("RayCluster")["spec"]
    assert not any(p["metadata"]["name"].endswith("-redis") for p in r.of_kind("NetworkPolicy"))


def test_moving_to_cluster_mode_copies_the_standalone_s_data_before_a_gateway_serves() -> None:
    r = render("redis-cluster")
    assert "initContainers" not in r.one("Deployment")["spec"]["template"]["spec"]
    assert not _admits(_policy(r, "redis"), _as("gateway", r), "redis")
    values = {"redis": {"mode": "cluster", "migrateFromStandalone": True}}
    moving = render_values("quatro", json.dumps(values))
    spec = moving.one("Deployment")["spec"]["template"]["spec"]
    (copy,) = spec["initContainers"]
    gateway = next(c for c in spec["containers"] if c["name"] == "gateway")
    assert copy["image"] == gateway["image"]
    assert copy["command"] == ["python", "-m", "cluster.redis_keys", "copy", "--once"]
    env, names = _env(copy), [e["name"] for e in copy["env"]]
    standalone = _sts(moving, "redis")["metadata"]["name"]
    # The source's URL (with the password, composed by Kubernetes) in the environment only.
    assert env["QUATRO_REDIS_MIGRATE_FROM"]["value"] == (
        f"redis://:$(REDIS_PASSWORD)@{standalone}:6379/0"
    )
    assert names.index("REDIS_PASSWORD") < names.index("QUATRO_REDIS_MIGRATE_FROM")
    # The target is the gateway's own store.
    for name in ("REDIS_URL", "REDIS_PASSWORD"):
        assert env[name] == _env(gateway)[name], name
    assert {"name": "tmp", "mountPath": "/tmp"} in copy["volumeMounts"]
    # Gateways copy from it; the older release's table actors keep saving to it until their
    # tables end.
    for client in ("gateway", "ray-worker", "ray-head"):
        assert _admits(_policy(moving, "redis"), _as(client, moving), "redis"), client
    # The standalone of standalone mode and of cluster mode are one object: same name, same
    # claim, so its data is still there after the upgrade.
    before = _sts(render("default"), "redis")
    after = _sts(moving, "redis")
    assert before["metadata"]["name"] == after["metadata"]["name"]
    assert before["spec"]["volumeClaimTemplates"] == after["spec"]["volumeClaimTemplates"]


# -- NetworkPolicies --------------------------------------------------------------------------


@pytest.mark.parametrize("case", CLUSTER_CASES)
def test_the_bus_is_for_the_nodes_and_the_client_port_for_gateways_and_ray(case: str) -> None:
    r = render(case)
    policy = _policy(r, "redis-cluster")
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    ports = {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]}
    assert ports == {"redis", "bus"}  # every rule names its ports
    node = _as("redis-cluster", r)
    assert _admits(policy, node, "bus")
    assert _admits(policy, node, "redis")  # replication
    for client in ("gateway", "ray-head", "ray-worker", "redis-bootstrap"):
        assert _admits(policy, _as(client, r), "redis"), client
        assert not _admits(policy, _as(client, r), "bus"), client
    for stranger in ("redis", "test", "locust-worker", "locust-master", "debug-shell"):
        for port in ("redis", "bus"):
            assert not _admits(policy, _as(stranger, r), port), (stranger, port)
    other_release = {**node, "app.kubernetes.io/instance": "another"}
    assert not _admits(policy, other_release, "bus")
    # In cluster mode the standalone Redis holds Ray's GCS state: the head alone reaches it.
    gcs = _policy(r, "redis")
    assert _admits(gcs, _as("ray-head", r), "redis")
    for other in ("gateway", "ray-worker", "redis-cluster", "test"):
        assert not _admits(gcs, _as(other, r), "redis"), other


def test_standalone_mode_renders_no_cluster() -> None:
    for case in ("default", "external-redis", "external-redis-tls"):
        r = render(case)
        assert "redis-cluster" not in pod_labels(r)
        assert "redis-bootstrap" not in pod_labels(r)
        url = _env(r.one("Deployment")["spec"]["template"]["spec"]["containers"][0])["REDIS_URL"]
        assert "+cluster" not in url["value"]
    gcs = _policy(render("default"), "redis")
    for client in ("gateway", "ray-head", "ray-worker"):
        assert _admits(gcs, _as(client, render("default")), "redis"), client


# -- external Redis, with TLS -----------------------------------------------------------------


def _mounted_file(spec: dict[str, Any], container: dict[str, Any], path: str) -> tuple[str, str]:
    """(Secret name, key) of the file at `path` in the container, through its volume mounts."""
    volumes = {v["name"]: v for v in spec["volumes"]}
    for mount in container.get("volumeMounts", []):
        directory = mount["mountPath"].rstrip("/") + "/"
        if path.startswith(directory):
            assert mount.get("readOnly") is True
            secret = volumes[mount["name"]]["secret"]
            for item in secret["items"]:
                if item["path"] == path[len(directory) :]:
                    return secret["secretName"], item["key"]
    raise AssertionError(f"nothing mounted at {path}")


def test_an_external_cluster_over_mutual_tls_with_an_acl_user() -> None:
    r = render("external-cluster-tls")
    redis = CASES["external-cluster-tls"][1]["redis"]
    # No cluster of the chart's own; the standalone stays for Ray's GCS alone.
    assert {
        s["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
        for s in r.of_kind("StatefulSet")
    } == {"redis"}
    assert not any(j["metadata"]["name"].count("bootstrap") for j in r.of_kind("Job"))
    clients = _redis_clients(r)
    assert len(clients) == 3
    for where, spec in pod_specs(r):
        for container in spec["containers"]:
            label = f"{where}/{container['name']}"
            if label not in clients:
                continue
            env = _env(container)
            assert env["REDIS_URL"]["value"] == "rediss+cluster://" + ",".join(
                redis["external"]["seeds"]
            )
            assert env["REDIS_USERNAME"]["valueFrom"]["secretKeyRef"] == {
                "name": "managed-redis",
                "key": "username",
            }
            assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
                "name": "managed-redis",
                "key": "password",
            }
            ca = env["REDIS_CA_FILE"]["value"]
            assert _mounted_file(spec, container, ca) == ("managed-redis-ca", "ca.crt")
            cert = env["REDIS_CLIENT_CERT_FILE"]["value"]
            key = env["REDIS_CLIENT_KEY_FILE"]["value"]
            assert _mounted_file(spec, container, cert) == ("quatro-redis-client", "tls.crt")
            assert _mounted_file(spec, container, key) == ("quatro-redis-client", "tls.key")
    # The GCS's own Redis is the chart's, with the same password, and the default user.
    gcs = r.one("RayCluster")["spec"]["gcsFaultToleranceOptions"]
    assert gcs["redisAddress"] == f"{_sts(r, 'redis')['metadata']['name']}:6379"
    assert "redisUsername" not in gcs
    # No Secret for Redis is made: the operator's is used.
    assert all("password" not in s["data"] for s in r.of_kind("Secret"))


def test_an_external_standalone_over_tls_for_the_game_and_for_ray_s_gcs() -> None:
    r = render("external-redis-tls")
    assert r.of_kind("StatefulSet") == []
    env = _env(r.one("Deployment")["spec"]["template"]["spec"]["containers"][0])
    assert env["REDIS_URL"]["value"] == (
        "rediss://$(REDIS_USERNAME):$(REDIS_PASSWORD)@redis.example.internal:6380/0"
    )
    names = [
        e["name"] for e in r.one("Deployment")["spec"]["template"]["spec"]["containers"][0]["env"]
    ]
    assert names.index("REDIS_USERNAME") < names.index("REDIS_URL")
    assert "REDIS_CLIENT_CERT_FILE" not in env
    ray = r.one("RayCluster")["spec"]
    gcs = ray["gcsFaultToleranceOptions"]
    # rediss:// turns TLS on in Ray's GCS client; RAY_REDIS_CA_CERT is its CA.
    assert gcs["redisAddress"] == "rediss://redis.example.internal:6380"
    assert gcs["redisUsername"]["valueFrom"]["secretKeyRef"]["key"] == "username"
    head_spec = ray["headGroupSpec"]["template"]["spec"]
    head = head_spec["containers"][0]
    ca = _env(head)["RAY_REDIS_CA_CERT"]["value"]
    assert _mounted_file(head_spec, head, ca) == ("managed-redis-ca", "root.pem")
    assert ca == _env(head)["REDIS_CA_FILE"]["value"]


def test_external_cluster_needs_seeds_and_a_secret_and_a_mode_is_one_of_two() -> None:
    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({"redis": {"enabled": False, "mode": "cluster"}}, ["/redis/external/seeds"]),
        (
            {"redis": {"enabled": False, "mode": "cluster", "external": {"seeds": ["a:b"]}}},
            ["/redis/external/seeds/0", "/redis/auth/existingSecret"],
        ),
        ({"redis": {"mode": "sharded"}}, ["/redis/mode"]),
        ({"redis": {"mode": "cluster", "cluster": {"primaries": 2}}}, ["/redis/cluster/primaries"]),
    ]
    for values, wanted in cases:
        path = values_file(values)
        try:
            result = helm("template", "quatro", str(CHART), "-f", str(path), check=False)
        finally:
            path.unlink()
        assert result.returncode != 0, values
        for where in wanted:
            assert where in result.stderr, (where, result.stderr)


# -- what the static analysis found -------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_pod_mounts_a_service_account_token_it_does_not_use(case: str) -> None:
    """checkov CKV_K8S_38. Nothing of ours calls the Kubernetes API; the one container that does
    is the autoscaler KubeRay adds to the head pod, which then keeps the token."""
    r = render(case)
    autoscaling = r.one("RayCluster")["spec"]["enableInTreeAutoscaling"]
    for where, spec in pod_specs(r):
        if where.endswith("/head") and autoscaling:
            assert "automountServiceAccountToken" not in spec, where
        else:
            assert spec.get("automountServiceAccountToken") is False, where


@pytest.mark.parametrize("case", ["default", "external-cluster-tls", *CLUSTER_CASES])
def test_redis_runs_as_a_high_uid_that_owns_its_volume(case: str) -> None:
    """checkov CKV_K8S_40: the official image's uid 999 may be a real user of the node; the pods
    run as the release's high uid, their volume given to its group (fsGroup), once
    (OnRootMismatch) even for a volume an older release wrote as 999."""
    r = render(case)
    redis_pods = [
        (where, spec)
        for where, spec in pod_specs(r)
        if any(c["image"].startswith("redis") for c in spec["containers"])
    ]
    assert redis_pods
    for where, spec in redis_pods:
        sc = spec["securityContext"]
        assert sc["runAsNonRoot"] is True, where
        assert sc["runAsUser"] >= 10000, where
        assert sc["runAsGroup"] >= 10000, where
        assert sc["fsGroup"] == sc["runAsGroup"], where
        assert sc["fsGroupChangePolicy"] == "OnRootMismatch", where
        for container in spec["containers"]:
            assert "runAsUser" not in container["securityContext"], where


def test_standalone_redis_is_pid_1_and_gets_the_sigterm() -> None:
    """A shell at PID 1 ignores SIGTERM: `printf … | exec redis-server` left the shell there, and
    Redis was killed at the end of the grace period, its last second of writes with it."""
    for case in ("default", "redis-cluster"):
        redis = _sts(render(case), "redis")["spec"]["template"]["spec"]["containers"][0]
        script = redis["args"][0]
        assert script.startswith("exec redis-server - ")
        assert "|" not in script
        assert re.search(r'<<EOF\nrequirepass "\$REDIS_PASSWORD"\nEOF\n$', script)


def test_the_long_release_still_gives_names_kubernetes_accepts() -> None:
    r = render("redis-cluster-large")
    assert CASES["redis-cluster-large"][0] == LONGEST_RELEASE
    sts = _sts(r, "redis-cluster")
    # <sts>-<ordinal> is the pod's name and hostname, and a DNS label.
    assert len(f"{sts['metadata']['name']}-{sts['spec']['replicas'] - 1}") <= 63
    for job in r.of_kind("Job"):
        assert len(job["metadata"]["name"]) <= 63
