"""The chart's Redis Cluster, run as its pods (tests/deploy/conftest.py): three primaries with a
replica each, formed by the bootstrap Job. A primary killed mid-match: its replica takes over
and the match plays on with every point; a primary stopped as Kubernetes stops a pod hands its
slots over first; the bootstrap run again changes nothing; the bus is the nodes' alone.

Each test leaves every pod running and the cluster whole for the next."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time

import pytest

from actors import keys
from tests.cluster.client import Frame, Player
from tests.deploy.conftest import REDIS_MODE
from tests.deploy.deployment import Deployment
from tests.deploy.test_deploy import drive, gateways, into_a_round, summary, table

pytestmark = [
    pytest.mark.deploy,
    pytest.mark.skipif(REDIS_MODE != "cluster", reason="QUATRO_DEPLOY_REDIS_MODE=standalone"),
]


def _roles(d: Deployment) -> dict[str, str]:
    """pod -> "master" or "slave", as the cluster sees it; "fail" for a node it holds failed."""
    roles = {}
    for fields in d.cluster_nodes():
        flags = fields[2]
        role = "fail" if "fail" in flags else "master" if "master" in flags else "slave"
        roles[d.node_pod(fields)] = role
    return roles


def _whole(d: Deployment) -> bool:
    """Every node back, Ready (the chart's probe: cluster_state ok, a replica in step), and three
    primaries each with a replica."""
    nodes = d.pods("redis-cluster")
    if not all(d.running(p) and d.probe_ready(p) for p in nodes):
        return False
    if len(d.cluster_nodes()) != len(nodes):  # no stale identity left over
        return False
    roles = _roles(d)
    return (
        sorted(roles) == sorted(nodes) and sorted(roles.values()) == ["master"] * 3 + ["slave"] * 3
    )


def _node_ids(d: Deployment) -> dict[str, str]:
    return {d.node_pod(f): f[0] for f in d.cluster_nodes()}


def _slot_owners(d: Deployment) -> dict[str, list[str]]:
    return {d.node_pod(f): f[8:] for f in d.cluster_nodes() if "master" in f[2]}


def test_the_cluster_is_three_primaries_with_a_replica_each(deployment: Deployment) -> None:
    d = deployment
    assert len(d.pods("redis-cluster")) == 6
    assert _whole(d)
    info = d.redis("CLUSTER", "INFO")
    assert "cluster_slots_ok:16384" in info
    assert "cluster_size:3" in info
    # Each node announces its stable name, and clients are sent there, never to an address.
    for fields in d.cluster_nodes():
        host = fields[1].split(",")[1]
        assert host.startswith(d.node_pod(fields) + "."), fields
    slots = d.redis("CLUSTER", "SLOTS")
    assert ".svc.cluster.local" in slots
    # A primary and its replica are different pods (and, with the anti-affinity, machines).
    nodes = d.cluster_nodes()
    by_id = {f[0]: d.node_pod(f) for f in nodes}
    for f in nodes:
        if "slave" in f[2]:
            assert by_id[f[3]] != d.node_pod(f)
    # The node runs as the chart says: not root, its volume its group's, AOF on.
    node = d.pods("redis-cluster")[0]
    assert d.exec(node, "id", "-u") == "10001"
    assert d.exec(node, "redis-cli", "CONFIG", "GET", "appendonly").split() == ["appendonly", "yes"]
    assert d.exec(node, "sh", "-c", "cat /proc/1/comm") == "redis-server"


def test_the_bootstrap_run_again_changes_nothing(deployment: Deployment) -> None:
    """What `helm upgrade` with another shape or image does: the Job runs on a formed cluster.
    It checks it, leaves every node and slot where it is, and succeeds."""
    d = deployment
    ids, owners = _node_ids(d), _slot_owners(d)
    (boot,) = d.pods("redis-bootstrap")
    d.start_again(boot)
    d.wait_exit(boot, 120)
    logs = d.logs(boot, 40)
    assert d.exit_code(boot) == 0, logs
    assert "the cluster is whole" in logs.splitlines()[-1]
    assert "creating the cluster" not in logs.split("the cluster is whole")[-2].splitlines()[-1]
    assert _node_ids(d) == ids
    assert _slot_owners(d) == owners


def test_a_node_that_lost_its_volume_is_a_replica_again_after_the_bootstrap(
    deployment: Deployment,
) -> None:
    """A pod rescheduled without its disk comes back as a new, empty node under the old name. The
    cluster marks the old identity unreachable; the bootstrap Job (run again by any
    `helm upgrade` that changes the cluster's shape, or by hand: docs/operations.md) makes the
    new node a replica of the primary that lacks one and forgets the old identity."""
    d = deployment
    replica = next(p for p, role in sorted(_roles(d).items()) if role == "slave")
    old = _node_ids(d)[replica]
    d.replace_losing_volumes(replica)
    d.wait(
        "the new node answers",
        lambda: d.exec(replica, "redis-cli", "ping") == "PONG",
        60,
        [replica],
    )
    assert not _whole(d)
    (boot,) = d.pods("redis-bootstrap")
    d.start_again(boot)
    d.wait_exit(boot, 120)
    logs = d.logs(boot, 200)
    assert d.exit_code(boot) == 0, logs
    assert f"forgetting {old}" in logs
    d.wait("the cluster whole again", lambda: _whole(d), 60, [replica, boot])
    assert _node_ids(d)[replica] != old


def test_the_bus_is_the_nodes_and_the_client_port_is_for_gateways_and_ray(
    deployment: Deployment,
) -> None:
    d = deployment
    a, b, *_ = d.pods("redis-cluster")
    (gcs,) = d.pods("redis")
    (head,) = d.pods("ray-head")
    worker = d.pods("ray-worker")[0]
    gateway = d.pods("gateway")[0]
    assert d.probe(b, a, 16379) == "open"
    assert d.probe(b, a, 6379) == "open"  # replication
    assert d.probe(gateway, a, 6379) == "open"
    assert d.probe(worker, a, 6379) == "open"
    for source in (gateway, worker, head, gcs):
        assert d.probe(source, a, 16379) == "timeout", source
    assert d.probe(gcs, a, 6379) == "timeout"
    # The standalone Redis holds Ray's GCS state only: the head reaches it, the rest do not.
    assert d.probe(head, gcs, 6379) == "open"
    for source in (gateway, worker, a):
        assert d.probe(source, gcs, 6379) == "timeout", source


async def patient(p: Player, kind: str, limit: float = 60) -> Frame:
    """A move as a player makes it through an outage: sent again while the table answers
    `unavailable` or nothing (its shard between primaries); acked, or `wrong_phase` once an
    earlier copy or the bots moved the phase on."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        with contextlib.suppress(TimeoutError):
            answer = await p.request(kind)
            if answer["type"] == "ack" or answer.get("code") == "wrong_phase":
                return answer
            assert answer.get("code") == "unavailable", answer
        assert loop.time() < deadline, f"{p.name}: {kind} not taken within {limit} s"
        await asyncio.sleep(1)


def _points_add_up(reveals: list[Frame], teams: int) -> None:
    """Every reveal adds exactly its scoring teams' points to the scores before it, from 0: no
    point lost, none counted twice, no round played twice."""
    scores = [0] * teams
    rounds = []
    for reveal in reveals:
        for team in reveal["scored"]:
            scores[team] += 1
        assert list(reveal["scores"]) == scores, (reveal, scores)
        rounds.append(reveal.get("round"))
    known = [r for r in rounds if r is not None]
    assert known == sorted(set(known)), rounds


async def test_a_primary_killed_mid_match_its_replica_takes_over_and_no_point_is_lost(
    deployment: Deployment,
) -> None:
    d = deployment
    a, b = gateways(d)
    humans = [(a, 0), (b, 1), (a, 2), (b, 3)]
    code, people = await table(d, humans, time_scale=0.05, bot_policy="smart")
    host = people[0]
    primary = await asyncio.to_thread(d.primary_of, keys.snapshot(code))
    # Every key of the table is in that slot's shard: the snapshot, the record, the log.
    for key in (keys.table(code), keys.log(code)):
        assert await asyncio.to_thread(d.primary_of, key) == primary
    loop = asyncio.get_running_loop()
    stamps: list[float] = []
    killed_at = 0.0
    took_over = 0.0
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200

    async def kill_after_the_first_point() -> None:
        nonlocal killed_at, took_over
        await host.wait_event(lambda e: e["type"] == "reveal", limit=120)
        await asyncio.to_thread(d.kill, primary)
        killed_at = loop.time()
        await asyncio.to_thread(
            d.wait,
            "a replica serves the killed primary's slots",
            lambda: d.primary_of(keys.snapshot(code)) != primary,
            60,
            d.pods("redis-cluster"),
        )
        took_over = loop.time() - killed_at

    async def clock() -> None:
        # When the host's events arrive: the pause the table's players see.
        seen = 0
        while True:
            e = await host.wait_event(lambda e: True, after=seen, limit=300)
            seen = e["seq"]
            stamps.append(loop.time())

    watch = asyncio.create_task(clock())
    try:
        ends, _ = await asyncio.gather(
            asyncio.gather(*(drive(p, host=p is host, limit=300, move=patient) for p in people)),
            kill_after_the_first_point(),
        )
    finally:
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch
    scores = ends[0]["scores"]
    assert all(e["scores"] == scores for e in ends)
    assert max(scores) == 5
    reveals = [e for e in host.events if e["type"] == "reveal"]
    _points_add_up(reveals, len(scores))
    assert reveals[-1]["scores"] == scores
    # Reveals after the kill: the match did go on through it.
    assert any(at > killed_at for at in stamps), "nothing happened after the kill"
    after = await summary(d.url(b), code)
    assert (after["phase"], after["scores"]) == ("over", scores)
    for p in people[1:]:
        assert [r["scores"] for r in p.events if r["type"] == "reveal"] == [
            r["scores"] for r in reveals
        ]
    pause = max((y - x for x, y in itertools.pairwise(stamps) if y > killed_at), default=0.0)
    print(
        f"[deploy] primary {primary} killed after the first point: its replica served the slot"
        f" {took_over:.1f} s later; the longest wait for an event after it {pause:.1f} s;"
        f" {len(reveals)} reveals, final {scores}",
        flush=True,
    )
    for p in people:
        assert not p.problems, p.problems
        await p.close()
    # The lost pod comes back (its volume kept its identity) as a replica of the one that
    # took its place.
    new_primary = await asyncio.to_thread(d.primary_of, keys.snapshot(code))
    await asyncio.to_thread(d.start_again, primary)
    await asyncio.to_thread(d.wait, "the cluster whole again", lambda: _whole(d), 120, [primary])
    roles = await asyncio.to_thread(_roles, d)
    assert roles[primary] == "slave"
    assert roles[new_primary] == "master"


async def test_a_primary_stopped_like_kubernetes_hands_its_slots_over_first(
    deployment: Deployment,
) -> None:
    """A drain or a rolling update: the pod's preStop hook has its replica take over (CLUSTER
    FAILOVER, every write copied first) before Redis stops, so the slots are never left unserved
    for the node timeout. A table of that shard plays through it."""
    d = deployment
    a, b = gateways(d)
    code, people = await table(d, [(a, 0), (b, 1)], time_scale=1.0, bot_policy="idle")
    host = people[0]
    primary = await asyncio.to_thread(d.primary_of, keys.snapshot(code))
    await into_a_round(code, people, rounds=1)
    started = time.monotonic()
    said = await asyncio.to_thread(d.stop_like_kubernetes, primary)
    stopped = time.monotonic() - started
    successor = await asyncio.to_thread(d.primary_of, keys.snapshot(code))
    assert successor != primary
    assert f"handed my slots to {d.ip(successor)}:6379" in said, said
    # The table plays on: the host calls, everyone sees the reveal, the point is counted once.
    mark = host.last_seq
    await patient(host, "quatro")
    reveal = await host.wait_event(lambda e: e["type"] == "reveal", after=mark, limit=30)
    _points_add_up([e for e in host.events if e["type"] == "reveal"], len(reveal["scores"]))
    assert sum(reveal["scores"]) >= 1
    print(
        f"[deploy] primary {primary} stopped like Kubernetes: {successor} took over in its"
        f" preStop, the pod gone {stopped:.1f} s after the stop began",
        flush=True,
    )
    for p in people:
        assert not p.problems, p.problems
        await p.close()
    await asyncio.to_thread(d.start_again, primary)
    await asyncio.to_thread(d.wait, "the cluster whole again", lambda: _whole(d), 120, [primary])
    assert (await asyncio.to_thread(_roles, d))[primary] == "slave"


async def test_every_node_back_at_once_on_new_addresses_is_the_same_cluster(
    deployment: Deployment,
) -> None:
    """A zone lost, or every node drained together: the pods come back at once on addresses none
    of them had. Each node writes its peers' new addresses into nodes.conf before it starts
    (files/redis-cluster/node.sh; Redis's own gossip finds one moved node, not all of them):
    the same nodes, the same slots, no bootstrap needed, and the gateways play on."""
    d = deployment
    nodes = d.pods("redis-cluster")
    ids, owners = _node_ids(d), _slot_owners(d)
    before = {p: d.ip(p) for p in nodes}
    for pod in nodes:
        await asyncio.to_thread(d.docker.run, "stop", d.container(pod))
    await asyncio.to_thread(d.readdress, nodes)
    assert all(d.ip(p) != before[p] for p in nodes)
    started = time.monotonic()
    for pod in nodes:
        await asyncio.to_thread(d.start_again, pod)
    await asyncio.to_thread(
        d.wait, "the cluster whole on its new addresses", lambda: _whole(d), 120, nodes
    )
    print(
        f"[deploy] every Redis node back on a new address: whole again after"
        f" {time.monotonic() - started:.1f} s",
        flush=True,
    )
    assert _node_ids(d) == ids
    assert _slot_owners(d) == owners
    for pod in d.pods("gateway"):
        await asyncio.to_thread(d.wait_gateway_ready, pod, 120)
    a, b = gateways(d)
    code, people = await table(d, [(a, 0), (b, 1)], time_scale=0.05, bot_policy="smart")
    assert (await people[0].rest("POST", f"/api/tables/{code}/start")).status_code == 200
    for p in people:
        await p.wait_event(lambda e: e["type"] == "round", limit=60)
        await p.close()
