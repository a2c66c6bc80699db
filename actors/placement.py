"""Where table actors run, read from Ray, and where the pool's ready actors should run.

A lost node's tables are moved at once into ready pooled actors on other nodes
(actors/rescue.py), which costs milliseconds where a new worker process costs seconds. That
only works if the ready actors are not on the lost node with the tables. Ray's `SPREAD` goes
round the nodes as actors are created, but nothing moves them afterwards: after a loss, Ray
restarts the lost node's pooled actors on the nodes that are left, beside the tables moved
there, and a node that joins later (the replacement, a scale-up) gets none until tables are
created. The next loss of the crowded node then finds no ready actor anywhere else
(docs/reliability.md, "Where it stands").

So the pool keeps its ready actors spread over the table nodes by the room each has for
them: a node's *room* is its table slots not taken by tables (its free slots plus the pooled
actors already there), and its *share* of the pool is in proportion to its room. New pooled
actors start where Ray's `SPREAD` puts them; a pass of the pool then moves one at a time from
a node a whole actor above its share to one a whole actor below (`plan`), so that the pool
never flaps between two nodes, and a small node added beside a big one (a test's) is left
alone. Only nodes whose raylet accepts a connection count: a lost node is out of the plan
before Ray declares it dead.

Ray's actor table and node list are read through `ray._private.state` and `ray.nodes()`: the
public state API needs the dashboard, which our nodes do not run.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import ray

from actors.ray_names import Handle

PROBE_S = 1.0  # a TCP connection not accepted within this: that process does not answer


@dataclass(frozen=True, slots=True)
class Place:
    """Where Ray says an actor runs: its state, its worker's address, its node and raylet."""

    state: str
    worker: tuple[str, int] | None
    node: str
    raylet: tuple[str, int] | None


def actor_id(handle: Handle) -> str:
    return str(handle._actor_id.hex())


def place_of(handle: Handle) -> Place | None:
    """Ray's word on the actor behind `handle` (blocking calls to Ray's control store)."""
    info = ray._private.state.state.actor_table(actor_id(handle))
    if not info:
        return None
    address = info.get("Address") or {}
    node = str(address.get("NodeID") or "")
    worker = None
    if address.get("IPAddress") and address.get("Port"):
        worker = (str(address["IPAddress"]), int(address["Port"]))
    return Place(str(info.get("State", "")), worker, node, raylets().get(node))


def raylets(table_slots_only: bool = False) -> dict[str, tuple[str, int]]:
    """Every node Ray counts alive: its id -> its raylet's address."""
    found = {}
    for n in ray.nodes():  # type: ignore[no-untyped-call]
        if not n.get("Alive"):
            continue
        if table_slots_only and not n.get("Resources", {}).get("table_slot"):
            continue
        found[str(n["NodeID"])] = (str(n["NodeManagerAddress"]), int(n["NodeManagerPort"]))
    return found


async def answers(address: tuple[str, int] | None, wait_s: float = PROBE_S) -> bool:
    """Whether something accepts a TCP connection at `address` within `wait_s`."""
    if address is None:
        return False
    try:
        async with asyncio.timeout(wait_s):
            _, writer = await asyncio.open_connection(*address)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


def slots() -> tuple[dict[str, float], dict[str, float]]:
    """Every alive node that offers table slots -> how many are free, and how many it has
    (Ray's resource view, which lags the actors' starts by up to a second)."""
    nodes = raylets(table_slots_only=True)
    state = ray._private.state.state
    free = state.available_resources_per_node()  # type: ignore[no-untyped-call]
    total = state.total_resources_per_node()
    return (
        {n: float(free.get(n, {}).get("table_slot", 0.0)) for n in nodes},
        {n: float(total.get(n, {}).get("table_slot", 0.0)) for n in nodes},
    )


def draining() -> set[str]:
    """The nodes Ray was told are going (`actors.drain`, or its autoscaler): nothing new is
    placed there, and the drain moves what runs there."""
    return set(ray._private.state.state.get_draining_nodes())


def gone_for_good(handle: Handle) -> bool:
    """Whether Ray will never run the actor behind `handle` again (stopped without a restart,
    or its record gone)."""
    place = place_of(handle)
    return place is None or place.state == "DEAD"


async def answering_nodes() -> tuple[dict[str, float], dict[str, float]]:
    """`slots` of the nodes whose raylet accepts a connection now and that are not draining
    (none when Ray's control store is out of reach: no plan then, Ray places alone). A draining
    node's actors are the drain's to move: a second mover could stop one it waits for."""
    try:
        nodes, (free, total), going = await asyncio.to_thread(
            lambda: (raylets(True), slots(), draining())
        )
    except Exception:
        return {}, {}
    ids = [i for i in nodes if i not in going]
    alive = await asyncio.gather(*(answers(nodes[i]) for i in ids))
    up = [i for i, ok in zip(ids, alive, strict=True) if ok]
    return {i: free.get(i, 0.0) for i in up}, {i: total.get(i, 0.0) for i in up}


def with_tables(
    free: dict[str, float], total: dict[str, float], pooled: dict[str, int]
) -> dict[str, float]:
    """`free` of the nodes that carry at least one table. Where Ray's autoscaler removes idle
    workers, a node carrying none is left to it: ready actors moved there would keep it."""
    return {n: f for n, f in free.items() if total.get(n, 0.0) - f - pooled.get(n, 0) >= 1}


def evictions(
    pooled: dict[str, int], free: dict[str, float], holding: dict[str, float]
) -> list[tuple[str, str]]:
    """Under Ray's autoscaler, the moves (from, to) that take every ready actor off the
    answering nodes of `free` that carry no table (`holding`: those that do, with their free
    slots), each to the holding node with the most free slots then. With no table anywhere,
    the node holding the most ready actors keeps them and takes the others': the pool must
    live somewhere, and every other node is then left idle, for the autoscaler to remove."""
    homes = dict(holding)
    if not homes:
        crowded = [n for n in free if pooled.get(n, 0) > 0]
        if not crowded:
            return []
        home = max(crowded, key=lambda n: (pooled[n], n))
        homes = {home: free[home]}
    room_left = dict(homes)
    moves: list[tuple[str, str]] = []
    for src in sorted(n for n in free if n not in homes and pooled.get(n, 0) > 0):
        for _ in range(pooled[src]):
            dst = max(room_left, key=lambda n: (room_left[n], n))
            if room_left[dst] < 1:
                return moves
            room_left[dst] -= 1
            moves.append((src, dst))
    return moves


def room(pooled: dict[str, int], free: dict[str, float]) -> dict[str, float]:
    """Each answering node's slots not taken by tables: its free ones and its pooled actors'."""
    return {n: max(0.0, f) + pooled.get(n, 0) for n, f in free.items()}


def shares(total: int, rooms: dict[str, float]) -> dict[str, float]:
    """Each node's share of `total` ready actors, in proportion to its room."""
    whole = sum(rooms.values())
    if whole <= 0:
        return {n: 0.0 for n in rooms}
    return {n: total * r / whole for n, r in rooms.items()}


def plan(pooled: dict[str, int], free: dict[str, float]) -> list[tuple[str, str]]:
    """The moves (from, to) that bring the ready actors of the answering nodes to their
    shares: one at a time, from the node furthest above its share to the one furthest below,
    while the first is a whole actor above and the second a whole actor below (so a move
    never overshoots into the next one going back). Pooled actors of a node not in `free`
    (not answering) are left out: Ray restarts them, or they are dropped."""
    count = {n: pooled.get(n, 0) for n in free}
    share = shares(sum(count.values()), room(pooled, free))
    moves: list[tuple[str, str]] = []
    while count:
        src = max(count, key=lambda n: (count[n] - share[n], n))
        dst = min(count, key=lambda n: (count[n] - share[n], n))
        if count[src] - share[src] < 1 or share[dst] - count[dst] < 1:
            return moves
        count[src] -= 1
        count[dst] += 1
        moves.append((src, dst))
    return moves
