"""The chart's own pods, run as containers (tests/deploy/conftest.py), play and survive faults.

Players talk to the gateways only through their published loopback ports and only with the wire
protocol (docs/protocol.md). Faults are what a cluster does to pods: a worker node lost, a gateway
killed, the head pod deleted, a gateway drained (preStop, then SIGTERM). Each test leaves every pod
running for the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.exceptions import WebSocketException

from actors import keys
from tests.cluster.client import Frame, Player
from tests.deploy.deployment import Deployment
from tests.deploy.docker import DockerError
from tests.helm.render import Rendered

# Left out of the default run (pyproject's addopts): `make test-deploy` selects it.
pytestmark = pytest.mark.deploy

PLAYERS = 6
# What the host waits for before calling Quatro!: the bots have started to play the round.
PLAYED = ("swapped", "reveal")


def gateways(d: Deployment) -> tuple[str, str]:
    a, b = d.pods("gateway")
    return a, b


async def table(
    d: Deployment,
    humans: list[tuple[str, int]],
    *,
    time_scale: float,
    bot_policy: str,
) -> tuple[str, list[Player]]:
    """A 6-seat table: humans at the given (gateway pod, seat) places, the first one hosting
    from seat 0; bots in the other seats; everyone connected through their own gateway."""
    people: list[Player] = []
    for i, (pod, _seat) in enumerate(humans):
        people.append(await Player(d.url(pod), f"P{i}-{pod[-1]}").register())
    host = people[0]
    scenario = {"seed": 11, "time_scale": time_scale, "bot_policy": bot_policy}
    # The level named: a new player's table would start at relaxed (gateway/newcomers.py).
    body = {"players": PLAYERS, "scenario": scenario, "bot_level": "normal"}
    r = await host.rest("POST", "/api/tables", json=body)
    assert r.status_code == 201, r.text
    code = str(r.json()["code"])
    seats = {seat for _, seat in humans}
    assert humans[0][1] == 0
    for p, (_, seat) in zip(people[1:], humans[1:], strict=True):
        r = await p.rest("POST", f"/api/tables/{code}/seats/{seat}")
        assert r.status_code == 200, r.text
    for seat in sorted(set(range(PLAYERS)) - seats):
        r = await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})
        assert r.status_code == 200, r.text
    for p in people:
        await p.connect(code)
    return code, people


async def summary(base: str, code: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base, timeout=10) as c:
        r = await c.get(f"/api/tables/{code}")
    assert r.status_code == 200, r.text
    result: dict[str, Any] = r.json()
    return result


async def answered(p: Player, kind: str) -> Frame:
    """A move that may come late (the phase moved on): acked, or refused as `wrong_phase`."""
    answer = await p.request(kind)
    assert answer["type"] == "ack" or answer.get("code") == "wrong_phase", answer
    return answer


# -- bring-up -----------------------------------------------------------------------------------


def test_every_pod_runs_the_command_the_chart_renders(
    deployment: Deployment, rendered: Rendered
) -> None:
    d = deployment
    assert len(d.pods("ray-worker")) == 2
    assert len(d.pods("gateway")) == 2
    for pod in d.pods("gateway"):
        assert d.ready(pod)
    deploy = rendered.one("Deployment")["spec"]["template"]["spec"]["containers"][0]
    for pod in d.pods("gateway"):
        found = d.docker.run(
            "inspect", "--format", "{{json .Path}} {{json .Args}}", d.container(pod)
        )
        path, args = found.split(" ", 1)
        assert [json.loads(path), *json.loads(args)] == [*deploy["command"], *deploy["args"]]
        # The pod's hardening applies to the container: not root, nothing writable but emptyDirs.
        assert d.exec(pod, "id", "-u") == "10001"
        assert d.exec(pod, "sh", "-c", "touch /app/x 2>&1 || echo refused").endswith("refused")
    # Every Ray node is a member of one cluster: head, two workers, and each gateway's own node.
    alive = int(d.ray("print(sum(1 for n in ray.nodes() if n['Alive']))"))
    assert alive == 1 + 2 + 2


def test_the_network_policies_hold_between_pods(deployment: Deployment, rendered: Rendered) -> None:
    """What the rendered NetworkPolicies admit goes through; what they do not is dropped (a
    timeout, not a refusal)."""
    d = deployment
    # The game store: the single Redis, or a node of the cluster (whose own ports
    # test_redis_cluster.py probes further).
    (redis,) = d.pods("redis-cluster")[:1] or d.pods("redis")
    (head,) = d.pods("ray-head")
    worker = d.pods("ray-worker")[0]
    gateway = d.pods("gateway")[0]
    first = int(rendered.values.get("ray", {}).get("tablePorts", "20000-29999").split("-")[0])
    # Admitted: Ray and the gateways reach Redis; the gateway reaches the head's GCS and the
    # workers' table ports (nobody listens there yet: refused, but reached).
    assert d.probe(worker, redis, 6379) == "open"
    assert d.probe(gateway, redis, 6379) == "open"
    assert d.probe(gateway, head, 6379) == "open"
    assert d.probe(gateway, worker, first) in ("open", "refused")
    # Dropped: Redis is no Ray peer, and nothing but gateways reaches the table ports.
    assert d.probe(redis, head, 6379) == "timeout"
    assert d.probe(redis, worker, first) == "timeout"


def test_the_chart_s_helm_test_pod_passes(deployment: Deployment) -> None:
    """What `helm test` runs: /readyz through the gateway Service, then a table with bots."""
    d = deployment
    (pod,) = d.pods("test")
    d.start(pod)
    d.wait("the helm test pod ends", lambda: not d.running(pod), 300, [pod])
    logs = d.logs(pod)
    assert d.exit_code(pod) == 0, logs
    assert "readyz:" in logs


# -- a whole match --------------------------------------------------------------------------------


async def drive(
    p: Player,
    *,
    host: bool,
    limit: float,
    move: Callable[[Player, str], Awaitable[Frame]] = answered,
) -> Frame:
    """Play as a human: ready at each signing; the host also calls Quatro! once the bots have
    started swapping (they may beat it to a call) and skips each pause. Until `over`. Each
    move is made by `move` (test_redis_cluster's is patient through an outage)."""
    async with asyncio.timeout(limit):
        seen = 0
        while True:
            e = await p.wait_event(
                lambda e: e["type"] in ("signing", "round", "pause", "over"),
                after=seen,
                limit=limit,
            )
            seen = e["seq"]
            if e["type"] == "over":
                return e
            if e["type"] == "signing":
                await move(p, "ready")
            elif host and e["type"] == "round":
                # Let the bots play cards first: the first swap of the round, or 5 s.
                with contextlib.suppress(AssertionError):
                    await p.wait_event(lambda x: x["type"] in PLAYED, after=seen, limit=5)
                await move(p, "quatro")
            elif host and e["type"] == "pause":
                await move(p, "next_round")


async def test_a_whole_six_seat_match_through_both_gateways(deployment: Deployment) -> None:
    a, b = gateways(deployment)
    humans = [(a, 0), (b, 1), (a, 2), (b, 3)]
    code, people = await table(deployment, humans, time_scale=0.05, bot_policy="smart")
    host = people[0]
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
    ends = await asyncio.gather(*(drive(p, host=p is host, limit=300) for p in people))
    scores = ends[0]["scores"]
    assert all(e["scores"] == scores for e in ends)
    assert max(scores) == 5
    assert ends[0]["winners"] == [k for k, s in enumerate(scores) if s == 5]
    reveals = [e for e in host.events if e["type"] == "reveal"]
    assert reveals
    assert reveals[-1]["scores"] == scores
    # Played out by calls, not by rounds running out of time.
    assert all(r["reason"] in ("quatro", "contre") for r in reveals)
    assert any(e["type"] == "swapped" for e in host.events)
    # Players on either gateway saw the same match.
    for p in people[1:]:
        assert [r["scores"] for r in p.events if r["type"] == "reveal"] == [
            r["scores"] for r in reveals
        ]
    assert (await summary(deployment.url(b), code))["phase"] == "over"
    for p in people:
        assert not p.problems, p.problems
        await p.close()


# -- the chart's load test ----------------------------------------------------------------------


def _samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    return [
        (s.name, dict(s.labels), s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]


def _gateway_frames_in(d: Deployment, pod: str) -> float:
    """Client frames a gateway has received since it started (its /metrics)."""
    text = httpx.get(d.url(pod) + "/metrics", timeout=5).text
    return sum(v for name, _, v in _samples(text) if name == "quatro_frames_in_total")


def _seconds(duration: str) -> int:
    assert duration.endswith("s"), duration
    return int(duration[:-1])


def test_a_distributed_locust_run_plays_through_both_gateways_without_a_failure(
    deployment: Deployment, rendered: Rendered
) -> None:
    """The chart's Locust master and two workers, as their Jobs' pods render: the workers' users
    play four 4-seat tables through the gateway Service (both gateways behind it), the master
    serves the figures at /metrics, writes the CSV and, as it exits, the HTML to its volume."""
    d = deployment
    values = rendered.values["loadtest"]
    (master,) = d.pods("locust-master")
    workers = d.pods("locust-worker")
    assert len(workers) == values["workers"] == 2
    before = {g: _gateway_frames_in(d, g) for g in d.pods("gateway")}
    started = time.monotonic()
    d.start(master)
    for pod in workers:
        d.start(pod)
    web = d.url(master, "web")
    d.wait(
        "the Locust master serves /metrics",
        lambda: httpx.get(web + "/metrics", timeout=5).status_code == 200,
        90,
        [master],
    )
    # Only the workers reach the master's port; the web UI has no peer allowed by default.
    assert d.probe(workers[0], master, 5557) == "open"
    assert d.probe(d.pods("gateway")[0], master, 5557) == "timeout"
    assert (
        d.probe(d.pods("ray-worker")[0], master, values.get("master", {}).get("webPort", 8089))
        == "timeout"
    )
    assert d.probe(master, workers[0], 5557) == "timeout"

    figures: list[tuple[str, dict[str, str], float]] = []

    def run_over() -> bool:
        figures[:] = _samples(httpx.get(web + "/metrics", timeout=5).text)
        return ("locust_state", {"state": "stopped"}, 1.0) in figures

    d.wait(
        "the run's end (locust_state stopped)",
        run_over,
        _seconds(values["runTime"]) + 120,
        [master, *workers],
    )
    ran = time.monotonic() - started
    requests = sum(v for n, _, v in figures if n == "locust_requests_total")
    failures = {
        f"{labels['method']} {labels['name']}": v
        for n, labels, v in figures
        if n == "locust_failures_total" and v
    }
    assert ("locust_workers", {}, 2.0) in figures
    assert requests > 0
    assert failures == {}
    after = {g: _gateway_frames_in(d, g) for g in d.pods("gateway")}
    grown = {g: after[g] - before[g] for g in after}
    assert all(n > 0 for n in grown.values()), grown

    # Locust quits `linger` s after the run, writing the HTML; 0 means no failure.
    d.wait(
        "the master exits (--autoquit)",
        lambda: not d.running(master),
        values["linger"] + 60,
        [master],
    )
    assert d.exit_code(master) == 0, d.logs(master)
    d.wait(
        "the workers quit with their master",
        lambda: not any(d.running(p) for p in workers),
        60,
        workers,
    )
    # 0: the Job's OnFailure would otherwise start them again, against a master that is gone.
    assert [d.exit_code(p) for p in workers] == [0, 0], [d.logs(p) for p in workers]

    claim = values["results"]["existingClaim"]

    def result(name: str) -> str:
        # The claim outlives the master's container: read it as another pod of the test would.
        return d.docker.run(
            "run",
            "--rm",
            "--network=none",
            "--mount",
            f"type=volume,source={claim},target=/results,readonly",
            "--entrypoint=cat",
            d.plans[master].image,
            f"/results/{name}",
        )

    rows = list(csv.DictReader(io.StringIO(result("quatro_stats.csv"))))
    total = next(r for r in rows if r["Name"] == "Aggregated")
    assert int(total["Request Count"]) >= requests
    assert int(total["Failure Count"]) == 0
    assert len(result("quatro_stats_history.csv").splitlines()) > 2
    html = result("quatro.html")
    assert "Locust" in html
    assert "swap" in html
    swap = next((r for r in rows if r["Name"] == "swap→ack"), None)
    print(
        f"[deploy] load test: {int(total['Request Count'])} requests, 0 failures,"
        f" {float(total['Requests/s']):.1f} req/s over the run;"
        + (
            f" swap→ack p50 {swap['50%']} ms, p95 {swap['95%']} ms, p99 {swap['99%']} ms;"
            if swap
            else ""
        )
        + f" gateway frames in {grown}; run {ran:.0f} s,"
        f" all done {time.monotonic() - started:.0f} s; HTML {len(html)} bytes",
        flush=True,
    )


# -- faults ---------------------------------------------------------------------------------------


async def into_a_round(code: str, people: list[Player], rounds: int) -> Frame:
    """Start the table and play `rounds` rounds (the host calls Quatro!, whatever the cards), then
    deal one more and stop there: the round is open and, with idle bots and a real clock, stays
    exactly as it is for minutes. Returns the host's last `round` event."""
    host = people[0]
    assert (await host.rest("POST", f"/api/tables/{code}/start")).status_code == 200
    for n in range(1, rounds + 2):

        def signing(e: Frame, n: int = n) -> bool:
            return bool(e["type"] == "signing" and e["round"] == n)

        def dealt_now(e: Frame, n: int = n) -> bool:
            return bool(e["type"] == "round" and e["round"] == n)

        for p in people:
            await p.wait_event(signing)
            await answered(p, "ready")
        dealt = await host.wait_event(dealt_now)
        if n == rounds + 1:
            for p in people:
                await p.wait_event(dealt_now)
            return dealt
        await answered(host, "quatro")
        await host.wait_event(lambda e: e["type"] == "pause", after=dealt["seq"])
        await answered(host, "next_round")
    raise AssertionError("unreachable")


async def reconnect(p: Player, code: str, base: str, limit: float = 90) -> Frame:
    """Say hello again until a welcome comes (`unavailable`, 1013, while a table is moving)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        try:
            return await p.connect(code, base=base)
        except (AssertionError, OSError, TimeoutError, WebSocketException):
            if loop.time() > deadline:
                raise
            await asyncio.sleep(2)


def hand_of(p: Player) -> list[str]:
    dealt = p.latest("round")
    assert dealt is not None
    return [c["id"] for c in dealt["hand"]]


async def plays_on(code: str, people: list[Player]) -> None:
    """The host calls Quatro! and every player sees the reveal."""
    marks = [p.last_seq for p in people]
    await answered(people[0], "quatro")
    for p, mark in zip(people, marks, strict=True):
        await p.wait_event(lambda e: e["type"] == "reveal", after=mark, limit=30)


async def test_a_lost_worker_s_tables_come_back_on_the_other_with_scores_and_hands(
    deployment: Deployment,
) -> None:
    d = deployment
    a, b = gateways(d)
    code, people = await table(d, [(a, 0), (b, 1)], time_scale=1.0, bot_policy="idle")
    await into_a_round(code, people, rounds=1)
    before = await summary(d.url(a), code)
    assert before["phase"] == "playing"
    assert before["round"] == 2
    hands = [hand_of(p) for p in people]
    actor = json.loads(d.redis_get(keys.table(code)))["actor"]
    node = await asyncio.to_thread(d.table_node_ip, actor)
    workers = {d.ip(w): w for w in d.pods("ray-worker")}
    lost = workers.pop(node)
    (other,) = workers.values()
    await asyncio.to_thread(d.kill, lost)  # no preStop: the pod's processes just end
    killed = time.monotonic()
    try:
        # A gateway asked for the table moves it at once (actors/rescue.py), unless Ray's
        # verdict (5-6 s for a pod whose connections go silent) came first: then Ray restarts
        # it, counting no move.
        async with httpx.AsyncClient(base_url=d.url(b), timeout=60) as c:
            r = await c.get(f"/api/tables/{code}")
        took = time.monotonic() - killed
        assert r.status_code == 200, r.text
        record = json.loads(d.redis_get(keys.table(code)))
        assert record.get("moves", 0) in (0, 1), record
        how = "moved by a gateway" if record.get("moves") else "restarted by Ray"
        print(f"a lost worker pod's table answered again {took:.1f} s after the kill, {how}")
        actor = str(record["actor"])  # a pooled actor that took it over, or the same name
        await asyncio.to_thread(
            d.wait,
            "the table actor lives again, on the other worker",
            lambda: d.table_node_ip(actor) == d.ip(other),
            180,
            [other],
        )
        after = await summary(d.url(b), code)
        assert (after["scores"], after["round"], after["phase"]) == (
            before["scores"],
            before["round"],
            "playing",
        )
        for p, (pod, _), hand in zip(people, [(a, 0), (b, 1)], hands, strict=True):
            welcome = await reconnect(p, code, d.url(pod))
            assert welcome["table"]["scores"] == before["scores"]
            assert [c["id"] for c in welcome["table"]["hand"]] == hand
        await plays_on(code, people)
    finally:
        await asyncio.to_thread(d.start_again, lost)
        await asyncio.to_thread(d.wait, "the lost worker back", d.all_slots, 180, [lost])
        for p in people:
            await p.close()


async def test_a_worker_stopped_like_kubernetes_moves_its_tables_and_its_players_play_on(
    deployment: Deployment,
) -> None:
    """A rolling upgrade or a drain: the worker's preStop hook (actors.drain) moves its tables to
    the other worker before Ray stops. Players keep their WebSockets and lose nothing."""
    d = deployment
    a, b = gateways(d)
    code, people = await table(d, [(a, 0), (b, 1)], time_scale=1.0, bot_policy="idle")
    await into_a_round(code, people, rounds=1)
    before = await summary(d.url(a), code)
    assert (before["phase"], before["round"]) == ("playing", 2)
    hands = [hand_of(p) for p in people]
    actor = json.loads(d.redis_get(keys.table(code)))["actor"]
    node = await asyncio.to_thread(d.table_node_ip, actor)
    workers = {d.ip(w): w for w in d.pods("ray-worker")}
    leaving = workers.pop(node)
    (other,) = workers.values()
    try:
        await asyncio.to_thread(d.stop_like_kubernetes, leaving)
        # The hook's report, in the pod's log: every table here answered from elsewhere.
        reports = [
            json.loads(line)
            for line in d.logs(leaving, tail=400).splitlines()
            if line.startswith('{"node"')
        ]
        assert reports, d.logs(leaving)
        moves = reports[-1]
        print(f"[deploy] worker drained: {json.dumps(moves)}")
        states: dict[str, str] = {}
        for name in moves["stuck"]:
            # What Ray says of an actor that did not answer from elsewhere in time, in the
            # failure's own message (a CI report may show only that).
            try:
                states[name] = await asyncio.to_thread(d.actor_state, name)
            except DockerError as exc:
                states[name] = f"no record ({exc})"
        assert moves["here"] >= 1, moves
        # Cut off while their table moved into another actor: stopped, not moved; pooled ones
        # stopped for good meanwhile, or ready ones (no table) the drain ended: nothing to move.
        # The players' table is never among the ended: it came back (below, on the other node).
        gone = len(moves["superseded"]) + len(moves["retired"]) + len(moves["ended"])
        assert actor not in moves["ended"], moves
        assert moves["back"] + gone == moves["here"], (moves, states)
        assert moves["stuck"] == [], (moves, states)
        assert moves["unsaved"] == [], moves
        assert await asyncio.to_thread(d.table_node_ip, actor) == d.ip(other)
        after = await summary(d.url(b), code)
        assert (after["scores"], after["round"], after["phase"]) == (
            before["scores"],
            before["round"],
            "playing",
        )
        # The same connections play on: nobody was sent away, nobody reconnected.
        await plays_on(code, people)
        for p, hand in zip(people, hands, strict=True):
            assert p.close_code is None
            assert not p.problems, p.problems
            assert hand_of(p) == hand
    finally:
        await asyncio.to_thread(d.start_again, leaving)
        await asyncio.to_thread(d.wait, "the stopped worker back", d.all_slots, 180, [leaving])
        for p in people:
            await p.close()


async def test_a_killed_gateway_s_players_reconnect_through_the_other_and_keep_their_seats(
    deployment: Deployment,
) -> None:
    d = deployment
    a, b = gateways(d)
    places = [(a, 0), (b, 1), (a, 2)]
    code, people = await table(d, places, time_scale=1.0, bot_policy="idle")
    await into_a_round(code, people, rounds=0)
    hands = [hand_of(p) for p in people]
    await asyncio.to_thread(d.kill, a)
    try:
        for p, (pod, seat), hand in zip(people, places, hands, strict=True):
            if pod == a:
                await p.wait_closed(limit=30)
                welcome = await reconnect(p, code, d.url(b))
                assert welcome["you"]["seat"] == seat
                assert [c["id"] for c in welcome["table"]["hand"]] == hand
        await plays_on(code, people)
    finally:
        await asyncio.to_thread(d.start_again, a)
        await asyncio.to_thread(d.wait_gateway_ready, a)
        for p in people:
            await p.close()


async def test_tables_survive_a_restart_of_the_head(deployment: Deployment) -> None:
    d = deployment
    a, b = gateways(d)
    places = [(a, 0), (b, 1)]
    code, people = await table(d, places, time_scale=1.0, bot_policy="idle")
    await into_a_round(code, people, rounds=1)
    before = await summary(d.url(a), code)
    hands = [hand_of(p) for p in people]
    (head,) = d.pods("ray-head")
    head_node = await asyncio.to_thread(d.ray, "print(ray.get_runtime_context().get_node_id())")
    actor = json.loads(d.redis_get(keys.table(code)))["actor"]
    node_before = await asyncio.to_thread(d.table_node_ip, actor)
    await asyncio.to_thread(d.restart, head)
    await asyncio.to_thread(
        d.wait,
        "the head back, with both workers (GCS state from Redis)",
        d.all_slots,
        240,
        [head, *d.pods("ray-worker")],
    )
    for pod in (a, b):
        await asyncio.to_thread(d.wait_gateway_ready, pod)
    # A new head process (a new Ray node), which found the cluster's state in Redis: the table's
    # named actor is still known, on the worker it was on.
    new_node = await asyncio.to_thread(d.ray, "print(ray.get_runtime_context().get_node_id())")
    assert new_node != head_node
    assert await asyncio.to_thread(d.table_node_ip, actor) == node_before
    after = await summary(d.url(b), code)
    assert (after["scores"], after["round"], after["phase"]) == (
        before["scores"],
        before["round"],
        before["phase"],
    )
    for p, (pod, _), hand in zip(people, places, hands, strict=True):
        if p.close_code is not None:  # the connection did not live through it: say hello again
            welcome = await reconnect(p, code, d.url(pod))
            assert [c["id"] for c in welcome["table"]["hand"]] == hand
    await plays_on(code, people)
    # And the cluster still makes new tables.
    fresh, others = await table(d, [(b, 0)], time_scale=1.0, bot_policy="idle")
    assert (await summary(d.url(a), fresh))["phase"] == "lobby"
    for p in [*people, *others]:
        await p.close()


async def test_a_gateway_stopped_like_kubernetes_says_1001_first(deployment: Deployment) -> None:
    d = deployment
    a, b = gateways(d)
    places = [(a, 0), (b, 1), (b, 2)]
    code, people = await table(d, places, time_scale=1.0, bot_policy="idle")
    await into_a_round(code, people, rounds=0)
    stopping = asyncio.create_task(asyncio.to_thread(d.stop_like_kubernetes, b))
    try:
        for p, (pod, seat) in zip(people, places, strict=True):
            if pod == b:
                assert await p.wait_closed(limit=90) == 1001
                welcome = await reconnect(p, code, d.url(a))
                assert welcome["you"]["seat"] == seat
        await plays_on(code, people)
    finally:
        await stopping
        await asyncio.to_thread(d.start_again, b)
        await asyncio.to_thread(d.wait_gateway_ready, b)
        for p in people:
            await p.close()
