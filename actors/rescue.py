"""A table whose node is lost, moved at once rather than after Ray's verdict.

Ray declares a node dead only once its health checks have failed `threshold` times in a row,
then restarts the node's actors elsewhere; until then every table of that node stands still.
A gateway that cannot reach a table's actor judges for itself, and moves the table when that is
safe:

- **Lost, never merely slow.** A call to the actor failed as unreachable (or went unanswered
  for `UNREACHABLE_S`), Ray still counts the actor alive (a restarting one is Ray's to bring
  back), and neither its worker process nor its node's raylet accepts a TCP connection within
  `PROBE_S`. A process that is only frozen or
  overloaded still accepts (the kernel answers for it), so a SIGSTOP or a busy node never moves
  a table; a killed node refuses at once, a vanished machine times out.
- **Not from a gateway cut off.** A gateway that reaches no other node's raylet either is the
  one cut off (or the cluster has nowhere to go): it moves nothing, and Ray's verdict decides.
- **One winner.** `MOVE_HERE` is a compare-and-set on the table's record: it counts one more
  move only if the record still names that actor with the count this gateway found it with. Of
  gateways racing, one moves the table and the others follow it.
- **Into a ready actor.** The winner's count names a pooled actor (`moving`), already running
  on a live node: it takes the table over (`Adopt`: restored from its snapshot, with the new
  count, in milliseconds, where a new worker process takes seconds on a loaded node), then
  `HAND_OVER` names it the table's actor, and the old actor is killed in Ray for good (Ray
  frees its name, even for a node it cannot reach, and never restarts it). The table keeps its
  id (its replay, its matches' ids). With no pooled actor ready, the old actor is killed and
  started again under its own name on a live node, a new worker process.
- **Fenced.** An incarnation that was only cut off has its next save refused by SAVE's fence
  (the record counts more moves than it found) and ends itself, as after a move between cells;
  one that Ray restarts meanwhile finds another actor named `moving` (or the table's actor) and
  ends too (actors/store.py).

Where Ray says an actor and its node are, and whether they answer: actors/placement.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time

from actors import keys
from actors.placement import PROBE_S, Place, actor_id, answers, place_of, raylets
from actors.pool import Pool
from actors.protocol import Adopt, Probe
from actors.ray_calls import ask
from actors.ray_names import Actors, Handle
from actors.store import KEY_TTL_S
from actors.store_scripts import REWRITE
from actors.tasks import Tasks
from cluster.redis_client import AsyncRedis
from cluster.redis_ops import Script

log = logging.getLogger("quatro.directory")

UNREACHABLE_S = 2.0  # a call unanswered this long has its actor's process and node probed
FOLLOW_S = 10.0  # how long a gateway that lost the race waits for the winner's new actor
ADOPT_S = 10.0  # how long a pooled actor gets to take a table over
POOLED_TRIES = 8  # pooled actors tried (those on the lost node are passed over)
# A gateway shutting down lets a move under way finish for this long before cancelling it: one
# cut between its steps is safe (the record's count fences it) but leaves the table to the next
# caller's move or to Ray's verdict, seconds later.
CLOSE_GRACE_S = 3.0

# KEYS[1]: the table's record; ARGV[1]: the actor it must still name, ARGV[2]: the moves it
# must still count, ARGV[3]: the pooled actor that is to take the table over ('' for none: the
# same name restarted). The count goes up by one (the fence of actors/store_scripts.py), the
# TTL stays; the new count is returned, or 0 when the record changed meanwhile (moved by
# another gateway: follow it) or is gone.
MOVE_HERE = Script(
    "rescue.move-here",
    REWRITE
    + """
local rec = record(KEYS[1])
if not rec then return 0 end
if rec['actor'] ~= ARGV[1] or (tonumber(rec['moves']) or 0) ~= tonumber(ARGV[2]) then
  return 0
end
rec['moves'] = (tonumber(rec['moves']) or 0) + 1
if ARGV[3] ~= '' then rec['moving'] = ARGV[3] else rec['moving'] = nil end
rewrite(KEYS[1], rec)
return rec['moves']
""",
)


# KEYS[1]: the table's record; ARGV[1]: the pooled actor that took the table over, ARGV[2] the
# count of its move, ARGV[3]: '1' when it could not and the old name takes the table back
# (then ARGV[1] is that name, whoever `moving` names). It becomes the table's actor (1), unless
# the record moved on meanwhile (0). Its own first save may have named it already: that counts
# as done. A parked table (actors/parking.py) woken so is parked no more.
HAND_OVER = Script(
    "rescue.hand-over",
    REWRITE
    + """
local rec = record(KEYS[1])
if not rec then return 0 end
if (tonumber(rec['moves']) or 0) ~= tonumber(ARGV[2]) then return 0 end
if rec['actor'] == ARGV[1] and not rec['moving'] then return 1 end
if ARGV[3] ~= '1' and rec['moving'] ~= ARGV[1] then return 0 end
rec['actor'] = ARGV[1]
rec['moving'] = nil
rec['parked'] = nil
rewrite(KEYS[1], rec)
return 1
""",
)


class Rescue:
    """The moves of tables whose node is lost, for one gateway."""

    def __init__(self, redis: AsyncRedis, actors: Actors, pool: Pool) -> None:
        self.redis = redis
        self.actors = actors
        self.pool = pool
        self._moving: dict[str, asyncio.Task[bool]] = {}  # code -> its move from here
        # The moves' owner: a move outlives the call that started it (shielded: a player who
        # leaves must not cut it in half), not the gateway (`close`). Its callers see failures.
        self.tasks = Tasks("rescue", report=False)

    async def lost(self, handle: Handle) -> Place | None:
        """Where the actor was, if its node is lost by the rules above; None otherwise."""
        place = await asyncio.to_thread(place_of, handle)
        if place is None or place.state != "ALIVE":
            return None
        worker, raylet = await asyncio.gather(answers(place.worker), answers(place.raylet))
        return None if worker or raylet else place

    async def move(self, code: str, name: str, moves: int, handle: Handle, place: Place) -> bool:
        """Move the table off the lost node (one move at a time per table from this gateway);
        True once the record names a new incarnation (by this gateway or another)."""
        running = self._moving.get(code)
        if running is None or running.done():
            running = self.tasks.spawn(self._move(code, name, moves, handle, place), code)
            self._moving[code] = running
            running.add_done_callback(lambda _: self._moving.pop(code, None))
        return await asyncio.shield(running)

    async def close(self) -> None:
        """The gateway stops: moves under way end (`CLOSE_GRACE_S`), none starts."""
        await self.tasks.close(CLOSE_GRACE_S)

    async def _move(self, code: str, name: str, moves: int, handle: Handle, place: Place) -> bool:
        began = time.monotonic()
        node = await self._live_node(place.node)
        if not node:
            # No other node answers either: this gateway is the one cut off, or the cluster
            # has nowhere to go. Moving would only churn: Ray's verdict decides.
            log.warning("table %s: its node does not answer, nor does any other: not moved", code)
            return False
        pooled = await self._ready_actor(place.node)
        into = pooled[0] if pooled is not None else ""
        if into:
            # The pooled actor learns its table from actor -> code, as a restart would.
            await self.redis.set(keys.actor(into), code, ex=KEY_TTL_S)
        won = int(await MOVE_HERE.run(self.redis, [keys.table(code)], [name, moves, into]))
        if not won:
            if pooled is not None:
                await self.redis.delete(keys.actor(into))
                await self.pool.requeue(into)
            return await self._follow(code, name, handle)
        adopted = pooled is not None and await self._adopted(code, won, *pooled)
        if pooled is not None and not adopted:
            # It could not: killed, and the table restarted under its own name below.
            await asyncio.to_thread(self.actors.kill, pooled[1])
            await self.redis.delete(keys.actor(into))
            await HAND_OVER.run(self.redis, [keys.table(code)], [name, won, "1"])
        # Ray frees the old name at once, and never restarts that incarnation.
        await asyncio.to_thread(self.actors.kill, handle)
        how = f"taken over by pooled actor {into}"
        if not adopted:
            await self.redis.set(keys.actor(name), code, ex=KEY_TTL_S)
            await asyncio.to_thread(self.actors.start, name, node)
            how = "restarted under its name on a live node"
        log.warning(
            "table %s: node %s lost (its actor and raylet do not answer); %s (move %d), in %.2f s",
            code,
            place.node[:12],
            how,
            won,
            time.monotonic() - began,
        )
        return True

    async def _ready_actor(self, lost: str) -> tuple[str, Handle] | None:
        """A pooled actor ready now, answering, holding no table, not on the lost node (Ray's
        actor table says where each runs: those on it are passed over without a wait)."""
        for _ in range(POOLED_TRIES):
            taken = await self.pool.take_ready()
            if taken is None:
                return None
            where = await asyncio.to_thread(place_of, taken[1])
            if where is None or where.state != "ALIVE" or where.node == lost:
                await self.pool.requeue(taken[0])
                continue
            try:
                async with asyncio.timeout(PROBE_S):
                    status = await ask(taken[1], Probe())
            except Exception:
                await self.pool.requeue(taken[0])  # its node may be the lost one: far end
                continue
            if status.code or status.node == lost:
                await self.pool.requeue(taken[0])
                continue
            return taken
        return None

    async def _adopted(self, code: str, moves: int, into: str, handle: Handle) -> bool:
        """The pooled actor took the table over and is named its actor."""
        try:
            async with asyncio.timeout(ADOPT_S):
                outcome = await ask(handle, Adopt(code))
        except Exception as exc:
            log.warning("table %s: pooled actor %s did not take it over (%r)", code, into, exc)
            return False
        if not outcome.ok:
            log.warning("table %s: pooled actor %s refused it (%s)", code, into, outcome.error)
            return False
        return bool(await HAND_OVER.run(self.redis, [keys.table(code)], [into, moves, "0"]))

    async def _follow(self, code: str, name: str, handle: Handle) -> bool:
        """Another gateway won the move: wait (bounded) until the record names its new actor,
        or Ray runs a new one under the old name."""
        old = actor_id(handle)
        deadline = time.monotonic() + FOLLOW_S
        while time.monotonic() < deadline:
            raw = await self.redis.get(keys.table(code))
            if raw is None:
                return True  # stopped meanwhile: the caller finds out
            if json.loads(raw).get("actor") != name:
                return True
            found = await self.actors.lookup(name)
            if found is not None and actor_id(found) != old:
                return True
            await asyncio.sleep(0.1)
        return False

    async def _live_node(self, lost: str) -> str:
        """A node other than `lost` that offers table slots and whose raylet answers, at
        random (a lost node's tables spread over the rest); "" when none does."""
        nodes = await asyncio.to_thread(raylets, True)
        nodes.pop(lost, None)
        ids = list(nodes)
        random.shuffle(ids)
        alive = await asyncio.gather(*(answers(nodes[i]) for i in ids))
        for node, ok in zip(ids, alive, strict=True):
            if ok:
                return node
        return ""
