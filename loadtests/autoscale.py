"""Ray's own autoscaler (v2, the one KubeRay's in-tree autoscaler runs) on this one machine, with
the chart's settings, and the figures it gives: how long tables wait for a worker it adds, how
long an idle worker outlives its last table, and that tables play on through a scale-down.

    python -m loadtests.autoscale [--idle-timeout S]

Ray's fake node provider (ray/autoscaler/_private/fake_multi_node) plays the cloud: a node it
"launches" is a raylet started in the head's autoscaler process, joined to our head. Not
`ray.cluster_utils.AutoscalingCluster` itself: its start() and shutdown() run `ray stop --force`,
which kills every Ray process of the machine (other people's too), and Ray 2.60's wheel lacks
the fake_multi_node/example.yaml its constructor loads (so does the autoscaler, for a provider
of type fake_multinode: see autoscaling_config). So the head is ours (cluster/stack.py:
own ports, own temp dir, token auth, loopback), given the same autoscaling config and environment
AutoscalingCluster(autoscaler_v2=True) would give it.

The idle timeout is the chart's (`ray.autoscaling.idleTimeoutSeconds`, 300 s) unless told
otherwise; tests/cluster/test_autoscaling.py runs a shorter one (it says why).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from actors.drain import drain
from actors.keys import ACTOR_PREFIX
from actors.protocol import Act, Join, Joined, Open, Outcome, Probe, Serve
from actors.ray_calls import ask
from actors.snapshot import DEFAULT_REPLAY_TTL_S
from actors.table_actor import actor_class
from cluster.procs import ONE_MACHINE
from cluster.stack import Spec, Stack
from loadtests import cli
from loadtests.figures import emit

ROOT = Path(__file__).resolve().parents[1]
VALUES = ROOT / "helm" / "quatro" / "values.yaml"

# The fake provider names nodes by these ids (its head's is fixed), and finds the head by it.
FAKE_HEAD_ID = "fffffffffffffffffffffffffffffffffffffffffffffffffff00000"
WORKER_TYPE = "tables"  # as the chart's worker group
WORKER_OBJECT_STORE = 80 * 1024 * 1024  # the chart's 256 MiB per worker is more than 2 cores need

# Bounds, measured on a loaded 2-core machine with margin (docs/operations.md, Scale).
UP_WITHIN_S = 90.0  # demand to a table answering from the worker added for it
KEEP_PAST_IDLE_S = 10.0  # a busy worker is watched this long past the idle timeout
REMOVE_WITHIN_S = 45.0  # an idle worker is gone within the idle timeout plus this

SWAP_WITHIN_S = 30.0
# What a move of a table must keep, as its host sees it: the score, the round, the cards.
KEPT = ("scores", "round", "phase", "hand", "center", "sign")

T = TypeVar("T")


@dataclass(frozen=True)
class ChartScaling:
    """What helm/quatro/values.yaml tells the autoscaler."""

    head_slots: int
    worker_slots: int
    min_workers: int
    max_workers: int
    idle_timeout_s: float
    enabled: bool

    @classmethod
    def read(cls, path: Path = VALUES) -> ChartScaling:
        ray_values: dict[str, Any] = yaml.safe_load(path.read_text())["ray"]
        workers = ray_values["workers"]
        return cls(
            head_slots=int(ray_values["head"]["tableSlots"]),
            worker_slots=int(workers["tableSlots"]),
            min_workers=int(workers["minReplicas"]),
            max_workers=int(workers["maxReplicas"]),
            idle_timeout_s=float(ray_values["autoscaling"]["idleTimeoutSeconds"]),
            enabled=bool(ray_values["autoscaling"]["enabled"]),
        )


def autoscaling_config(
    chart: ChartScaling, gcs_address: str, idle_timeout_s: float, max_workers: int
) -> dict[str, Any]:
    """The cluster config KubeRay's autoscaler would build from the RayCluster, for Ray's fake
    provider: one worker type offering the chart's slots, no CPU (as `num-cpus: "0"`).
    min_workers is 0, whatever the chart's minReplicas: a minimum worker is there from the
    start and never removed, so what can be measured is a worker beyond it, which the
    autoscaler adds and removes by the same rules."""
    return {
        "cluster_name": f"quatro-{uuid.uuid4().hex[:6]}",
        "max_workers": max_workers,
        "provider": {
            # Ray's fake provider, named as an external one: as "fake_multinode" the autoscaler
            # reads that provider's defaults from fake_multi_node/example.yaml, which Ray 2.60's
            # wheel does not ship (the autoscaler process dies on it, and the head with it).
            "type": "external",
            "module": "ray.autoscaler._private.fake_multi_node.node_provider.FakeMultiNodeProvider",
            "use_node_id_as_ip": True,
            "disable_node_updaters": True,
            "disable_launch_config_check": True,
            # Our head's GCS, not the provider's default (this machine's IP, port 6379).
            "gcs_address": gcs_address,
            # Autoscaler v2's part of AutoscalingCluster(autoscaler_v2=True).
            "launch_multiple": True,
            "head_node_id": FAKE_HEAD_ID,
        },
        "available_node_types": {
            "ray.head.default": {
                "resources": {"CPU": 2, "table_slot": chart.head_slots},
                "node_config": {},
                "max_workers": 0,
            },
            WORKER_TYPE: {
                "resources": {
                    "CPU": 0,
                    "table_slot": chart.worker_slots,
                    "object_store_memory": WORKER_OBJECT_STORE,
                },
                "node_config": {},
                "min_workers": 0,
                "max_workers": max_workers,
            },
        },
        "head_node_type": "ray.head.default",
        "auth": {},
        # KubeRay's upscalingMode Default.
        "upscaling_speed": 1.0,
        "idle_timeout_minutes": idle_timeout_s / 60.0,
        "docker": {},
        "initialization_commands": [],
        "setup_commands": [],
        "head_setup_commands": [],
        "worker_setup_commands": [],
        "head_start_ray_commands": [],
        "worker_start_ray_commands": [],
        "file_mounts": {},
        "cluster_synced_files": [],
        "file_mounts_sync_continuously": False,
        "rsync_exclude": [],
        "rsync_filter": [],
    }


def autoscaling_stack(chart: ChartScaling, idle_timeout_s: float, max_workers: int = 2) -> Stack:
    """A redis-server and a head (not started) whose autoscaler launches workers of the chart's
    shape; no gateway."""
    namespace = f"autoscale-{_id()[:8]}"
    spec = Spec(chart.head_slots, gateways=0, namespace=namespace, object_store_mb=96)
    stack = Stack(spec, Path(tempfile.gettempdir()))  # no gateway, so no log of its own
    head = stack.head
    config = autoscaling_config(chart, head.address, idle_timeout_s, max_workers)
    path = head.temp_dir / "autoscaling.json"
    path.write_text(json.dumps(config))
    head.extra_args = ["--autoscaling-config", str(path)]
    head.extra_env = {
        "RAY_FAKE_CLUSTER": "1",
        # Every second, as AutoscalingCluster has it (Ray's default is 5 s).
        "AUTOSCALER_UPDATE_INTERVAL_S": "1",
        "RAY_enable_autoscaler_v2": "1",
        "RAY_CLOUD_INSTANCE_ID": FAKE_HEAD_ID,
        "RAY_OVERRIDE_NODE_ID_FOR_TESTING": FAKE_HEAD_ID,
        # The provider starts a worker without an IP: Ray would give it this machine's, where
        # nothing listens (the loopback interposer binds 127.0.0.1), and the GCS, failing its
        # health checks, would mark it dead within seconds. Ray's switch for one-machine
        # clusters makes that IP 127.0.0.1 (`ray start --head` accepts it; only --address not).
        ONE_MACHINE: "0",
    }
    return stack


def workers() -> set[str]:
    """Ids of the live nodes other than the head (this process is a driver of the cluster)."""
    import ray

    return {
        n["NodeID"]
        for n in ray.nodes()  # type: ignore[no-untyped-call]
        if n["Alive"] and n["NodeID"] != FAKE_HEAD_ID
    }


async def wait_for(
    what: str, probe: Callable[[], Awaitable[T | None]], within_s: float, every_s: float = 0.5
) -> tuple[T, float]:
    """The first non-None answer of `probe` and the seconds it took, or TimeoutError."""
    started = time.monotonic()
    while True:
        answer = await probe()
        elapsed = time.monotonic() - started
        if answer is not None:
            return answer, elapsed
        if elapsed > within_s:
            raise TimeoutError(f"{what}: not within {within_s:.0f} s")
        await asyncio.sleep(every_s)


@dataclass
class Figures:
    idle_timeout_s: float
    worker_slots: int
    worker_up_s: float  # from the first table beyond the head's slots to its first answer
    kept_busy_s: float  # a worker with live tables, watched that long past its last new table
    commands_answered: int  # while watched, one per table every second
    drained_moved_s: float  # the drain's slowest move, the new worker's start included
    drained_removed_s: float  # from the drain's end to the drained worker's removal
    tables_played_through: int  # tables moved by the scale-down, state intact, playing on
    idle_removed_s: float  # from the last table's end to its worker's removal


class ScaleFailure(AssertionError):
    """What the autoscaler did is not what the chart promises."""


def check(ok: bool, what: str) -> None:
    if not ok:
        raise ScaleFailure(what)


def _id() -> str:
    return uuid.uuid4().hex


@dataclass
class Table:
    code: str
    handle: Any

    async def node(self) -> str:
        return (await ask(self.handle, Probe())).node

    async def state(self) -> dict[str, Any]:
        """The host's view of what a lost point or card would change, and the table's seq."""
        joined = await ask(self.handle, Serve(Join(_id(), "gw", "gw/c0", "p0")))
        if not isinstance(joined, Joined):
            raise ScaleFailure(f"{self.code}: host could not join: {joined}")
        return {k: joined.view[k] for k in KEPT} | {"seq": joined.seq}

    async def swap(self) -> dict[str, Any]:
        """Play a move, so that what a move of the table must keep is not the deal it could
        also get by dealing again. A player may swap only every few seconds: tried until the
        table takes it. The state after it."""
        was = await self.state()
        card, taken = was["hand"][0]["id"], was["center"][0]["id"]
        args = {"card": card, "slot": 0, "expect": taken}

        async def once() -> bool | None:
            reply = await ask(self.handle, Serve(Act.of(_id(), "gw", "p0", "swap", args)))
            return True if isinstance(reply, Outcome) and reply.ok else None

        await wait_for(f"{self.code}: a swap", once, SWAP_WITHIN_S)
        now = await self.state()
        check(taken in [c["id"] for c in now["hand"]], f"{self.code}: swap not applied: {now}")
        return now

    async def command(self, within_s: float = 10.0) -> None:
        """One command a seated player may send at any time in play, answered (a no-op)."""
        async with asyncio.timeout(within_s):
            reply = await ask(self.handle, Serve(Act.of(_id(), "gw", "p0", "ready", {})))
        check(isinstance(reply, Outcome), f"{self.code}: no outcome: {reply}")


async def open_table(redis_url: str, code: str) -> Table:
    """A table actor with its real demand (one `table_slot`), a 4-seat table in play."""
    name = f"{ACTOR_PREFIX}{code.lower()}"  # as the pool names them: actors.drain finds it
    handle = actor_class().options(name=name).remote(name, redis_url)
    idle_s = (600.0, 1800.0)
    opened = await ask(handle, Open(code, {"players": 4}, "p0", "p0", idle_s, DEFAULT_REPLAY_TTL_S))
    check(opened.ok, f"{code}: open refused: {opened}")
    for seat in range(1, 4):
        args = {"seat": seat, "name": f"p{seat}"}
        await ask(handle, Serve(Act.of(_id(), "gw", f"p{seat}", "take_seat", args)))
    for seat in range(4):
        await ask(handle, Serve(Join(_id(), "gw", f"gw/c{seat}", f"p{seat}")))
    started = await ask(handle, Serve(Act.of(_id(), "gw", "p0", "start", {})))
    check(isinstance(started, Outcome) and started.ok, f"{code}: start refused: {started}")
    # All four ready: the round opens at once (R6), so a run shorter than signing (30 s) has hands.
    for seat in range(4):
        ready = await ask(handle, Serve(Act.of(_id(), "gw", f"p{seat}", "ready", {})))
        check(isinstance(ready, Outcome) and ready.ok, f"{code}: p{seat} not ready: {ready}")
    return Table(code, handle)


async def _gone(node: str) -> bool | None:
    return True if node not in workers() else None


async def scenario(redis_url: str, idle_s: float, drain_deadline_s: float = 90.0) -> Figures:
    """Run on a driver of an autoscaling head (`autoscaling_head`) with no table yet."""
    import ray

    chart = ChartScaling.read()
    namespace = ray.get_runtime_context().namespace
    check(workers() == set(), f"workers before any table: {workers()}")

    # 1. Tables beyond the head's slots (the chart gives it none) make the autoscaler add a
    #    worker; the clock runs from the demand to the first table's answer from it.
    demand = time.monotonic()
    first = asyncio.ensure_future(open_table(redis_url, "AS0001"))
    tables = [await asyncio.wait_for(first, UP_WITHIN_S)]
    worker_up_s = time.monotonic() - demand
    tables.append(await open_table(redis_url, "AS0002"))
    busy = await tables[0].node()
    check(workers() == {busy}, f"one worker, the tables': {workers()} vs {busy}")
    check(await tables[1].node() == busy, "the second table shares the first's worker")

    # 2. A worker whose tables play on is kept through the idle timeout and beyond: a command
    #    to each table every second, each answered, the worker never replaced.
    watched_until = time.monotonic() + idle_s + KEEP_PAST_IDLE_S
    answered = 0
    watched = time.monotonic()
    while time.monotonic() < watched_until:
        tick = time.monotonic()
        for table in tables:
            await table.command()
            answered += 1
        check(workers() == {busy}, f"a worker with live tables was removed: {workers()}")
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
    kept_busy_s = time.monotonic() - watched
    for table in tables:
        check(await table.node() == busy, f"{table.code} moved while its worker was kept")

    # 3. Scale-down the way the chart does it (the worker pod's preStop hook: actors.drain):
    #    the tables move to a worker the autoscaler adds for them, from their snapshots, and
    #    the drained worker, empty now, is removed. Nothing of any table is lost.
    before = [await t.swap() for t in tables]
    moves = await drain(namespace, drain_deadline_s, busy)
    check(moves.here == len(tables), f"drain found {moves.here} of {len(tables)}: {moves}")
    check(moves.back == moves.here and not moves.stuck, f"tables not back: {moves}")
    check(not moves.unsaved, f"moved without their latest state in Redis: {moves}")
    _, drained_removed_s = await wait_for(
        "the drained worker's removal", lambda: _gone(busy), idle_s + REMOVE_WITHIN_S
    )
    after = [await t.state() for t in tables]
    for table, was, now in zip(tables, before, after, strict=True):
        for key in KEPT:
            check(now[key] == was[key], f"{table.code}: {key} changed by the move")
        check(now["seq"] >= was["seq"], f"{table.code}: events lost ({was} -> {now})")
        await table.command()
    moved_to = {await t.node() for t in tables}
    check(busy not in moved_to and moved_to <= workers(), f"tables on {moved_to}")

    # 4. Once its last table ends, a worker is idle and removed after the idle timeout.
    (last,) = moved_to
    for table in tables:
        ray.kill(table.handle, no_restart=True)
    _, idle_removed_s = await wait_for(
        "the idle worker's removal", lambda: _gone(last), idle_s + REMOVE_WITHIN_S
    )
    check(idle_removed_s >= idle_s - 1.0, f"removed {idle_removed_s:.1f} s after, before idle")
    return Figures(
        idle_timeout_s=idle_s,
        worker_slots=chart.worker_slots,
        worker_up_s=round(worker_up_s, 1),
        kept_busy_s=round(kept_busy_s, 1),
        commands_answered=answered,
        drained_moved_s=round(moves.slowest_s, 1),
        drained_removed_s=round(drained_removed_s, 1),
        tables_played_through=len(tables),
        idle_removed_s=round(idle_removed_s, 1),
    )


def run(idle_s: float) -> Figures:
    """The whole scenario on a cluster of its own, started and stopped here."""
    stack = autoscaling_stack(ChartScaling.read(), idle_s)
    try:
        stack.start()
        stack.driver()
        return asyncio.run(scenario(stack.redis.url, idle_s))
    finally:
        stack.stop()


def main(argv: list[str] | None = None) -> int:
    parser = cli.command("autoscale", __doc__)
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        help="seconds an idle worker is kept (default: the chart's idleTimeoutSeconds)",
    )
    args = parser.parse_args(argv)
    chart = ChartScaling.read()
    figures = run(chart.idle_timeout_s if args.idle_timeout is None else args.idle_timeout)
    emit(asdict(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
