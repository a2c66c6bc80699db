"""From the chart's rendered objects to `docker run` arguments, one container per pod.

Everything a container gets comes from the rendering: image, command and args, environment (values,
`$(VAR)` references, Secrets the chart made), user and group, read-only root, dropped
capabilities, no privilege escalation, emptyDir and /dev/shm volumes, resource limits, labels, and
the names of the Services that select the pod (as network aliases). A chart change that breaks a
pod breaks its container here.

The Ray pods have no command in the chart: the KubeRay operator writes it from `rayStartParams`
and adds its own environment. `kuberay_*` below does what operator 1.6.2 (the chart's pinned
version) does for a RayCluster, as far as a pod without the Kubernetes API can have it: no
autoscaler sidecar, which needs the API.
"""

from __future__ import annotations

import base64
import re
import resource
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

# What the operator's environment calls the namespace and the cluster's DNS suffix.
NAMESPACE = "default"
CLUSTER_DOMAIN = "svc.cluster.local"
# KubeRay's defaults (operator 1.6.2, utils/constant.go).
KUBERAY_HEAD_PORT = "6379"
KUBERAY_METRICS_PORT = "8080"
KUBERAY_AGENT_PORT = "52365"
KUBERAY_WORKER_GCS_RECONNECT_S = "600"
KUBERAY_SHELL = ["/bin/bash", "-lc", "--"]
# The loopback ports the pods are published on: Kubernetes' NodePort range, below the kernel's
# ephemeral range (32768-60999), where every `bind(port 0)` of any other process lands (a test
# run meanwhile), and outside Ray's worker ports and the tables' (10002-29999). Docker would
# otherwise take its own pick of that ephemeral range without asking the kernel: a server of
# theirs on it makes a pod fail to start, and a port one just freed can be ours before it binds
# it again.
HOST_PORTS = "30000-32767"


@dataclass
class PodPlan:
    """One pod's container, as `docker run` will start it."""

    name: str
    component: str
    image: str
    command: list[str]
    env: dict[str, str]
    labels: dict[str, str]
    aliases: list[str] = field(default_factory=list)
    user: str = ""
    groups: list[str] = field(default_factory=list)
    read_only: bool = False
    cap_drop: list[str] = field(default_factory=list)
    no_new_privileges: bool = False
    tmpfs: dict[str, str] = field(default_factory=dict)  # mount path -> options
    volumes: dict[str, str] = field(default_factory=dict)  # mount path -> volume name
    claims: set[str] = field(default_factory=set)  # the volumes that are claims of the values
    files: dict[str, dict[str, str]] = field(default_factory=dict)  # mount path -> a ConfigMap
    memory: str = ""
    cpus: str = ""
    ports: dict[str, int] = field(default_factory=dict)  # name -> container port
    stop_grace_s: int = 10
    pre_stop: list[str] = field(default_factory=list)
    ready: list[str] = field(default_factory=list)  # an exec readiness probe's command
    restart: str = ""  # Docker's restart policy for the pod's restartPolicy

    def run_args(
        self, network: str, container: str, binds: dict[str, str] | None = None
    ) -> list[str]:
        args = ["run", "--detach", "--name", container, "--hostname", self.name]
        args += ["--network", network]
        args += [f"--network-alias={alias}" for alias in self.aliases]
        args += [f"--label={k}={v}" for k, v in sorted(self.labels.items())]
        if self.user:
            args += ["--user", self.user]
        args += [f"--group-add={group}" for group in self.groups]
        if self.read_only:
            args.append("--read-only")
        args += [f"--cap-drop={cap}" for cap in self.cap_drop]
        if self.no_new_privileges:
            args += ["--security-opt", "no-new-privileges"]
        for path, options in self.tmpfs.items():
            args += ["--tmpfs", f"{path}:{options}"]
        for path, volume in self.volumes.items():
            # A claim starts empty: Docker would fill a new volume with the image's files at that
            # path (and their owner), which a PersistentVolume never gets.
            nocopy = ",volume-nocopy" if volume in self.claims else ""
            args += ["--mount", f"type=volume,source={volume},target={path}{nocopy}"]
        for path, source in (binds or {}).items():
            args += ["--mount", f"type=bind,source={source},target={path},readonly"]
        # Kubernetes' containerd gives pods 1048576 open files, and KubeRay's `ulimit -n 65536`
        # relies on it; this machine's hard limit may be lower (the command then warns and goes
        # on, as KubeRay's `;` allows), so the container gets all the machine has.
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        args += ["--ulimit", f"nofile={nofile}:{nofile}"]
        if self.memory:
            args += ["--memory", self.memory]
        if self.cpus:
            args += ["--cpus", self.cpus]
        for port in self.ports.values():
            # Loopback only: the test's traffic never leaves this machine.
            args += ["--publish", f"127.0.0.1:{HOST_PORTS}:{port}"]
        if self.restart:
            args.append(f"--restart={self.restart}")
        args += ["--stop-timeout", str(self.stop_grace_s)]
        for key in sorted(self.env):
            args += ["--env", f"{key}={self.env[key]}"]
        args += ["--entrypoint", self.command[0], self.image, *self.command[1:]]
        return args


# -- Kubernetes semantics the test needs --------------------------------------------------------


def secret_data(docs: list[Obj]) -> dict[tuple[str, str], str]:
    """(secret name, key) -> value, from the Secrets the chart renders."""
    found: dict[tuple[str, str], str] = {}
    for doc in docs:
        if doc["kind"] == "Secret":
            for key, value in (doc.get("data") or {}).items():
                found[(doc["metadata"]["name"], key)] = base64.b64decode(value).decode()
            for key, value in (doc.get("stringData") or {}).items():
                found[(doc["metadata"]["name"], key)] = str(value)
    return found


def expand(value: str, env: dict[str, str]) -> str:
    """Kubernetes' `$(VAR)` expansion from variables defined earlier ($$ escapes)."""

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))

    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", one, value)


def resolve_env(
    entries: list[Obj], secrets: dict[tuple[str, str], str], fields: dict[str, str]
) -> dict[str, str]:
    env: dict[str, str] = {}
    for entry in entries:
        name = entry["name"]
        if "value" in entry:
            env[name] = expand(str(entry["value"]), env)
            continue
        source = entry.get("valueFrom", {})
        if "secretKeyRef" in source:
            ref = source["secretKeyRef"]
            key = (ref["name"], ref["key"])
            if key not in secrets:
                raise KeyError(f"env {name}: Secret {key[0]} has no key {key[1]} in the release")
            env[name] = secrets[key]
        elif "fieldRef" in source:
            env[name] = fields[source["fieldRef"]["fieldPath"]]
        else:
            raise KeyError(f"env {name}: unsupported source {source}")
    return env


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def quantity_bytes(q: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", str(q))
    if not m or (m.group(2) and m.group(2) not in units):
        raise ValueError(f"memory quantity {q!r}")
    return int(m.group(1)) * units.get(m.group(2), 1)


def cpu_value(q: str) -> float:
    q = str(q)
    return int(q[:-1]) / 1000 if q.endswith("m") else float(q)


# -- KubeRay 1.6.2 ---------------------------------------------------------------------------


def kuberay_params(ray: Obj, head: bool, container: Obj, head_fqdn: str) -> dict[str, str]:
    spec = ray["spec"]
    group = spec["headGroupSpec"] if head else spec["workerGroupSpecs"][0]
    params = {k: str(v) for k, v in group.get("rayStartParams", {}).items()}
    if head:
        params.setdefault("dashboard-host", "0.0.0.0")
        if spec.get("gcsFaultToleranceOptions", {}).get("redisPassword"):
            params["redis-password"] = "$REDIS_PASSWORD"
        if spec.get("enableInTreeAutoscaling"):
            params["no-monitor"] = "true"
    else:
        params.setdefault("address", f"{head_fqdn}:{KUBERAY_HEAD_PORT}")
    params.setdefault("metrics-export-port", KUBERAY_METRICS_PORT)
    params["block"] = "true"
    params.setdefault("dashboard-agent-listen-port", KUBERAY_AGENT_PORT)
    limits = container.get("resources", {}).get("limits", {})
    if "num-cpus" not in params and "cpu" in limits:
        params["num-cpus"] = str(int(cpu_value(limits["cpu"])))
    if "memory" not in params and "memory" in limits:
        params["memory"] = str(quantity_bytes(limits["memory"]))
    return params


def kuberay_command(params: dict[str, str], head: bool) -> str:
    flags = ""
    for key in sorted(params):
        value = params[key]
        if value.lower() in ("true", "false") and key not in ("log-color", "include-dashboard"):
            if value.lower() == "true":
                flags += f" --{key} "
        else:
            flags += f" --{key}={value} "
    return f"ulimit -n 65536; ray start{' --head' if head else ''} {flags}"


def kuberay_env(
    ray: Obj, head: bool, secrets: dict[tuple[str, str], str], head_fqdn: str, start: str
) -> list[Obj]:
    """The entries the operator appends to the Ray container's env (setContainerEnvVars and the
    GCS fault tolerance and token authentication it configures), in its order."""
    spec, name = ray["spec"], ray["metadata"]["name"]
    extra: list[Obj] = []
    ft = spec.get("gcsFaultToleranceOptions")
    if ft:
        if head:
            ns = ft.get("externalStorageNamespace") or f"uid-of-{name}"
            extra.append({"name": "RAY_external_storage_namespace", "value": ns})
            extra.append({"name": "RAY_REDIS_ADDRESS", "value": ft["redisAddress"]})
            if "redisPassword" in ft:
                extra.append({"name": "REDIS_PASSWORD", **ft["redisPassword"]})
        else:
            extra.append(
                {
                    "name": "RAY_gcs_rpc_server_reconnect_timeout_s",
                    "value": KUBERAY_WORKER_GCS_RECONNECT_S,
                }
            )
    auth = spec.get("authOptions")
    if auth and auth.get("mode") == "token":
        extra.append({"name": "RAY_AUTH_MODE", "value": "token"})
        ref = {"name": auth["secretName"], "key": "auth_token"}
        extra.append({"name": "RAY_AUTH_TOKEN", "valueFrom": {"secretKeyRef": ref}})
    ip = "127.0.0.1" if head else head_fqdn
    if not head:
        extra.append({"name": "FQ_RAY_IP", "value": ip})
        extra.append({"name": "RAY_IP", "value": ip.split(".")[0]})
    extra += [
        {"name": "RAY_CLUSTER_NAME", "value": name},
        {"name": "RAY_CLUSTER_NAMESPACE", "value": NAMESPACE},
        {"name": "KUBERAY_GEN_RAY_START_CMD", "value": start.split("; ", 1)[1]},
        {"name": "RAY_PORT", "value": KUBERAY_HEAD_PORT},
        {"name": "RAY_ADDRESS", "value": f"{ip}:{KUBERAY_HEAD_PORT}"},
        {"name": "RAY_USAGE_STATS_KUBERAY_IN_USE", "value": "1"},
    ]
    return extra


# -- the plans -------------------------------------------------------------------------------


def _plan(
    name: str,
    pod: Obj,
    container: Obj,
    command: list[str],
    env_entries: list[Obj],
    secrets: dict[tuple[str, str], str],
    services: list[Obj],
    volume_prefix: str,
    config_maps: dict[str, dict[str, str]] | None = None,
    governing: str = "",
) -> PodPlan:
    labels = dict(pod["metadata"]["labels"])
    spec = pod["spec"]
    pod_sc, sc = spec.get("securityContext", {}), container.get("securityContext", {})
    uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
    gid = sc.get("runAsGroup", pod_sc.get("runAsGroup"))
    fields = {"metadata.name": name, "metadata.namespace": NAMESPACE}
    plan = PodPlan(
        name=name,
        component=labels["app.kubernetes.io/component"],
        image=container["image"],
        command=command,
        env=resolve_env(env_entries, secrets, fields),
        labels=labels,
        aliases=[
            alias
            for svc in services
            if selects(svc["spec"].get("selector", {}), labels)
            for alias in (
                svc["metadata"]["name"],
                f"{svc['metadata']['name']}.{NAMESPACE}.{CLUSTER_DOMAIN}",
            )
        ]
        + [
            # A StatefulSet's pod under its headless Service: <pod>.<service>, its own record.
            alias
            for svc in services
            if svc["metadata"]["name"] == governing and svc["spec"].get("clusterIP") == "None"
            for alias in (
                f"{name}.{governing}",
                f"{name}.{governing}.{NAMESPACE}.{CLUSTER_DOMAIN}",
            )
        ],
        user=f"{uid}:{gid}" if uid is not None else "",
        # fsGroup: the kubelet adds it to the container's supplementary groups.
        groups=[str(pod_sc["fsGroup"])] if "fsGroup" in pod_sc else [],
        read_only=bool(sc.get("readOnlyRootFilesystem")),
        cap_drop=list(sc.get("capabilities", {}).get("drop", [])),
        no_new_privileges=sc.get("allowPrivilegeEscalation") is False,
        stop_grace_s=int(spec.get("terminationGracePeriodSeconds", 30)),
    )
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        volume = volumes.get(mount["name"])
        if volume is None:
            # A StatefulSet's volumeClaimTemplate: a volume of this pod's own, which outlives
            # its container as the claim outlives the pod.
            plan.volumes[mount["mountPath"]] = f"{volume_prefix}-{mount['name']}"
            plan.claims.add(plan.volumes[mount["mountPath"]])
        elif "persistentVolumeClaim" in volume:
            # A claim named in the values (the load test's results): one volume, whoever
            # mounts it, outliving the container as the claim outlives the pod.
            plan.volumes[mount["mountPath"]] = volume["persistentVolumeClaim"]["claimName"]
            plan.claims.add(volume["persistentVolumeClaim"]["claimName"])
        elif "configMap" in volume:
            plan.files[mount["mountPath"]] = dict((config_maps or {})[volume["configMap"]["name"]])
        elif "emptyDir" in volume:
            size = volume["emptyDir"].get("sizeLimit")
            # emptyDirs are world-writable directories; fsGroup makes them the pod's group's.
            options = "rw,exec,mode=1777"
            if size:
                options += f",size={quantity_bytes(size)}"
            plan.tmpfs[mount["mountPath"]] = options
        else:
            raise ValueError(f"{name}: volume {mount['name']} of an unsupported kind")
    limits = container.get("resources", {}).get("limits", {})
    if "memory" in limits:
        plan.memory = str(quantity_bytes(limits["memory"]))
    if "cpu" in limits:
        plan.cpus = f"{cpu_value(limits['cpu']):g}"
    plan.ports = {
        p.get("name", str(p["containerPort"])): p["containerPort"]
        for p in container.get("ports", [])
    }
    pre_stop = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command")
    plan.pre_stop = list(pre_stop or [])
    plan.ready = list(container.get("readinessProbe", {}).get("exec", {}).get("command", []))
    # A container that exits by itself is started again, as the kubelet does (with a back-off);
    # one the test kills or stops is not (Docker leaves a container stopped by hand alone).
    plan.restart = {"Always": "always", "OnFailure": "on-failure", "Never": ""}[
        spec.get("restartPolicy", "Always")
    ]
    return plan


def plans(docs: list[Obj], worker_replicas: int, gateway_replicas: int) -> list[PodPlan]:
    """Redis (and in cluster mode every node of the cluster), the Ray head, `worker_replicas`
    workers, `gateway_replicas` gateways, the Jobs (the cluster's bootstrap, the load test's
    Locust pods when the values enable it), and the `helm test` pod."""
    secrets = secret_data(docs)
    services = [d for d in docs if d["kind"] == "Service"]
    by_kind = {d["kind"]: d for d in docs if d["kind"] in ("Deployment", "RayCluster")}
    config_maps = {
        d["metadata"]["name"]: {k: str(v) for k, v in (d.get("data") or {}).items()}
        for d in docs
        if d["kind"] == "ConfigMap"
    }
    out: list[PodPlan] = []

    # Redis: the standalone StatefulSet, and in cluster mode the cluster's, every replica.
    for sts in (d for d in docs if d["kind"] == "StatefulSet"):
        template = sts["spec"]["template"]
        (container,) = template["spec"]["containers"]
        for i in range(int(sts["spec"].get("replicas", 1))):
            name = f"{sts['metadata']['name']}-{i}"
            out.append(
                _plan(
                    name,
                    template,
                    container,
                    [*container["command"], *container.get("args", [])],
                    container.get("env", []),
                    secrets,
                    services,
                    volume_prefix=name,
                    config_maps=config_maps,
                    governing=sts["spec"]["serviceName"],
                )
            )

    ray = by_kind["RayCluster"]
    cluster = ray["metadata"]["name"]
    head_svc = f"{cluster}-head-svc"
    head_fqdn = f"{head_svc}.{NAMESPACE}.{CLUSTER_DOMAIN}"
    ray_services = [
        *services,
        # The head Service KubeRay creates: it selects the head pod by the labels the operator adds.
        {"metadata": {"name": head_svc}, "spec": {"selector": {"ray.io/node-type": "head"}}},
    ]
    groups = [("head", ray["spec"]["headGroupSpec"], 1)]
    groups += [(g["groupName"], g, worker_replicas) for g in ray["spec"]["workerGroupSpecs"][:1]]
    for group_name, group, count in groups:
        head = group_name == "head"
        for i in range(count):
            template = {
                "metadata": {
                    "labels": {
                        **group["template"]["metadata"]["labels"],
                        "ray.io/cluster": cluster,
                        "ray.io/node-type": "head" if head else "worker",
                        "ray.io/group": "headgroup" if head else group_name,
                    }
                },
                "spec": group["template"]["spec"],
            }
            container = template["spec"]["containers"][0]
            # A Ray container's own command would replace the operator's `ray start`.
            assert "command" not in container
            assert "args" not in container
            params = kuberay_params(ray, head, container, head_fqdn)
            start = kuberay_command(params, head)
            env = [*container.get("env", []), *kuberay_env(ray, head, secrets, head_fqdn, start)]
            # The operator only adds what is not there: the chart's own entries win.
            entries: list[Obj] = []
            for entry in env:
                if all(e["name"] != entry["name"] for e in entries):
                    entries.append(entry)
            pod_name = f"{cluster}-head" if head else f"{cluster}-{group_name}-worker-{i}"
            out.append(
                _plan(
                    pod_name,
                    template,
                    container,
                    [*KUBERAY_SHELL, start],
                    entries,
                    secrets,
                    ray_services,
                    pod_name,
                )
            )

    def replicas(owner: Obj, container: Obj, count: int) -> None:
        """`count` pods of a Deployment's or a Job's template, named after their owner."""
        template = owner["spec"]["template"]
        for i in range(count):
            pod_name = f"{owner['metadata']['name']}-{i}"
            command = [*container["command"], *container.get("args", [])]
            env = container.get("env", [])
            out.append(
                _plan(
                    pod_name,
                    template,
                    container,
                    command,
                    env,
                    secrets,
                    services,
                    pod_name,
                    config_maps,
                )
            )

    gateway = by_kind["Deployment"]
    containers = gateway["spec"]["template"]["spec"]["containers"]
    replicas(gateway, next(c for c in containers if c["name"] == "gateway"), gateway_replicas)
    # Jobs (the load test's Locust master and workers): `parallelism` pods each.
    for job in (d for d in docs if d["kind"] == "Job"):
        (container,) = job["spec"]["template"]["spec"]["containers"]
        replicas(job, container, int(job["spec"].get("parallelism", 1)))
    for pod in (d for d in docs if d["kind"] == "Pod"):
        (container,) = pod["spec"]["containers"]
        out.append(
            _plan(
                pod["metadata"]["name"],
                pod,
                container,
                [*container["command"], *container.get("args", [])],
                container.get("env", []),
                secrets,
                services,
                pod["metadata"]["name"],
                config_maps,
            )
        )
    return out
