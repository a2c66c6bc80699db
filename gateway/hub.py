"""A gateway's side of the push path: one link per table this gateway serves.

Each `TableHub` follows its table through one link (`gateway/table_link.py`: a TCP connection
to the actor, or Ray calls for A/B runs) and fans every event out to the connections whose seat
its audience includes (R30). Events reach it from two sources — the stream, and the replies of
this gateway's own commands — and are put back in the table's `seq` order, duplicates dropped.
A gap that does not fill (a reply lost with a crashed actor) or an actor that came back behind
us starts the link again from the last seq delivered; when the table's log no longer reaches
back that far, every connection gets a fresh `welcome`.

Spectators cost the table nothing each: a watcher is welcomed from a public view the hub asks
for once and shares (the events fanned out since then follow it), and the table learns only
this gateway's count of watchers, at most twice a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import Any

from actors.directory import Directory, TableGone
from actors.orders import CLOSE_SEAT_CHANGED, Close, Unwatch, is_order, order_of
from actors.protocol import (
    WATCHING,
    Batch,
    Entry,
    Joined,
    Views,
    ViewSet,
)
from actors.ray_calls import dead_for_good
from actors.tasks import Tasks
from engine.errors import ErrorBody, ErrorCode
from gateway import metrics
from gateway.connection import Connection, body_of
from gateway.errors import (
    CLOSE_UNKNOWN_TABLE,
    CLOSE_WATCHING_OFF,
    close_reason,
    error_frame,
)
from gateway.table_link import Link

log = logging.getLogger("quatro.hub")

GAP_WAIT_S = 2.0
# The pause before a new session after one failed: doubling from the first while sessions keep
# failing (a table restarting), back to the first once one was followed (the next fault is new).
RETRY_FIRST_S = 0.1
RETRY_MAX_S = 2.0
# Events kept after fanning out, so that a watcher can start from a public view fetched before
# them; past this many, the next watcher asks the table for a fresh one.
RECENT = 512
REPORT_EVERY_S = 0.5
START_WAIT_S = 30.0
TABLE_LOST_MESSAGE = "this table was lost: its saved state could not be read back"
WATCHING_OFF_MESSAGE = "the host does not let anyone watch this table"


def welcome_frame(frame_id: str | None, joined: Joined, player_id: str) -> dict[str, Any]:
    """The one place a `welcome` is built: after hello, and after a resync."""
    watching = joined.seat < 0
    return {
        "type": "welcome",
        "id": frame_id,
        "you": {
            "player_id": player_id,
            "seat": None if watching else joined.seat,
            "team": None if watching else joined.team,
            # A public (quick-play) table has no host (its view says `host: null`).
            "host": not watching and joined.view.get("host") == joined.seat,
            "watching": watching,
        },
        "table": joined.view,
    }


class TableHub:
    def __init__(self, code: str, directory: Directory, link: Link, gateway: str = "") -> None:
        self.code = code
        self.directory = directory
        self.link = link
        self.gateway = gateway
        self.conns: dict[str, Connection] = {}
        self.recent: deque[Entry] = deque(maxlen=RECENT)
        self.public: Joined | None = None  # the latest public view, shared by new watchers
        self.unwatched = 0  # seq of the last `_unwatch`: a public view from before it is void
        # The one owner of this hub's tasks: its link's sessions and their follower, a resync,
        # the gap timer, a shared public view being fetched, the count being reported. `stop`
        # closes it and waits; the fields below only say which of its tasks is which.
        self.tasks = Tasks(f"hub {code}", report=False)
        self._fetching: asyncio.Task[Joined | None] | None = None
        self._reporting: asyncio.Task[None] | None = None
        self.reported = 0
        self.delivered = -1  # last seq fanned out; -1 until the first batch says where we are
        self.pending: dict[int, Entry] = {}
        self.ready = asyncio.Event()
        self.failed: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._session: asyncio.Task[None] | None = None
        self._resyncing: asyncio.Task[None] | None = None
        self._gap_timer: asyncio.Task[None] | None = None
        self.followed = False  # the running session's first batch came
        self._broke_at: float | None = None  # loop time the last session failed

    # -- life ---------------------------------------------------------------------------------
    async def start(self) -> None:
        if self._task is None:
            self._task = self.tasks.spawn(self._follow(), "follow")
        async with asyncio.timeout(START_WAIT_S):
            await self.ready.wait()
        if self.failed is not None:
            raise self.failed

    async def stop(self) -> None:
        # First what could start a new session or send a request while the link says goodbye
        # (a gap timer restarts the session); the link needs its session to send its Bye; then
        # the owner cancels every task left and waits for them all.
        for first in (self._gap_timer, self._reporting, self._fetching):
            if first is not None:
                first.cancel()
        with contextlib.suppress(Exception):
            await self.link.close()
        await self.tasks.close()

    async def _follow(self) -> None:
        """The link's owner: one session after another until the table is gone. A pause before
        each new session after a failed one (`RETRY_FIRST_S`, doubling up to `RETRY_MAX_S`)
        starts over once a session was followed: a hub that never started over waited 2 s after
        every fault once its table had lived through five, and a lost node's table is moved
        when the hub's next session asks for it (actors/rescue.py)."""
        delay = RETRY_FIRST_S
        while not self.tasks.closed:  # a closed owner cancels each new session at once
            self.followed = False
            session = self._session = self.tasks.spawn(self.link.session(self), "session")
            try:
                await asyncio.wait([session])
            except asyncio.CancelledError:
                session.cancel()
                with contextlib.suppress(BaseException):
                    await session  # its owner waits for it, whatever it ended with
                raise
            try:
                session.result()
            except asyncio.CancelledError:
                log.info("table %s: following again after a gap", self.code)
                delay = RETRY_FIRST_S
            except TableGone as exc:
                await self._closed(exc)
                return
            except Exception as exc:
                log.warning("table %s: link broke (%r)", self.code, exc)
                if self.followed:
                    delay = RETRY_FIRST_S  # it had worked: a new fault
                    self._broke_at = asyncio.get_running_loop().time()
                if dead_for_good(exc):
                    self.directory.forget(self.code)  # look it up again: it may be re-created
                if await self._stopped():
                    await self._closed(TableGone(self.code))
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
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
                conn.answer(error_frame(None, ErrorBody(ErrorCode.TABLE_LOST, TABLE_LOST_MESSAGE)))
            conn.close(CLOSE_UNKNOWN_TABLE, "the table was lost" if lost else "the table is closed")

    async def _stopped(self) -> bool:
        """The table was stopped for good (its record is gone), not merely restarting."""
        try:
            return await self.directory.record(self.code) is None
        except Exception:
            return False

    def on_batch(self, batch: Batch) -> None:
        if batch.head is None:
            self.feed(list(batch.events))
            return
        # A new session: the table may be a new incarnation that no longer knows our watchers.
        self.followed = True
        if self._broke_at is not None:
            # When its players see the table again, for whoever reads a recovery in the log.
            took = asyncio.get_running_loop().time() - self._broke_at
            log.info("table %s: followed again %.2f s after the link broke", self.code, took)
            self._broke_at = None
        self.reported = -1
        self.watchers_changed()
        if self.delivered < 0:
            self.delivered = batch.head
        elif batch.resync or batch.head < self.delivered:
            # The table came back without the events we miss (or behind what we sent): a new
            # snapshot for everyone is the whole truth (R25). Until it is here, events wait.
            self._resyncing = self.tasks.spawn(self._resync(batch), "resync")
            return
        self.feed(list(batch.events))
        self.ready.set()

    async def _resync(self, batch: Batch) -> None:
        try:
            wanted = {(c.seat, c.player_id) for c in self.conns.values() if c.after is not None}
            reply = await self.link.request(Views(tuple(sorted(wanted))))
            assert isinstance(reply, ViewSet)
        except Exception as exc:
            log.warning("table %s: resync failed (%r); following again", self.code, exc)
            self._resyncing = None
            if self._session is not None:
                self._session.cancel()
            return
        self._resyncing = None
        self.delivered = reply.seq
        self.pending = {s: e for s, e in self.pending.items() if s > self.delivered}
        self.recent.clear()
        self.public = reply.joined.get(WATCHING)
        for conn in self.conns.values():
            if conn.after is None:
                continue
            joined = reply.joined.get(conn.seat)
            seat_lost = conn.seat >= 0 and reply.holders.get(conn.seat) != conn.player_id
            if conn.seat < 0 and joined is None:
                conn.close(CLOSE_WATCHING_OFF, close_reason(CLOSE_WATCHING_OFF))
                continue
            if joined is None or seat_lost:
                conn.close(CLOSE_SEAT_CHANGED, close_reason(CLOSE_SEAT_CHANGED))
                continue
            conn.after = self.delivered
            conn.event(welcome_frame(None, joined, conn.player_id), reply.at)
        self.feed(list(batch.events))
        self.ready.set()

    # -- events -------------------------------------------------------------------------------
    def feed(self, entries: list[Entry]) -> None:
        """Deliver events in seq order, each once, whichever way they came."""
        if self.delivered < 0:
            return  # not following yet: whatever this is, the first batch's head covers it
        for entry in entries:
            if entry.seq > self.delivered:
                self.pending[entry.seq] = entry
        if self._resyncing is not None:
            return  # fanned out once the fresh snapshots are queued
        while (nxt := self.pending.pop(self.delivered + 1, None)) is not None:
            self.delivered += 1
            self._fan_out(nxt)
        if self.pending and self._gap_timer is None:
            self._gap_timer = self.tasks.spawn(self._gap_wait(self.delivered), "gap")

    async def _gap_wait(self, at: int) -> None:
        await asyncio.sleep(GAP_WAIT_S)
        self._gap_check(at)

    def _gap_check(self, at: int) -> None:
        self._gap_timer = None
        if self.pending and self.delivered == at and self._session is not None:
            self._session.cancel()  # _follow starts a new session from `delivered`
        elif self.pending:
            self.feed([])

    def _fan_out(self, entry: Entry) -> None:
        wire = entry.wire
        if is_order(wire):  # for the gateways, never forwarded to a client
            order = order_of(wire)
            if isinstance(order, Close):
                conn = self.conns.get(order.conn)
                if conn is not None:
                    conn.close(order.code, close_reason(order.code))
            elif isinstance(order, Unwatch):
                self._unwatch(entry.seq)
            return
        self.recent.append(entry)
        body = body_of(wire)
        for conn in self.conns.values():
            conn.deliver(entry, body)

    # -- watchers -----------------------------------------------------------------------------
    def watchers(self) -> int:
        """The watchers this hub serves from its shared view (the table counts the others)."""
        return sum(1 for c in self.conns.values() if c.watching and not c.registered)

    async def watch(self, conn: Connection) -> Joined | None:
        """The public view `conn` (attached, not yet welcomed) starts watching from, with the
        events since then queued on it; None when the host does not let anyone watch. The
        caller sends the welcome at once, without awaiting in between."""
        for _ in range(3):
            joined = self.public
            if joined is None or not self._covers(joined.seq):
                if self._fetching is None or self._fetching.done():
                    self._fetching = self.tasks.spawn(self._fetch_public(), "fetch-public")
                joined = await asyncio.shield(self._fetching)
            if joined is None or joined.seq < self.unwatched:
                return None
            if self._covers(joined.seq):
                # Everything fanned out since the view, the events `conn` saw while waiting
                # included (they are the tail of `recent`), in order.
                conn.early = [e for e in self.recent if e.seq > joined.seq]
                return joined
            self.public = None  # fell out of `recent` while we waited: ask again
        raise TimeoutError("no public view that the events since could follow")

    def _covers(self, seq: int) -> bool:
        """The events after `seq` that were fanned out are all still in `recent`."""
        return self.delivered <= seq or (bool(self.recent) and self.recent[0].seq <= seq + 1)

    async def _fetch_public(self) -> Joined | None:
        metrics.WATCH_VIEWS.inc()
        reply = await self.link.request(Views(((WATCHING, ""),), self.gateway, self.watchers()))
        assert isinstance(reply, ViewSet)
        joined = reply.joined.get(WATCHING)
        if joined is not None and joined.seq >= self.unwatched:
            self.public = joined
        return joined

    def _unwatch(self, seq: int) -> None:
        self.unwatched = seq
        self.public = None
        for conn in self.conns.values():
            if conn.watching:
                conn.close(CLOSE_WATCHING_OFF, close_reason(CLOSE_WATCHING_OFF))

    def watchers_changed(self) -> None:
        """Tell the table our count of watchers soon, once for all the changes till then."""
        if self._reporting is None or self._reporting.done():
            self._reporting = self.tasks.spawn(self._report(), "report")

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(REPORT_EVERY_S)
            count = self.watchers()
            if count == self.reported or (self.reported < 0 and count == 0):
                return
            try:
                await self.link.request(Views((), self.gateway, count))
            except Exception as exc:  # the next session's first batch reports again
                log.info("table %s: watcher count not told (%r)", self.code, exc)
                return
            self.reported = count
