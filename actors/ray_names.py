"""Table actors by name: the one place that makes an actor's name, asks Ray for the actor of a
name, starts one under a name, and stops one.

A name is all Redis keeps of an actor (the pool's list, a table's record), and a name outlives
its actor when Redis outlives Ray: every name read from Redis is looked up here before use.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Protocol

import ray
from ray.actor import ActorHandle
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from actors import keys, previous_release
from actors.table_actor import actor_class
from cluster.redis_client import RedisSettings, settings_of

Handle = ActorHandle[Any]


def new_name() -> str:
    """A new table actor's Ray name (`keys.ACTOR_PREFIX`: every table actor's name starts so).
    16 hex digits: the previous release made 12, and a name of 12 tells its actors apart."""
    return f"{keys.ACTOR_PREFIX}{uuid.uuid4().hex[:16]}"


def new_table_id() -> str:
    """A new table's id (its replay's name, its matches' ids), never its actor's name: an
    actor serves table after table (actors/reuse.py). Shaped as a name, as table ids were when
    they were the actor's (`gateway/routes/replays.py` checks that shape)."""
    return new_name()


def named(name: str, namespace: str) -> Handle | None:
    """The live actor named `name` in `namespace`, None when Ray has none (a blocking call to
    Ray's control store)."""
    try:
        handle: Handle = ray.get_actor(name, namespace=namespace)
    except ValueError:  # Ray knows no live actor of that name
        return None
    previous_release.note(name, handle)  # bridge (2026-12-02): goes in the next release
    return handle


class Actors(Protocol):
    """What the pool and the directory's rooms ask of Ray about table actors."""

    def start(self, name: str, node: str = "") -> Handle:
        """The actor named `name`: started (on `node`, when named and able), or the one running
        already under that name."""

    async def lookup(self, name: str) -> Handle | None:
        """The live actor named `name`, None when Ray has none."""

    def kill(self, handle: Handle) -> None:
        """Stop the actor for good (no restart)."""


class RayActors:
    """`Actors` in one Ray namespace, for one cell's gateways."""

    def __init__(self, namespace: str, store: str | RedisSettings, cell: str = "") -> None:
        self.namespace = namespace
        self.store = settings_of(store)
        self.cell = cell
        self._cls = actor_class()

    def start(self, name: str, node: str = "") -> Handle:
        """Given an existing table's actor name, the same actor again (it restores itself from
        Redis). Two gateways doing so at once get one actor. `node`: a node known to be alive
        (actors/rescue.py), preferred over Ray's own choice, which may still count a lost node
        among the living."""
        options: dict[str, Any] = {}
        if node:
            options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node, soft=True)
        handle: Handle = self._cls.options(
            name=name, namespace=self.namespace, lifetime="detached", get_if_exists=True, **options
        ).remote(name, self.store.portable(), self.cell)
        previous_release.note(name, handle)  # bridge (2026-12-02): goes in the next release
        return handle

    async def lookup(self, name: str) -> Handle | None:
        """A control-store call: off the event loop, which serves every player here."""
        return await asyncio.to_thread(named, name, self.namespace)

    def kill(self, handle: Handle) -> None:
        ray.kill(handle, no_restart=True)
