"""Rendering the chart with the helm binary `make helm-tools` installs, for the tests beside this.

HELM names another helm binary; QUATRO_CHART another chart directory (e.g. an old version of
this one, to check that a test fails on it). Without helm the tests fail, saying how to get it:
a skipped chart test would pass CI with nothing checked.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = Path(os.environ.get("QUATRO_CHART", REPO / "helm" / "quatro"))
HELM = Path(os.environ.get("HELM", REPO / ".cache" / "tools" / "bin" / "helm"))

# Helm's own limit on release names; the longest one must still give names Kubernetes accepts.
LONGEST_RELEASE = "production-quatro-europe-west1-card-games-blue-canary"

# Override sets rendered by the tests: each exercises a way operators install the chart.
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "default": ("quatro", {}),
    "long-release-one-replica": (LONGEST_RELEASE, {"gateway": {"replicas": 1}}),
    "fullname-override": (
        "blue",
        {"fullnameOverride": "quatro-games-for-the-whole-family-in-every-time-zone-on-earth"},
    ),
    "external-redis": (
        "quatro",
        {
            "redis": {
                "enabled": False,
                "external": {"host": "redis.example.internal", "port": 6380, "db": 2},
                "auth": {"existingSecret": "managed-redis", "existingSecretKey": "password"},
            }
        },
    ),
    # A managed standalone Redis over TLS with an ACL user (Azure's default, ElastiCache's and
    # Memorystore's option).
    "external-redis-tls": (
        "quatro",
        {
            "redis": {
                "enabled": False,
                "external": {
                    "host": "redis.example.internal",
                    "port": 6380,
                    "tls": {"enabled": True, "caSecret": "managed-redis-ca", "caKey": "root.pem"},
                },
                "auth": {
                    "existingSecret": "managed-redis",
                    "existingSecretKey": "password",
                    "existingSecretUsernameKey": "username",
                },
            }
        },
    ),
    # The chart's own Redis Cluster: 3 primaries x 1 replica.
    "redis-cluster": ("quatro", {"redis": {"mode": "cluster"}}),
    # Bigger, on the longest release name, nodes kept apart for good, a fixed Ray cluster (the
    # head then needs no service-account token).
    "redis-cluster-large": (
        LONGEST_RELEASE,
        {
            "redis": {
                "mode": "cluster",
                "cluster": {
                    "primaries": 5,
                    "replicasPerPrimary": 2,
                    "antiAffinity": "hard",
                    "nodeTimeoutMs": 3000,
                    "persistence": {"storageClass": "fast-ssd", "size": "20Gi"},
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {
                                "matchLabels": {"app.kubernetes.io/component": "redis-cluster"}
                            },
                        }
                    ],
                },
            },
            "ray": {"autoscaling": {"enabled": False}},
        },
    ),
    # A managed Redis Cluster over mutual TLS with an ACL user.
    "external-cluster-tls": (
        "quatro",
        {
            "redis": {
                "mode": "cluster",
                "enabled": False,
                "external": {
                    "seeds": ["redis-0.example.internal:6380", "redis-1.example.internal:6380"],
                    "tls": {
                        "enabled": True,
                        "caSecret": "managed-redis-ca",
                        "clientCertSecret": "quatro-redis-client",
                    },
                },
                "auth": {
                    "existingSecret": "managed-redis",
                    "existingSecretKey": "password",
                    "existingSecretUsernameKey": "username",
                },
            }
        },
    ),
    "token-existing-secret": (
        "games",
        {"nameOverride": "cards", "ray": {"auth": {"existingSecret": "ray-token-from-vault"}}},
    ),
    "scaled": (
        "quatro",
        {
            "gateway": {
                "replicas": 3,
                "autoscaling": {"enabled": True, "minReplicas": 3, "targetPlayersPerPod": 400},
                "serviceMonitor": {"enabled": True, "labels": {"release": "prometheus"}},
                "ingress": {
                    "enabled": True,
                    "className": "nginx",
                    "annotations": {"example.com/idle-timeout": "3600"},
                    "tls": [{"hosts": ["quatro.example.com"], "secretName": "quatro-tls"}],
                    "controllerNamespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}
                    },
                },
                "nodeSelector": {"pool": "edge"},
                "tolerations": [{"key": "edge", "operator": "Exists", "effect": "NoSchedule"}],
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {
                            "matchLabels": {"app.kubernetes.io/component": "gateway"}
                        },
                    }
                ],
            },
            "ray": {"workers": {"nodeSelector": {"pool": "tables"}}},
            "redis": {"persistence": {"storageClass": "fast-ssd"}},
            "monitoring": {
                "grafanaDashboard": {"enabled": True},
                "prometheusRule": {"enabled": True},
            },
        },
    ),
    "auth-disabled": ("quatro", {"ray": {"auth": {"mode": "disabled"}}}),
    # The distributed load test (off by default), as an engineer runs it with Prometheus.
    "loadtest": (
        LONGEST_RELEASE,
        {
            "loadtest": {
                "enabled": True,
                "run": "week-49-peak",
                "workers": 3,
                "users": 48,
                "ttlSecondsAfterFinished": 86400,
                "extraArgs": ["--match-rounds", "3"],
                "results": {"existingClaim": "loadtest-results"},
                "master": {
                    "allowFrom": [
                        {
                            "namespaceSelector": {
                                "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
                            }
                        }
                    ]
                },
                "serviceMonitor": {"enabled": True, "labels": {"release": "prometheus"}},
                "nodeSelector": {"pool": "loadgen"},
            }
        },
    ),
}


@dataclass(frozen=True)
class Rendered:
    release: str
    values: dict[str, Any]
    text: str
    docs: list[dict[str, Any]]
    notes: str

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [d for d in self.docs if d["kind"] == kind]

    def one(self, kind: str) -> dict[str, Any]:
        found = self.of_kind(kind)
        assert len(found) == 1, f"{len(found)} {kind} objects"
        return found[0]


def helm(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    if not (HELM.is_file() and os.access(HELM, os.X_OK)):
        pytest.fail(
            f"no helm binary at {HELM}: run `make helm-tools` (or set HELM=/path/to/helm)",
            pytrace=False,
        )
    return subprocess.run(
        [str(HELM), *args], capture_output=True, text=True, check=check, timeout=120
    )


def values_file(values: dict[str, Any]) -> Path:
    with tempfile.NamedTemporaryFile(
        "w", suffix=".yaml", prefix="quatro-values-", delete=False
    ) as handle:
        yaml.safe_dump(values, handle)
    return Path(handle.name)


@functools.cache
def render(case: str) -> Rendered:
    release, values = CASES[case]
    return render_values(release, json.dumps(values, sort_keys=True))


@functools.cache
def render_values(release: str, values_json: str) -> Rendered:
    values = json.loads(values_json)
    path = values_file(values)
    try:
        out = helm("template", release, str(CHART), "-f", str(path))
        # NOTES.txt is rendered by install only; a client-side dry run needs no cluster.
        dry = helm(
            "install", release, str(CHART), "-f", str(path), "--dry-run=client", "-o", "json"
        )
    finally:
        path.unlink()
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    return Rendered(release, values, out.stdout, docs, json.loads(dry.stdout)["info"]["notes"])


def pod_specs(r: Rendered) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every pod spec the release makes, named by where it comes from: workloads, the test pod
    and the RayCluster's head and worker templates."""
    for doc in r.docs:
        kind, name = doc["kind"], doc["metadata"]["name"]
        if kind in ("Deployment", "StatefulSet", "Job"):
            yield f"{kind}/{name}", doc["spec"]["template"]["spec"]
        elif kind == "Pod":
            yield f"Pod/{name}", doc["spec"]
        elif kind == "RayCluster":
            yield f"RayCluster/{name}/head", doc["spec"]["headGroupSpec"]["template"]["spec"]
            for group in doc["spec"].get("workerGroupSpecs", []):
                yield f"RayCluster/{name}/{group['groupName']}", group["template"]["spec"]


def pod_labels(r: Rendered) -> dict[str, dict[str, str]]:
    """The labels of each component's pods, by app.kubernetes.io/component."""
    found: dict[str, dict[str, str]] = {}
    for doc in r.docs:
        templates: list[dict[str, Any]] = []
        if doc["kind"] in ("Deployment", "StatefulSet", "Job"):
            templates.append(doc["spec"]["template"])
        elif doc["kind"] == "Pod":
            templates.append(doc)
        elif doc["kind"] == "RayCluster":
            templates.append(doc["spec"]["headGroupSpec"]["template"])
            templates += [g["template"] for g in doc["spec"].get("workerGroupSpecs", [])]
        for template in templates:
            labels = template["metadata"]["labels"]
            found[labels["app.kubernetes.io/component"]] = labels
    return found


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A Kubernetes label selector (matchLabels and In/NotIn/Exists expressions) on labels."""
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions", []):
        key, op, vals = expr["key"], expr["operator"], expr.get("values", [])
        if op == "In" and labels.get(key) not in vals:
            return False
        if op == "NotIn" and labels.get(key) in vals:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True
