"""A gateway's side of the push path: one subscription per table this gateway serves.

Each `TableHub` follows its table through one Ray streaming generator and fans every event out to
the connections whose seat its audience includes (R30). Events reach it from two sources — the
stream, and the replies of this gateway's own commands — and are put back in the table's `seq`
order, duplicates dropped. A gap that does not fill (a reply lost with a crashed actor) or an
actor that came back behind us starts the subscription again from the last seq delivered; when
the table's log no longer reaches back that far, every connection gets a fresh `welcome`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import ray
from ray.exceptions import ActorDiedError

from actors.directory import Directory, TableGone, restarting
from actors.feed import Entry
from gateway import metrics
from gateway.connection import Connection, body_of
from gateway.errors import (
    CLOSE_GOING_AWAY,
    CLOSE_REPLACED,
    CLOSE_SEAT_CHANGED,
    CLOSE_UNKNOWN_TABLE,
    close_reason,
    error_frame,
)

log = logging.getLogger("quatro.hub")

RENEW_S = 10.0  # the actor's lease on a subscription is 30 s
GAP_WAIT_S = 2.0
START_WAIT_S = 30.0
TABLE_LOST_MESSAGE = "this table was lost: its saved state could not be read back"


def welcome_frame(frame_id: str | None, reply: dict[str, Any], player_id: str) -> dict[str, Any]:
    seat = reply["seat"]
    return {
        "type": "welcome",
        "id": frame_id,
        "you": {"player_id": player_id, "seat": seat, "team": reply["team"], "host": seat == 0},
        "table": reply["view"],
    }


class TableHub:
    def __init__(self, code: str, directory: Directory, gateway: str) -> None:
        self.code = code
        self.directory = directory
        self.gateway = gateway
        self.conns: dict[str, Connection] = {}
        self.delivered = -1  # last seq fanned out; -1 until the first batch says where we are
        self.pending: dict[int, Entry] = {}
        self.ready = asyncio.Event()
        self.failed: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._stream: asyncio.Task[None] | None = None
        self._gap_timer: asyncio.TimerHandle | None = None

    # -- life ---------------------------------------------------------------------------------
    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._follow())
        async with asyncio.timeout(START_WAIT_S):
            await self.ready.wait()
        if self.failed is not None:
            raise self.failed

    async def stop(self) -> None:
        if self._gap_timer is not None:
            self._gap_timer.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        with contextlib.suppress(Exception):
            handle = await self.directory.handle(self.code)
            await handle.unsubscribe.remote(self.gateway)

    async def _follow(self) -> None:
        delay = 0.1
        while True:
            stream = self._stream = asyncio.get_running_loop().create_task(self._stream_once())
            try:
                await asyncio.wait([stream])
            except asyncio.CancelledError:
                stream.cancel()
                raise
            try:
                stream.result()
                delay = 0.1
            except asyncio.CancelledError:
                log.info("table %s: resubscribing after a gap", self.code)
            except TableGone as exc:
                await self._closed(exc)
                return
            except Exception as exc:
                log.warning("table %s: subscription broke (%r)", self.code, exc)
                if isinstance(exc, ActorDiedError) and not restarting(exc):
                    self.directory.forget(self.code)  # look it up again: it may be re-created
                if await self._stopped():
                    await self._closed(TableGone(self.code))
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
            metrics.RESUBSCRIBES.inc()

    async def _closed(self, exc: TableGone) -> None:
        """The table is gone for good: tell every player why, then close (4404)."""
        self.failed = exc
        self.ready.set()
        lost = False
        with contextlib.suppress(Exception):
            lost = await self.directory.lost(self.code)
        for conn in list(self.conns.values()):
            if lost:
                conn.answer(error_frame(None, "table_lost", TABLE_LOST_MESSAGE))
            conn.close(CLOSE_UNKNOWN_TABLE, "the table was lost" if lost else "the table is closed")

    async def _stopped(self) -> bool:
        """The table was stopped for good (its record is gone), not merely restarting."""
        try:
            return await self.directory.record(self.code) is None
        except Exception:
            return False

    async def _stream_once(self) -> None:
        handle = await self.directory.handle(self.code)
        gen: Any = handle.subscribe.remote(self.gateway, self.delivered)
        renew = asyncio.get_running_loop().create_task(self._renew(handle))
        try:
            async for ref in gen:
                batch = await ref
                metrics.STREAM_BATCHES.inc()
                if "head" in batch:
                    await self._first_batch(batch)
                else:
                    self.feed(batch["events"])
        finally:
            renew.cancel()
            with contextlib.suppress(Exception):
                ray.cancel(gen)

    async def _renew(self, handle: Any) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            with contextlib.suppress(Exception):
                await handle.renew.remote(self.gateway)

    async def _first_batch(self, batch: dict[str, Any]) -> None:
        head = int(batch["head"])
        if self.delivered < 0:
            self.delivered = head
        elif batch.get("resync") or head < self.delivered:
            # The table came back without the events we miss (or behind what we sent):
            # a new snapshot for everyone is the whole truth (R25).
            await self._resync()
        self.feed(batch["events"])
        self.ready.set()

    async def _resync(self) -> None:
        handle = await self.directory.handle(self.code)
        wanted = {(c.seat, c.player_id) for c in self.conns.values() if c.after is not None}
        reply = await handle.views.remote(sorted(wanted))
        self.delivered = int(reply["seq"])
        self.pending = {s: e for s, e in self.pending.items() if s > self.delivered}
        for conn in self.conns.values():
            if conn.after is None:
                continue
            view = reply["views"].get(conn.seat)
            if view is None or reply["holders"].get(conn.seat) != conn.player_id:
                conn.close(CLOSE_SEAT_CHANGED, close_reason(CLOSE_SEAT_CHANGED))
                continue
            conn.after = self.delivered
            answer = {"seat": conn.seat, "team": reply["teams"][conn.seat], "view": view}
            conn.event(welcome_frame(None, answer, conn.player_id), reply["at"])

    # -- events -------------------------------------------------------------------------------
    def feed(self, entries: list[Entry]) -> None:
        """Deliver events in seq order, each once, whichever way they came."""
        if self.delivered < 0:
            return  # not following yet: whatever this is, the first batch's head covers it
        for entry in entries:
            if entry[0] > self.delivered:
                self.pending[entry[0]] = entry
        while (nxt := self.pending.pop(self.delivered + 1, None)) is not None:
            self.delivered += 1
            self._fan_out(nxt)
        if self.pending and self._gap_timer is None:
            at = self.delivered
            self._gap_timer = asyncio.get_running_loop().call_later(GAP_WAIT_S, self._gap_check, at)

    def _gap_check(self, at: int) -> None:
        self._gap_timer = None
        if self.pending and self.delivered == at and self._stream is not None:
            self._stream.cancel()  # _follow subscribes again from `delivered`
        elif self.pending:
            self.feed([])

    def _fan_out(self, entry: Entry) -> None:
        wire = entry[3]
        kind = wire.get("type")
        if isinstance(kind, str) and kind.startswith("_"):
            # Orders for one connection, never forwarded. `_kick` is `_close` 4409 as tables
            # saved before `_close` existed still say it.
            if kind in ("_close", "_kick"):
                conn = self.conns.get(str(wire.get("conn")))
                code = wire.get("code", CLOSE_REPLACED)
                if conn is not None and code in (CLOSE_REPLACED, CLOSE_SEAT_CHANGED):
                    conn.close(code, close_reason(code))
            return
        body = body_of(wire)
        for conn in self.conns.values():
            conn.deliver(entry, body)


class Hubs:
    """Every table this gateway follows, by code."""

    def __init__(self, directory: Directory, gateway: str) -> None:
        self.directory = directory
        self.gateway = gateway
        self.hubs: dict[str, TableHub] = {}
        self._background: set[asyncio.Task[Any]] = set()

    async def attach(self, code: str, conn: Connection) -> TableHub:
        hub = self.hubs.get(code)
        if hub is None:
            hub = self.hubs[code] = TableHub(code, self.directory, self.gateway)
            metrics.TABLES.set(len(self.hubs))
        hub.conns[conn.conn_id] = conn
        try:
            await hub.start()
        except BaseException:
            self.detach(code, conn)
            raise
        return hub

    def detach(self, code: str, conn: Connection) -> None:
        hub = self.hubs.get(code)
        if hub is None:
            return
        hub.conns.pop(conn.conn_id, None)
        if not hub.conns:
            del self.hubs[code]
            metrics.TABLES.set(len(self.hubs))
            self._own(asyncio.get_running_loop().create_task(hub.stop()))

    def _own(self, task: asyncio.Task[Any]) -> None:
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def call(self, code: str, method: str, *args: Any) -> Any:
        """Call the table actor for a command of ours. Its events are left out of our stream
        (they travel in the reply), so they must reach our players even when the caller is
        cancelled meanwhile (a socket closing mid-command): the call is shielded, and an
        abandoned reply is still fanned out when it arrives."""
        task = asyncio.get_running_loop().create_task(self.directory.call(code, method, *args))
        self._own(task)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(lambda t: self._feed_abandoned(code, t))
            raise

    def _feed_abandoned(self, code: str, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or task.exception() is not None:
            return
        reply = task.result()
        if isinstance(reply, dict):
            self.feed(code, reply.get("events") or [])

    def feed(self, code: str, entries: list[Entry]) -> None:
        hub = self.hubs.get(code)
        if hub is not None and entries:
            hub.feed(entries)

    def going_away(self) -> None:
        for hub in self.hubs.values():
            for conn in hub.conns.values():
                conn.close(CLOSE_GOING_AWAY, "server going away: reconnect")

    async def close(self) -> None:
        for hub in list(self.hubs.values()):
            await hub.stop()
        self.hubs.clear()
        if self._background:
            await asyncio.wait(self._background, timeout=5)
