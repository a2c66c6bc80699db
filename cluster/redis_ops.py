"""Every Lua script and every pipeline of the code, each registered by a name, each run through
here and checked to touch one hash slot.

On a Redis Cluster a script, a transaction or a multi-key command must name keys of one slot
(`quatro:{CODE}:…` share their code's), or the server refuses it with CROSSSLOT. The check here
runs on every Redis, the single one of `make run` and of the test suite included, so a script
that would span slots fails at once on a laptop and not first in production. The registry is
what `tests/store/test_cluster_ops.py` runs against a real cluster: it fails for any
script or pipeline registered here that it did not run there, and for any made elsewhere.

A pipeline is never a transaction (MULTI/EXEC): redis-py's async cluster client runs a
transaction's commands on an event loop of its own, in a thread, which the client's connections
then belong to; what must be atomic is a script. A pipeline may name keys of several slots: a
cluster client sends each node its part, in parallel, so nothing may depend on the order of its
commands across keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis.asyncio.cluster as aiocluster
from redis.crc import key_slot
from redis.exceptions import ConnectionError, NoScriptError

from cluster.redis_client import AsyncRedis, SyncRedis

SCRIPTS: dict[str, Script] = {}
PIPELINES: dict[str, Pipeline] = {}
# The names run since `record()` (a test that must run them all); None: nobody records.
_ran: set[str] | None = None

# Commands whose every argument is a key; for the rest of those pipelines use, the first one is.
ALL_KEYS = frozenset({"DEL", "EXISTS", "MGET", "UNLINK", "TOUCH"})
NO_KEYS = frozenset({"WAIT", "PING", "TIME", "INFO"})


class CrossSlot(Exception):
    """A script, a transaction or a multi-key command of the code names keys of two slots."""


def record() -> set[str]:
    """Start noting the names of the scripts and pipelines run in this process."""
    global _ran
    _ran = set()
    return _ran


def _note(name: str) -> None:
    if _ran is not None:
        _ran.add(name)


def one_slot(name: str, keys: Sequence[str | bytes]) -> None:
    """Raise CrossSlot unless `keys` all hash to one slot."""
    slots = {key_slot(k.encode() if isinstance(k, str) else k) for k in keys}
    if len(slots) > 1:
        raise CrossSlot(f"{name}: keys of {len(slots)} slots: {list(keys)}")


class Script:
    """A Lua script: `await SCRIPT.run(client, keys, args)`. Run by its SHA, loaded when the
    server does not know it (a restarted Redis, a replica promoted: the script cache is not
    replicated)."""

    def __init__(self, name: str, source: str) -> None:
        if name in SCRIPTS:
            raise ValueError(f"two scripts named {name}")
        self.name = name
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        SCRIPTS[name] = self

    async def run(self, client: AsyncRedis, keys: Sequence[str], args: Sequence[Any]) -> Any:
        one_slot(self.name, keys)
        _note(self.name)
        try:
            return await client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            await client.script_load(self.source)
            return await client.evalsha(self.sha, len(keys), *keys, *args)

    def run_sync(self, client: SyncRedis, keys: Sequence[str], args: Sequence[Any]) -> Any:
        one_slot(self.name, keys)
        _note(self.name)
        try:
            return client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            client.script_load(self.source)
            return client.evalsha(self.sha, len(keys), *keys, *args)

    def queue(self, pipe: Any, keys: Sequence[str], args: Sequence[Any]) -> None:
        """Queue the script on a pipeline by its text (EVAL): a pipeline cannot load it on the
        way, and the server keeps the compiled script, so only the bytes are sent again."""
        one_slot(self.name, keys)
        _note(self.name)
        pipe.eval(self.source, len(keys), *keys, *args)


class Pipeline:
    """A named batch of commands, one round trip per node: `pipe = BATCH.on(client)`, queue
    commands, then `await BATCH.run(pipe)`. Never a transaction (see above); each of its
    multi-key commands stays within one slot."""

    def __init__(self, name: str) -> None:
        if name in PIPELINES:
            raise ValueError(f"two pipelines named {name}")
        self.name = name
        PIPELINES[name] = self

    def on(self, client: AsyncRedis | SyncRedis) -> Any:
        return client.pipeline(transaction=False)

    def _check(self, pipe: Any) -> None:
        _note(self.name)
        for args in _queued(pipe):
            one_slot(f"{self.name}: {args[0]}", keys_of(args))

    async def run(self, pipe: Any) -> list[Any]:
        self._check(pipe)
        return list(await pipe.execute())

    def run_sync(self, pipe: Any) -> list[Any]:
        self._check(pipe)
        return list(pipe.execute())


@dataclass(frozen=True, slots=True)
class Waited:
    """A script's answer, and how many replicas WAIT found had its write (`run_waited`)."""

    answer: Any
    acked: int
    wanted: int
    moved: bool  # the slot changed primary meanwhile: `acked` is not the new primary's count

    @property
    def replicated(self) -> bool:
        return not self.moved and self.acked >= self.wanted

    def why(self) -> str:
        """What a log says of a write no replica confirmed."""
        return "the slot moved" if self.moved else f"{self.acked} of {self.wanted}"


class Resent(ConnectionError):
    """A script and its WAIT were sent again by the cluster client, after a connection error
    (`run_waited`): WAIT's count is then no replica's. Sent again whole, it is."""


def _refreshes(client: aiocluster.RedisCluster) -> int:
    """How many times the cluster client has refreshed its slot map (redis-py's own count)."""
    return int(getattr(client.nodes_manager, "_epoch", 0))


async def run_waited(
    batch: Pipeline,
    script: Script,
    client: AsyncRedis,
    keys: Sequence[str],
    args: Sequence[Any],
    replicas: int,
    timeout_ms: int,
) -> Waited:
    """`script`, then `WAIT replicas timeout_ms`, on one connection: `batch`, a pipeline of
    their own. WAIT counts the replicas that have every write of the connection it is sent on;
    on a cluster both go to the slot's primary. If the slot moved meanwhile (a failover), the
    count is not that primary's: not replicated. Raises Resent (a redis ConnectionError) when
    the cluster client sent the pair again after a connection error: redis-py's cluster
    pipeline then drops the node WAIT was given and sends it to any node, on a connection of
    its own, where it counts every replica at once (a write no replica got would pass for
    replicated: tests/store/test_failover.py stalls a replica and breaks the connection)."""
    pipe = batch.on(client)
    script.queue(pipe, keys, args)
    node = None
    refreshed = 0
    if isinstance(client, aiocluster.RedisCluster):
        await client.initialize()
        node = client.get_node_from_key(keys[0])
        refreshed = _refreshes(client)
        pipe.execute_command("WAIT", replicas, timeout_ms, target_nodes=node)
    else:
        pipe.execute_command("WAIT", replicas, timeout_ms)
    answer, acked = await batch.run(pipe)
    # A retry refreshes the slot map first; so may another command of this client meanwhile (a
    # broken connection there), which costs this write one more sending, no more.
    if isinstance(client, aiocluster.RedisCluster) and _refreshes(client) != refreshed:
        raise Resent(f"{batch.name}: sent again after a connection error; WAIT not trusted")
    moved = node is not None and client.get_node_from_key(keys[0]).name != node.name  # type: ignore[union-attr]
    return Waited(answer, int(acked), replicas, moved)


def _queued(pipe: Any) -> list[tuple[Any, ...]]:
    """The commands a pipeline holds, as argument tuples (a single Redis's pipeline or a
    cluster's: the cluster client checks the slots of a transaction itself too)."""
    stack = getattr(pipe, "command_stack", None)
    if stack is None:
        strategy = getattr(pipe, "_execution_strategy", None)
        stack = getattr(strategy, "_command_queue", None) or []
    out = []
    for item in stack:
        args = getattr(item, "args", None)
        out.append(tuple(args if args is not None else item[0]))
    return out


def keys_of(args: Sequence[Any]) -> list[str | bytes]:
    """The keys one queued command names (for the commands pipelines use)."""
    command = str(args[0]).upper()
    if command in NO_KEYS or len(args) < 2:
        return []
    if command in ALL_KEYS:
        return [a for a in args[1:]]
    if command in ("EVAL", "EVALSHA"):
        return list(args[3 : 3 + int(args[2])])
    return [args[1]]
