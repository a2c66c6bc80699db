"""Every table this gateway follows, by code: a `TableHub` each (gateway/hub.py), made on the
first connection and stopped after the last; and the calls to a table, which go through its
hub's link when there is one and are shielded, so that the events a command causes reach the
table's players even when its caller is cancelled meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from actors.directory import Directory
from actors.protocol import Entry, Joined, Outcome, Reply, Request, Serve
from actors.tasks import Tasks
from gateway import metrics
from gateway.connection import Connection
from gateway.errors import CLOSE_GOING_AWAY
from gateway.hub import TableHub
from gateway.table_link import Link, LinkClosed

LinkFactory = Callable[[str], Link]


class Hubs:
    """Every table this gateway follows, by code."""

    def __init__(self, directory: Directory, links: LinkFactory, gateway: str = "") -> None:
        self.directory = directory
        self.links = links
        self.gateway = gateway
        self.hubs: dict[str, TableHub] = {}
        # The owner of the hubs' stops and of the calls through them (shielded: see `call`).
        self.tasks = Tasks("hubs", report=False)

    async def attach(self, code: str, conn: Connection) -> TableHub:
        hub = self.hubs.get(code)
        if hub is None:
            hub = self.hubs[code] = TableHub(code, self.directory, self.links(code), self.gateway)
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
        if conn.watching and not conn.registered:
            hub.watchers_changed()
        if not hub.conns:
            del self.hubs[code]
            metrics.TABLES.set(len(self.hubs))
            self.tasks.spawn(hub.stop(), f"stop {code}")

    async def call(self, code: str, request: Request) -> Reply:
        """Ask the table, through its hub's link when this gateway follows it (Ray otherwise:
        a REST lobby call from a player with no socket here). The events a command causes are
        left out of our stream (they travel in the reply), so they must reach our players even
        when the caller is cancelled meanwhile (a socket closing mid-command): the call is
        shielded, and an abandoned reply is still fanned out when it arrives."""
        task: asyncio.Task[Reply] = self.tasks.spawn(self._ask(code, request), f"call {code}")
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(lambda t: self._feed_abandoned(code, t))
            raise

    async def _ask(self, code: str, request: Request) -> Reply:
        hub = self.hubs.get(code)
        if hub is not None:
            try:
                return await hub.link.request(request)
            except LinkClosed:
                pass  # the hub stopped meanwhile: over Ray, as for a gateway with no hub
        return await self.directory.ask(code, Serve(request))

    def _feed_abandoned(self, code: str, task: asyncio.Task[Reply]) -> None:
        if task.cancelled() or task.exception() is not None:
            return
        reply = task.result()
        if isinstance(reply, (Outcome, Joined)):
            self.feed(code, list(reply.events))

    def feed(self, code: str, entries: list[Entry]) -> None:
        hub = self.hubs.get(code)
        if hub is not None and entries:
            hub.feed(entries)

    def going_away(self) -> None:
        for hub in self.hubs.values():
            for conn in hub.conns.values():
                conn.close(CLOSE_GOING_AWAY, "server going away: reconnect")

    async def send_going_away(self, limit: float) -> None:
        """`going_away`, then wait (at most `limit` s) until every socket has sent its close."""
        conns = [c for hub in self.hubs.values() for c in hub.conns.values()]
        self.going_away()
        if conns:
            gone = [self.tasks.spawn(c.gone.wait(), "gone") for c in conns]
            await asyncio.wait(gone, timeout=limit)
            for waiting in gone:
                waiting.cancel()  # a socket that never closed is the server's to drop

    async def close(self) -> None:
        for hub in list(self.hubs.values()):
            await hub.stop()
        self.hubs.clear()
        # Calls in flight and hubs still stopping get 5 s to end by themselves, as before;
        # what is left then is cancelled, so nothing of this gateway runs on unowned.
        await self.tasks.close(grace=5)
