"""The table actor: one Ray actor per table, owning the engine's state, its clock and its bots.

Every change follows one path: judge and apply (engine, synchronously: no `await` between
reading and changing the table, though Ray runs many calls of an async actor at once) → persist a
snapshot to Redis → publish to the gateways' subscriptions. A restarted incarnation (Ray restarts
it after a crash) reads the snapshot back: scores, hands, signs, clocks and the recent command
ids, so a command retried by a gateway is never applied twice.

This module is the Ray side only: the table itself, with that path and its rooms (store,
watchers, leases, clock, tasks), is `actors.table_core.TableCore`, plain Python. What Ray adds
is here: the actor's options, its constructor on the actor's loop (which starts a restarted
table's clock), where it listens (its node's address), and how it ends (`ray.kill`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from collections.abc import AsyncIterator
from typing import Any

import ray

from actors import kept, priority, reuse
from actors.clock import now_ms
from actors.link_server import LinkServer, port_range
from actors.previous_release import PreviousReleaseMethods
from actors.protocol import (
    Address,
    Adopt,
    Batch,
    Endpoint,
    HandOver,
    Open,
    Outcome,
    Probe,
    Renew,
    SeatOf,
    Serve,
    Status,
    Subscribe,
    Summary,
    TableCall,
    TableNotHere,
    Unsubscribe,
)
from actors.snapshot import SnapshotUnreadable, migrate, record_json

# Re-exported: other modules (the directory, tests, load tests) import these from here.
from actors.store import KEY_TTL_S, TableMoved
from actors.table_core import TableCore
from cluster.link_secret import link_secret
from cluster.redis_client import RedisSettings, settings_of

__all__ = [
    "KEY_TTL_S",
    "SnapshotUnreadable",
    "TableActor",
    "actor_class",
    "migrate",
    "now_ms",
    "record_json",
]

log = logging.getLogger("quatro.table")

# The data plane: the ports table actors may listen on (outside Ray's worker ports, 10002-19999
# by default, and the kernel's ephemeral ones), and how long a silent gateway is kept.
PORTS_ENV = "QUATRO_TABLE_PORTS"
DEFAULT_PORTS = "20000-29999"
LINK_SILENCE_S = float(os.environ.get("QUATRO_LINK_SILENCE", "20"))
# Once the table stopped, how long its links get to say `Gone` before the actor ends.
GONE_WAIT_S = 0.2


class TableActor(PreviousReleaseMethods):
    """One table. Created from the pool without a table; `Open` gives it one. Two Ray methods
    only: `ask`, for every call, and `subscribe`, the stream; and the previous release's, for
    its handles and gateways (actors/previous_release.py, added 2026-12-02: see there when they
    go).

    Ray loads this class in each process by the names of its methods: a release that drops or
    renames one (a private one too) leaves the tables opened before its upgrade unable to load
    on its workers when a drain restarts them there (docs/operations.md, "Upgrade")."""

    # Ray runs an async actor's `async def __init__` on the actor's event loop (type checkers
    # want __init__ to return None, hence the ignore).
    async def __init__(self, name: str, store: str | RedisSettings, cell: str = "") -> None:  # type: ignore[misc]
        """`store`: the Redis its table is saved in (a bare URL from a gateway of an older
        release). `cell`: the cell whose Ray runs this actor ("" without cells): its saves
        are refused once the table's record names another (the table moved:
        actors/cells.py)."""
        self.name = name
        self.store = settings_of(store)
        self.cell = cell
        self.core = self._new_core()
        # Where Ray started this process: a pooled actor's priority (actors/priority.py).
        self.start_nice = priority.current()
        self.tables = 0  # tables this process served to their end (actors/reuse.py)
        # Asked without a table's code (a gateway of an older release): never reused.
        self.one_table = False
        # Which process this is: a gateway that reaches another (a port reused after a
        # restart) is refused and asks Ray again.
        self.incarnation = secrets.token_hex(8)
        self.link: LinkServer | None = None
        self._listening: asyncio.Task[tuple[str, int]] | None = None
        # Nobody may call a restarted table for a long time (everyone left): its clock starts
        # here, on the loop, so bots, deadlines and the idle stop go on without waiting for a
        # player; a lost table retires at once. (Before async __init__, a thread called the
        # actor until it answered: the loop ran nothing of ours until a call arrived.)
        if self.core.lost or self.core.store.superseded:
            self.core.tasks.spawn(self._retire(), "retire")
        else:
            self.core.start()
            if self.core.table is not None:
                priority.to_play()  # a restarted table plays on at once (actors/priority.py)
            else:
                self._watch_listing()

    async def _retire(self) -> None:
        """A lost table's incarnation ends for good: its players are told `table_lost` by the
        tombstone its restore left. So does one whose table was moved into another actor
        while it was down (actors/rescue.py): the table is that actor's now."""
        ray.kill(ray.get_runtime_context().current_actor, no_restart=True)

    def _new_core(self) -> TableCore:
        return TableCore(
            self.name,
            self.store,
            on_stop=self._end,
            cell=self.cell,
            on_moved=self._moved,
            on_park=self._parked,
        )

    async def _end(self) -> None:
        """The table stopped by itself (the core's tasks are closed, its records gone): the
        actor goes back to the pool for the next table, or ends (actors/reuse.py)."""
        if self.link is not None:
            # Each link's pusher now says `Gone` to its gateway; let those lines leave.
            await self.link.close()
            await asyncio.sleep(GONE_WAIT_S)
        if not await self._pooled_again():
            ray.kill(ray.get_runtime_context().current_actor, no_restart=True)

    async def _parked(self) -> None:
        """The table parked (actors/parking.py): its links are cut without `Gone` (it is not
        gone: their gateways wake it where they find it next), and the actor goes back to the
        pool as after a stop, or ends."""
        if self.link is not None:
            self.link.drop()
        if not await self._pooled_again():
            ray.kill(ray.get_runtime_context().current_actor, no_restart=True)

    async def _pooled_again(self) -> bool:
        """A fresh core, incarnation and priority, then this actor's name at the pool's far
        end. False when it must end instead: asked the older way, opened under its own name (its
        replay is found by the actor's record, which a next table would overwrite), served its
        count of tables, or Redis did not answer."""
        old = self.core
        self.tables += 1
        if (
            self.one_table
            or old.lost
            or old.store.table_id == self.name
            or self.tables >= reuse.tables_per_actor()
        ):
            return False
        if not await old.store.release(old.code):
            return False
        # From here on a call meets the new, empty core; a data-plane hello, a new incarnation.
        self.core = self._new_core()
        self.incarnation = secrets.token_hex(8)
        self.link = None
        self._listening = None
        priority.to(self.start_nice)
        log.info(
            "table actor %s: table %s stopped or parked; back in the pool", self.name, old.code
        )
        if not await self.core.store.pooled():
            return False
        self._watch_listing()
        return True

    def _watch_listing(self) -> None:
        """While this actor has no table, look now and then whether a pool list names it
        (actors/reuse.py): one that none names ends rather than hold its slot for good."""
        self.core.tasks.spawn(self._listing(self.core), "listing")

    async def _listing(self, core: TableCore) -> None:
        every, misses = reuse.check_every_s(), 0
        while True:
            await asyncio.sleep(every)
            if core is not self.core or core.table is not None or core.lost:
                return  # it has a table now (that core's tasks end with it)
            listed = await core.store.listed()
            if listed is None:
                continue  # Redis did not answer: no word either way
            misses = 0 if listed else misses + 1
            if misses >= reuse.MISSES_TO_END and core.table is None and not core.opening:
                log.warning("table actor %s: on no pool list, and no table: ended", self.name)
                ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
                return

    def _moved(self) -> None:
        """The table moved (to another cell, or off a node judged lost: actors/rescue.py): this
        incarnation ends at once, without `Gone` (the table is not gone: its followers' links
        drop and they find it where it went)."""
        ray.kill(ray.get_runtime_context().current_actor, no_restart=True)

    # -- calls from gateways ------------------------------------------------------------------
    async def ask(self, call: TableCall[Any]) -> object:
        """Every call of a gateway over Ray (actors/protocol.py), answered as its type says.
        Each starts the table's clock if it is not running (a restarted table's is already).
        A call about a table this actor does not hold raises `TableNotHere`."""
        self._check(call)
        core = self.core
        try:
            return await self._answer(call)
        except TableMoved as exc:
            if core.parking.done:  # it parked meanwhile: the gateway wakes it and asks again
                raise TableNotHere(core.code) from exc
            raise

    async def _answer(self, call: TableCall[Any]) -> object:
        self.core.start()
        match call:
            case Serve(request=request):
                return await self.core.serve(request)
            case Endpoint():
                return await self._endpoint()
            case Summary():
                return self.core.requests.summary()
            case SeatOf(player_id=player_id):
                return self.core.requests.seat_of(player_id)
            case Probe():
                return self._status()
            case Open():
                return await self._open(call)
            case Adopt(code=code):
                adopted = self.core.adopt(code)
                if adopted.ok:
                    priority.to_play()
                return adopted
            case HandOver():
                return await self.core.saves.hand_over()
            case Renew(gateway=gateway):
                return self.core.leases.renew(gateway)
            case Unsubscribe(gateway=gateway):
                self.core.leases.unsubscribe(gateway)
                return None
            case kept.Inspect(needles=needles):
                return kept.inspect(self, needles)
        raise TypeError(f"not a call this table actor answers: {type(call).__name__}")

    def _check(self, call: object) -> None:
        """A call about a table (`table`, actors/protocol.py `addressed`) reaches only the
        actor holding that table; one without the code comes from an older gateway, which may
        remember this actor for a table that ended: then it is never reused (actors/reuse.py).
        """
        if "table" not in getattr(type(call), "__dataclass_fields__", {}):
            return
        table = getattr(call, "table", None)  # unset in a call pickled by an older release
        if not table:
            self.one_table = True
        elif table != self.core.code or self.core.table is None:
            raise TableNotHere(table)

    def _status(self) -> Status:
        if self.core.lost:
            ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
        refused = self.link.refused if self.link is not None else 0
        node = ray.get_runtime_context().get_node_id()
        core = self.core
        inc = self.incarnation
        return Status(os.getpid(), node, core.code, core.feed.seq, inc, refused, priority.current())

    async def _endpoint(self) -> Address | None:
        """Where this incarnation serves its data plane (None: no table here). Listening starts
        with the first ask, so pooled actors hold no port."""
        if self.core.table is None or self.core.lost:
            return None
        if self._listening is None:
            self._listening = self.core.tasks.spawn(self._listen(), "listen")
        host, port = await asyncio.shield(self._listening)
        return Address(host, port, self.incarnation)

    async def _listen(self) -> tuple[str, int]:
        host = str(ray.util.get_node_ip_address())  # type: ignore[no-untyped-call]
        secret = await asyncio.to_thread(link_secret, self.store)
        # The link serves the core itself: a request on it starts the clock like a Ray call.
        self.link = LinkServer(self.core, secret, self.incarnation, LINK_SILENCE_S)
        port = await self.link.start(host, port_range(os.environ.get(PORTS_ENV, DEFAULT_PORTS)))
        log.info("table %s: data plane on %s:%d", self.core.code, host, port)
        return host, port

    async def _open(self, call: Open) -> Outcome:
        """Give this pooled actor its table (`TableCore.open`), and the priority of play."""
        # Unset in an `Open` pickled by an older release.
        table_id = getattr(call, "table_id", "")
        level = getattr(call, "bot_level", "")
        config = {**call.config, "bot_level": level} if level else call.config
        opened = await self.core.open(
            call.code, config, call.host, call.name, call.idle, call.replay_ttl, table_id
        )
        if opened.ok:
            priority.to_play()
        return opened

    # -- the subscription over Ray ------------------------------------------------------------
    async def subscribe(self, sub: Subscribe) -> AsyncIterator[Batch]:
        """The control plane's way to follow the table (a Ray streaming generator, renewed
        every few seconds): what gateways used before the data plane, kept for A/B runs
        (`QUATRO_DATA_PLANE=ray`). A lease that runs out means its gateway died."""
        self._check(sub)
        self.core.start()
        async for batch in self.core.follow(sub.gateway, sub.after, True):
            yield batch


def actor_class(max_concurrency: int = 1000) -> Any:
    """The Ray actor class: no CPU, one `table_slot`, restarted forever, commands never
    retried by Ray (the gateway retries with the same command id instead). Tables spread over
    the nodes that offer slots: Ray's default would fill the gateway's own node to half its
    slots first, leaving the others idle while it queues for CPU."""
    options: dict[str, Any] = {
        "num_cpus": 0,
        "resources": {"table_slot": 1},
        "scheduling_strategy": "SPREAD",
        "max_restarts": -1,
        "max_task_retries": 0,
        "max_concurrency": max_concurrency,
    }
    return ray.remote(**options)(TableActor)
