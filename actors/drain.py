"""Move a Ray node's tables to other nodes before the node goes: `python -m actors.drain`, the
preStop hook of the chart's Ray worker pods. A rolling upgrade, a scale-down or a `kubectl
drain` then costs each table a freeze of a second or two instead of a crash and a restart from
a node that may still be dying.

1. Ray is told the node is draining (as for a preemption, with the pod's deadline): nothing new
   is placed on it from then on, restarted actors included.
2. Each table actor of the namespace is asked where it runs. Those on this node make sure their
   state is in Redis (`hand_over`), then are stopped with a restart, so that Ray starts them on
   another node, where they read their snapshot back. Gateways notice the closed data-plane
   connection and ask Ray for the new endpoint, resending what was unanswered. Ready actors of
   the pool (no table: a new one, or one whose table ended, actors/reuse.py) end instead: a
   move would start a worker process elsewhere for nothing, and under Ray's autoscaler could
   ask it for a node; the gateways drop their names and the pool starts what it still wants.
3. It waits, within the deadline, until each answers from another node, and prints one JSON
   line saying what moved and how long the slowest move took.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import ray
from ray.actor import ActorHandle

from actors import keys
from actors.placement import gone_for_good
from actors.protocol import HandOver, Probe, Status
from actors.ray_calls import ask
from actors.ray_names import named
from cluster.connect import connect_ray
from cluster.settings import Settings

log = logging.getLogger("quatro.drain")

ASK_AT_ONCE = 64  # actors asked side by side where they run
ASK_WAIT_S = 5.0  # an actor that does not say where it runs within this is left alone
SAVE_WAIT_S = 10.0  # how long a table may take to get its state into Redis before its move


@dataclass
class Moves:
    node: str
    asked: int = 0
    here: int = 0  # table actors found on this node (pooled ones included)
    ended: list[str] = field(default_factory=list)  # pooled ones (no table): ended, not moved
    unsaved: list[str] = field(default_factory=list)  # moved although Redis lacked their latest
    back: int = 0  # answering from another node before the deadline
    # Pooled ones (no table) that another stopped for good meanwhile, as the pool's spread
    # does: nothing to move, and the pool starts others.
    retired: list[str] = field(default_factory=list)
    slowest_s: float = 0.0  # from the stop to the first answer from elsewhere
    stuck: list[str] = field(default_factory=list)  # not back before the deadline
    # Cut off while their table moved into another actor (actors/rescue.py): stopped for good,
    # not moved (their table answers from the actor its record names).
    superseded: list[str] = field(default_factory=list)


def mark_draining(node_id: str, deadline_s: float) -> None:
    """Tell the GCS that this node goes away: the call `ray drain-node` makes (a preemption
    cannot be refused, unlike an idle termination)."""
    from ray._raylet import GcsClient  # type: ignore[attr-defined]
    from ray.core.generated import autoscaler_pb2

    gcs = GcsClient(address=ray.get_runtime_context().gcs_address)
    accepted, why = gcs.drain_node(
        node_id,
        autoscaler_pb2.DrainNodeReason.Value("DRAIN_NODE_REASON_PREEMPTION"),  # type: ignore[attr-defined]
        "quatro: the pod is stopping; its tables move",
        int((time.time() + deadline_s) * 1000),
    )
    if not accepted:
        # Already draining (Ray's autoscaler drains an idle worker before deleting its pod):
        # the moves below are still worth trying.
        log.warning("Ray did not accept draining node %s: %s", node_id, why)


async def _where(name: str, namespace: str, gate: asyncio.Semaphore) -> tuple[Status, Any] | None:
    """(status, handle) of a table actor, or None if it does not answer in time."""
    async with gate:
        try:
            # A blocking lookup in Ray's control store: in a thread, or each would hold up the
            # loop, and with it the deadlines of the probes already sent (an actor on this node
            # that answered in time was then left out, its probe's time spent on the lookups).
            handle = await asyncio.to_thread(named, name, namespace)
            if handle is None:
                return None
            async with asyncio.timeout(ASK_WAIT_S):
                status = await ask(handle, Probe())
        except Exception as exc:  # gone, restarting, or unreachable: not ours to move
            log.info("%s: no answer (%s)", name, type(exc).__name__)
            return None
        return status, handle


async def _retired(name: str, handle: ActorHandle[Any], before: Status, moves: Moves) -> bool:
    """A pooled actor stopped for good by someone else since it said where it ran."""
    if before.code:
        return False
    try:
        gone = await asyncio.to_thread(gone_for_good, handle)
    except Exception:  # Ray's control store out of reach: no word, so not retired
        return False
    if not gone:
        return False
    log.info("%s: a pooled actor stopped for good meanwhile; nothing to move", name)
    moves.retired.append(name)
    return True


async def move_actor(
    name: str, handle: ActorHandle[Any], before: Status, moves: Moves, until: float
) -> None:
    if not before.code:
        # A ready actor with no table: nothing of it to keep (a creation racing this stop
        # finds the actor gone and takes the next ready one, actors/opening.py).
        if await _retired(name, handle, before, moves):
            return
        log.info("%s: a pooled actor on the draining node: ended", name)
        ray.kill(handle, no_restart=True)
        moves.ended.append(name)
        return
    try:
        async with asyncio.timeout(SAVE_WAIT_S):
            handed = await ask(handle, HandOver())
        saved, superseded = handed.saved, getattr(handed, "superseded", False)
    except Exception as exc:
        if await _retired(name, handle, before, moves):
            return
        log.warning("%s: hand-over failed (%s)", name, type(exc).__name__)
        saved, superseded = False, False
    if superseded:
        log.info("%s: table %s is another actor's now; stopped for good", name, handed.code)
        moves.superseded.append(name)
        ray.kill(handle, no_restart=True)
        return
    if not saved:
        moves.unsaved.append(name)
    stopped = time.monotonic()
    ray.kill(handle, no_restart=False)
    incarnation = before.incarnation
    delay = 0.1
    while time.monotonic() < until:
        try:
            async with asyncio.timeout(max(0.1, min(ASK_WAIT_S, until - time.monotonic()))):
                status = await ask(handle, Probe())
        except Exception as exc:
            # Restarting: Ray answers "unavailable", or "died" for a call that met the stop.
            if await _retired(name, handle, before, moves):
                return
            log.debug("%s: not back yet (%s)", name, type(exc).__name__)
        else:
            if status.node != moves.node:
                moves.back += 1
                moves.slowest_s = max(moves.slowest_s, time.monotonic() - stopped)
                return
            if status.incarnation != incarnation:
                # Started again on this node (Ray placed it before the drain took effect):
                # stopped once more, so that it goes elsewhere.
                log.warning("%s: restarted on the draining node; stopped again", name)
                incarnation = status.incarnation
                ray.kill(handle, no_restart=False)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)
    moves.stuck.append(name)


async def drain(namespace: str, deadline_s: float, node: str | None = None) -> Moves:
    """Drain `node` (by default the one this driver joined, i.e. this pod's)."""
    until = time.monotonic() + deadline_s
    node = node or ray.get_runtime_context().get_node_id()
    mark_draining(node, deadline_s)
    moves = Moves(node=node)
    named = ray.util.list_named_actors(all_namespaces=False)
    names = [n for n in named if n.startswith(keys.ACTOR_PREFIX)]
    moves.asked = len(names)
    gate = asyncio.Semaphore(ASK_AT_ONCE)
    found = await asyncio.gather(*(_where(n, namespace, gate) for n in names))
    here = [
        (n, f[0], f[1])
        for n, f in zip(names, found, strict=True)
        if f is not None and f[0].node == node
    ]
    moves.here = len(here)
    async with asyncio.TaskGroup() as group:
        for name, status, handle in here:
            group.create_task(move_actor(name, handle, status, moves, until))
    return moves


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m actors.drain", description=__doc__)
    parser.add_argument(
        "--deadline",
        type=float,
        default=60.0,
        help="seconds before the node is stopped anyway (keep it under the pod's grace period)",
    )
    parser.add_argument(
        "--node-id",
        default=None,
        help="the Ray node to drain (hex); by default this machine's own node",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings = Settings()
    connect_ray(settings)
    moves = asyncio.run(drain(settings.ray_namespace, args.deadline, args.node_id))
    print(json.dumps(asdict(moves)), flush=True)
    return 0 if not moves.stuck and not moves.unsaved else 1


if __name__ == "__main__":
    sys.exit(main())
