"""The idle floor: what table actors that do nothing cost the node, with and without Ray's quiet
settings (cluster.procs.RAY_QUIET).

    python -m lab.idle_floor --actors 40 --seconds 60            # both settings, in turn
    python -m lab.idle_floor --actors 40 --seconds 60 --quiet-ray 1
    python -m lab.idle_floor --actors 20 --seconds 20 --quiet-ray 1 --env MALLOC_ARENA_MAX=4

`--env KEY=VALUE` (repeatable) sets a variable in the stack's environment, which Ray's processes,
the table actors among them, inherit: how a variant of the actor's process is measured against
the defaults. Each result line says when its sampling started (UTC) and which variables it set.

For each setting it starts the embedded stack with a pool of `--actors` ready table actors
(created ahead of any table, exactly like the ones live tables use), waits for them, samples
CPU and memory for `--seconds`, and prints CPU per actor (% of one core), USS per actor, and the
CPU of Ray's own processes and of the gateway.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from pathlib import Path

import psutil

from cluster.stack import Launched, Spec
from loadtests import cli
from loadtests.figures import emit
from loadtests.node import NodeSampler, machine, tree
from loadtests.report import NodeRow, node_means


def measure(
    actors: int, seconds: float, quiet: bool, out: Path, env: dict[str, str] | None = None
) -> dict[str, object]:
    spec = Spec.under_load(pool=actors, quiet_ray=quiet, settings=dict(env or {}))
    stack = Launched(spec, out / f"stack-quiet{int(quiet)}.log")
    stack.start()
    try:
        assert stack.pid is not None
        deadline = time.monotonic() + 60 + actors * 2.0
        while time.monotonic() < deadline:
            n = sum(1 for p in tree(stack.pid) if "TableActor" in _name(p))
            if n >= actors:
                break
            time.sleep(1.0)
        time.sleep(10.0)  # let start-up work finish
        seen = actor_env(stack.pid, env or {})
        pydantic = actor_maps(stack.pid, "/pydantic_core/")
        sampler = NodeSampler(out / f"node-quiet{int(quiet)}.csv", stack.pid, uss_every=3)
        sampler.start()
        t0 = time.time()
        time.sleep(seconds)
        t1 = time.time()
        sampler.stop()
        means = node_means(sampler_rows(sampler), t0, t1)
    finally:
        stack.stop()
    ta = means.get("table_actors", {})
    count = max(1.0, ta.get("procs", 0.0))
    return {
        "utc": datetime.fromtimestamp(t0, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "quiet_ray": quiet,
        "env": dict(env or {}),
        "env_in_actor": seen,
        "pydantic_in_actor": pydantic,
        "actors": int(count),
        "cpu_per_actor_pct": round(ta.get("cpu", 0.0) / count, 3),
        "uss_mb_per_actor": round(ta.get("uss_mb_actor", float("nan")), 1),
        "rss_mb_per_actor": round(ta.get("rss_mb", 0.0) / count, 1),
        "cpu_table_actors_pct": round(ta.get("cpu", 0.0), 1),
        "cpu_ray_pct": round(means.get("ray", {}).get("cpu", 0.0), 1),
        "cpu_gateway_pct": round(means.get("gateway", {}).get("cpu", 0.0), 1),
        "cpu_redis_pct": round(means.get("redis", {}).get("cpu", 0.0), 1),
    }


def _name(p: psutil.Process) -> str:
    try:
        return str(p.name())
    except psutil.Error:
        return ""


def actor_env(root: int, env: dict[str, str]) -> bool | None:
    """Whether a table actor's process has every variable of `env` (None: no actor to read)."""
    for p in tree(root):
        if "TableActor" in _name(p):
            try:
                got = p.environ()
            except psutil.Error:
                continue
            return all(got.get(k) == v for k, v in env.items())
    return None


def actor_maps(root: int, part: str) -> bool | None:
    """Whether a table actor's process maps a file whose path contains `part` (a library's
    native extension: the library was imported). None: no actor to read."""
    for p in tree(root):
        if "TableActor" in _name(p):
            try:
                return any(part in m.path for m in p.memory_maps(grouped=True))
            except psutil.Error:
                continue
    return None


def env_setting(text: str) -> tuple[str, str]:
    """`KEY=VALUE` from the command line."""
    key, sep, value = text.partition("=")
    if not sep or not key or not key.replace("_", "").isalnum():
        raise argparse.ArgumentTypeError(f"not KEY=VALUE: {text!r}")
    return key, value


def sampler_rows(sampler: NodeSampler) -> list[NodeRow]:
    return [
        NodeRow(r.t, r.group, r.cpu, r.rss_mb, r.procs, r.uss_mb_per_actor) for r in sampler.rows
    ]


def main() -> None:
    p = cli.command("lab.idle_floor", __doc__)
    p.add_argument("--actors", type=int, default=40)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--quiet-ray", choices=("0", "1", "both"), default="both")
    p.add_argument("--out", type=Path, default=Path("results") / "idle-floor")
    p.add_argument(
        "--env",
        type=env_setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set in the environment of the stack and Ray's processes (repeatable)",
    )
    a = p.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    settings = [False, True] if a.quiet_ray == "both" else [a.quiet_ray == "1"]
    emit({"machine": machine()})
    for quiet in settings:
        emit(measure(a.actors, a.seconds, quiet, a.out, dict(a.env)))


if __name__ == "__main__":
    main()
