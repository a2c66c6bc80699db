"""The deployment of tests/deploy: a dockerd of the test's own, the image built, the chart
rendered, and its pods run as containers, once for the module; all of it removed at the end,
whatever happened.

Every test here is marked `deploy`, which the default pytest run leaves out (pyproject's
addopts): `make test-deploy` runs them. Async tests run with asyncio.run in the test's thread.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.deploy import netpol, pods
from tests.deploy.deployment import Deployment
from tests.deploy.docker import Dockerd
from tests.deploy.image import IMAGE_REPO, IMAGE_TAG, REDIS_REPO, REDIS_TAG, build_images
from tests.helm.render import Rendered, render_values

RELEASE = "quatro"
WORKERS = 2
GATEWAYS = 2
# The load test's results: a claim of the values' own, so the HTML that Locust writes as the
# master exits is still there to read (a docker volume here).
LOADTEST_RESULTS = "quatro-loadtest-results"
# The game store: the chart's own Redis Cluster (three primaries, a replica each, the chart's
# node timeout), the mode a primary can be lost in; QUATRO_DEPLOY_REDIS_MODE=standalone runs the
# same tests on the single Redis instead.
REDIS_MODE = os.environ.get("QUATRO_DEPLOY_REDIS_MODE", "cluster")
# What the test changes in the chart's defaults, and why: its own image and Redis image (no
# registry here), test hooks for a fast clock and idle bots, two workers to move tables between,
# a smaller table pool (each pooled table is a ~100 MB process, on 2 cores), and a short load
# test: two Locust workers, four 4-seat tables, the rules' clock 5x faster and players 4x
# (test hooks), 30 s of play, the master up 10 s after it.
VALUES: dict[str, Any] = {
    "image": {"repository": IMAGE_REPO, "tag": IMAGE_TAG, "pullPolicy": "Never"},
    "testHooks": True,
    "ray": {"workers": {"replicas": WORKERS}},
    "gateway": {"replicas": GATEWAYS, "tablePool": 2},
    "redis": {
        "mode": REDIS_MODE,
        "image": {"repository": REDIS_REPO, "tag": REDIS_TAG, "pullPolicy": "Never"},
    },
    "loadtest": {
        "enabled": True,
        "workers": 2,
        "users": 16,
        "spawnRate": 8,
        "runTime": "30s",
        "linger": 10,
        "workersWait": 120,
        "players": 4,
        "pace": 4,
        "dropRate": 1,
        "extraArgs": ["--time-scale", "0.2"],
        "results": {"existingClaim": LOADTEST_RESULTS},
    },
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.deploy)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    here = Path(__file__).parent
    if not Path(str(pyfuncitem.fspath)).is_relative_to(here):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**kwargs))
    return True


# Session-wide: tests/deploy's modules share one deployment (bringing it up is most of the time).
@pytest.fixture(scope="session")
def rendered() -> Rendered:
    return render_values(RELEASE, json.dumps(VALUES, sort_keys=True))


def _log(message: str) -> None:
    # Figures for the run's output (-s shows them; the times matter for CI's budget).
    print(f"[deploy {time.strftime('%H:%M:%S')}] {message}", flush=True)


@pytest.fixture(scope="session")
def deployment(rendered: Rendered, request: pytest.FixtureRequest) -> Iterator[Deployment]:
    dockerd = Dockerd()
    started = time.monotonic()
    deployed: Deployment | None = None
    enforcer: netpol.Enforcer | None = None
    ready = False
    try:
        docker = dockerd.start()
        # Containers an interrupted earlier run left in this daemon's data root.
        docker.run("container", "prune", "--force", check=False)
        build_images(docker)  # at once when `make deploy-image` made them (CI, beside the suite)
        _log(f"image ready after {time.monotonic() - started:.0f} s")
        plans = pods.plans(rendered.docs, worker_replicas=WORKERS, gateway_replicas=GATEWAYS)
        deployed = Deployment(docker, {p.name: p for p in plans})
        deployed.create_network()
        isolated, allowed = netpol.admitted(rendered.docs, plans)
        enforcer = netpol.Enforcer(deployed.subnet, deployed.ips)
        deployed.enforcer = enforcer
        _log(f"{enforcer.apply(isolated, allowed)} NetworkPolicy admissions enforced")
        enforcer.apply_services(netpol.service_ports(rendered.docs, plans))
        # The standalone Redis (in cluster mode Ray's GCS store) and every cluster node at once,
        # as a Parallel StatefulSet starts them; then the cluster's bootstrap Job.
        redis = [*deployed.pods("redis"), *deployed.pods("redis-cluster")]
        for pod in redis:
            deployed.start(pod)
        for boot in deployed.pods("redis-bootstrap"):
            deployed.start(boot)
            deployed.wait_exit(boot, 180)
            assert deployed.exit_code(boot) == 0, deployed.logs(boot)
            _log(f"Redis Cluster formed after {time.monotonic() - started:.0f} s")
        for pod in redis:
            deployed.wait_probe(pod, 90)
        (head,) = deployed.pods("ray-head")
        deployed.start(head)
        # A Ray node that finds no head node in the GCS, or whose own raylet registers late,
        # exits and is restarted (KubeRay also holds workers back until the GCS answers): the
        # head's own node is waited for first, so that on a loaded machine (a minute there) the
        # others do not spend their start failing.
        deployed.wait(
            "the head's Ray node",
            lambda: int(deployed.ray("print(len(ray.nodes()))")) >= 1,
            300,
            [head],
        )
        for component in ("ray-worker", "gateway"):
            for pod in deployed.pods(component):
                deployed.start(pod)
        for pod in deployed.pods("gateway"):
            deployed.wait_gateway_ready(pod)
        deployed.slots = WORKERS * _worker_slots(rendered)
        deployed.wait(
            f"{deployed.slots} table slots (every worker joined)",
            deployed.all_slots,
            180,
            deployed.pods("ray-worker"),
        )
        _log(f"deployment ready after {time.monotonic() - started:.0f} s")
        ready = True
        yield deployed
    finally:
        if deployed is not None:
            # The pods' logs when something failed, the bring-up included (or when asked): CI
            # has nothing else.
            if not ready or request.session.testsfailed or os.environ.get("QUATRO_DEPLOY_LOGS"):
                for name in deployed.plans:
                    print(f"--- {name}\n{deployed.logs(name, 200)}")
            deployed.teardown()
        if enforcer is not None:
            enforcer.remove()
        dockerd.stop()
        _log(f"torn down after {time.monotonic() - started:.0f} s")


def _worker_slots(rendered: Rendered) -> int:
    group = rendered.one("RayCluster")["spec"]["workerGroupSpecs"][0]
    resources = json.loads(group["rayStartParams"]["resources"].strip("'"))
    return int(resources["table_slot"])
