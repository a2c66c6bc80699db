"""Which Ray node each table actor runs on: live tables and pooled actors, per node.

    python -m loadtests.placement --address 127.0.0.1:6379

It joins the cluster as a short-lived driver of its own (so the process that asks — a load test,
a test — never becomes a Ray driver itself), asks every named table actor for its node, and
prints one JSON object: {node id: {"tables": n, "pool": m}}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from actors.keys import ACTOR_PREFIX
from loadtests import cli
from loadtests.figures import emit

ROOT = Path(__file__).resolve().parents[1]


def tables_per_node(address: str, namespace: str) -> dict[str, dict[str, int]]:
    import ray

    from actors.protocol import Probe
    from actors.ray_calls import answered, send
    from cluster.connect import connect_ray
    from cluster.settings import Settings

    connect_ray(Settings(ray_address=address, ray_namespace=namespace))
    try:
        names = [
            a["name"]
            for a in ray.util.list_named_actors(all_namespaces=True)
            if a["namespace"] == namespace and a["name"].startswith(ACTOR_PREFIX)
        ]
        refs = [send(ray.get_actor(n, namespace=namespace), Probe()) for n in names]
        tables: Counter[str] = Counter()
        pool: Counter[str] = Counter()
        for raw in ray.get(refs, timeout=60):
            answer = answered(Probe(), raw)
            (tables if answer.code else pool)[answer.node] += 1
    finally:
        ray.shutdown()
    return {n: {"tables": tables[n], "pool": pool[n]} for n in sorted(set(tables) | set(pool))}


def placement(
    address: str, namespace: str = "quatro", token_path: str | None = None
) -> dict[str, dict[str, int]]:
    """The same, from a child process; `token_path`: the file of the cluster's Ray token."""
    env = dict(os.environ)
    if token_path is not None:
        env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=token_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loadtests.placement",
            "--address",
            address,
            "--namespace",
            namespace,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    last = done.stdout.strip().splitlines()[-1]
    return dict(json.loads(last))


def main() -> None:
    p = cli.command("placement", __doc__)
    p.add_argument("--address", required=True, help="the Ray head, host:port")
    p.add_argument("--namespace", default="quatro")
    a = p.parse_args()
    emit(tables_per_node(a.address, a.namespace))


if __name__ == "__main__":
    main()
