"""How a gateway talks to one table actor: its calls, and the events it follows.

`SocketLink` (the data plane, the default) keeps one TCP connection to the actor: Ray is asked
only where the actor listens (and again after a fault: it may have restarted elsewhere, with a
new address and incarnation); commands, replies and the event stream all flow on the socket.
`RayLink` does the same through Ray actor calls and a Ray streaming generator — the path used
before the data plane, kept for A/B capacity runs (`QUATRO_DATA_PLANE=ray`).

Either way, a `session` lasts until a fault and raises; the hub that owns the link starts a new
one. Requests outlive sessions: one still unanswered when a connection breaks is sent again, with
its id, on the next (the actor's de-duplication makes that harmless), and the subscription starts
again from the last seq the hub delivered only once those are answered, so that every command
is still answered before the events it caused.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import Any, Protocol

import ray

from actors.codec import (
    MAX_LINE,
    BadMessage,
    decode,
    encode,
)
from actors.directory import RESTART_WAIT_S, Directory, TableGone
from actors.link_messages import Answer, Bye, Call, Follow, Gone, Hello, Ping, Refused, Welcome
from actors.protocol import (
    Address,
    Batch,
    Endpoint,
    Renew,
    Reply,
    Request,
    Serve,
    Subscribe,
    Unsubscribe,
)
from actors.ray_calls import ask, follow
from actors.tasks import Tasks
from gateway import metrics

log = logging.getLogger("quatro.link")

CONNECT_S = 5.0
HELLO_S = 5.0
REQUEST_WAIT_S = RESTART_WAIT_S  # a command waits through a table's restart before `unavailable`
RENEW_S = 10.0  # RayLink: the actor's lease on a subscription is 30 s
WAITING_PING_S = 1.0  # a link with a request unanswered pings this often
WAITING_DEAD_S = 4.0  # and gives its session up after this long with nothing heard


class Follower(Protocol):
    """The hub that owns a link: where batches go, and where it stands."""

    delivered: int

    def on_batch(self, batch: Batch) -> None: ...


class LinkFault(Exception):
    """The connection broke (EOF, reset, silence, a refused hello): start a new session."""


class LinkClosed(Exception):
    """The hub let its link go (its last socket left) with this request unanswered: it may or
    may not have been applied, so ask again another way (a command's id makes that safe)."""


class Link(Protocol):
    async def session(self, follower: Follower) -> None: ...

    async def request(self, req: Request) -> Reply: ...

    async def close(self) -> None: ...


class SocketLink:
    def __init__(
        self,
        code: str,
        directory: Directory,
        gateway: str,
        secret: str,
        heartbeat_s: float = 5.0,
        dead_after_s: float = 15.0,
    ) -> None:
        self.code = code
        self.directory = directory
        self.gateway = gateway
        self.secret = secret
        self.heartbeat_s = heartbeat_s
        self.dead_after_s = dead_after_s
        self.pending: dict[int, tuple[Request, asyncio.Future[Reply]]] = {}
        self._ids = itertools.count(1)
        self._writer: asyncio.StreamWriter | None = None
        self._heard = 0.0
        self.closed = False

    # -- requests -----------------------------------------------------------------------------
    async def request(self, req: Request) -> Reply:
        if self.closed:
            raise LinkClosed(self.code)
        rid = next(self._ids)
        fut: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.pending[rid] = (req, fut)
        try:
            self._send(Call(rid, req))  # or, with no session to carry it, by the next one
            async with asyncio.timeout(REQUEST_WAIT_S):
                return await asyncio.shield(fut)
        finally:
            self.pending.pop(rid, None)

    def _send(self, call: Call) -> None:
        """Onto the running session's connection, if it can still carry it. A connection reset
        by the table's end is closed at once by uvloop (the gateway's loop), before the session
        notices and lets it go; a write then raised RuntimeError, which ended a player's hello
        with 1011 (a clean-clone CI, tests/store/test_upgrade.py). Left pending instead, the
        call goes with the next session's resend (`_resume`), as when there is none."""
        writer = self._writer
        if writer is None or writer.is_closing():
            return
        with contextlib.suppress(RuntimeError, OSError):
            writer.write(encode(call))

    # -- sessions -----------------------------------------------------------------------------
    async def session(self, follower: Follower) -> None:
        where: Address | None = await self.directory.ask(self.code, Endpoint())
        if where is None:
            raise TableGone(self.code)
        try:
            async with asyncio.timeout(CONNECT_S):
                reader, writer = await asyncio.open_connection(
                    where.host, where.port, limit=MAX_LINE
                )
        except (OSError, TimeoutError) as exc:
            raise LinkFault(f"connect to {where.host}:{where.port}: {exc!r}") from exc
        try:
            await self._hello(reader, writer, where.incarnation)
            self._heard = asyncio.get_running_loop().time()
            async with asyncio.TaskGroup() as tg:
                reading = tg.create_task(self._read(reader, follower))
                tg.create_task(self._heartbeat(writer))
                tg.create_task(self._resume(writer, follower, reading))
        except* (LinkFault, TableGone) as group:
            raise group.exceptions[0] from None
        finally:
            self._writer = None
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _hello(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, incarnation: str
    ) -> None:
        writer.write(encode(Hello(self.secret, self.gateway, self.code, incarnation)))
        try:
            async with asyncio.timeout(HELLO_S):
                answer = decode(await reader.readline())
        except (TimeoutError, BadMessage, OSError, ValueError) as exc:
            raise LinkFault(f"no welcome: {exc!r}") from exc
        if isinstance(answer, Refused):
            metrics.LINK_FAULTS.labels("refused").inc()
            raise LinkFault(f"refused: {answer.reason}")
        if not isinstance(answer, Welcome):
            raise LinkFault(f"unexpected {type(answer).__name__}")

    async def _resume(
        self, writer: asyncio.StreamWriter, follower: Follower, reading: asyncio.Task[None]
    ) -> None:
        """Send what is unanswered, wait for those answers, then follow from where we are."""
        self._writer = writer
        for rid, (req, _) in sorted(self.pending.items()):
            writer.write(encode(Call(rid, req)))
        async with asyncio.timeout(REQUEST_WAIT_S):
            while waiting := [f for _, f in self.pending.values() if not f.done()]:
                watched: list[asyncio.Future[Any]] = [*waiting, reading]
                await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
                if reading.done():
                    return
        writer.write(encode(Follow(follower.delivered)))

    async def _read(self, reader: asyncio.StreamReader, follower: Follower) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                line = await reader.readline()
            except (OSError, ValueError) as exc:
                raise LinkFault(f"read: {exc!r}") from exc
            if not line:
                metrics.LINK_FAULTS.labels("eof").inc()
                raise LinkFault("end of stream")
            self._heard = loop.time()
            self.directory.last_answer.heard()  # /readyz: the workers are within reach
            try:
                msg = decode(line)
            except BadMessage as exc:
                raise LinkFault(f"bad line: {exc}") from exc
            if isinstance(msg, Answer):
                entry = self.pending.get(msg.rid)
                if entry is not None and not entry[1].done():
                    entry[1].set_result(msg.reply)
            elif isinstance(msg, Batch):
                metrics.STREAM_BATCHES.inc()
                follower.on_batch(msg)
            elif isinstance(msg, Gone):
                raise TableGone(self.code)

    async def _heartbeat(self, writer: asyncio.StreamWriter) -> None:
        """A peer that stopped answering without closing (a partition, a frozen process, a
        machine gone, whose connections never say so) is caught here: nothing heard for
        `dead_after_s`, though we ping every `heartbeat_s`; sooner while a player waits for an
        answer: then we ping every `WAITING_PING_S`, and `WAITING_DEAD_S` of silence ends the
        session, so that a lost node's table is looked up again (and moved: actors/rescue.py)
        within seconds. A live actor answers a ping in milliseconds; one merely slow costs a
        reconnection, its requests sent again with their ids."""
        loop = asyncio.get_running_loop()
        tick = min(self.heartbeat_s, WAITING_PING_S)
        pinged = loop.time()
        n = 0
        while True:
            await asyncio.sleep(tick)
            now = loop.time()
            silent = now - self._heard
            waiting = bool(self.pending)
            if silent > self.dead_after_s or (waiting and silent > WAITING_DEAD_S):
                metrics.LINK_FAULTS.labels("silent").inc()
                raise LinkFault(f"nothing heard for {silent:.1f} s")
            every = WAITING_PING_S if waiting else self.heartbeat_s
            if now - pinged >= every - tick / 2:
                writer.write(encode(Ping(n)))
                pinged, n = now, n + 1

    async def close(self) -> None:
        """The hub has no player left: say so, so the actor does not wait for us to return.
        Nothing awaited: the hub cancels the session next, and closing the socket sends what
        is buffered before the end of the stream.

        A request still unanswered fails with `LinkClosed`: its answer may be on its way, but
        no session will read it. The table sends a command's events before its answer, so a
        command that closes the gateway's last socket (a kick, a seat freed, a hello that
        replaces an older one) stops the hub right before its answer arrives."""
        self.closed = True
        for _, fut in self.pending.values():
            if not fut.done():
                fut.set_exception(LinkClosed(self.code))
        writer = self._writer
        if writer is not None:
            with contextlib.suppress(Exception):
                writer.write(encode(Bye()))


class RayLink:
    """The same over Ray: a call per request, a streaming generator per subscription."""

    def __init__(self, code: str, directory: Directory, gateway: str) -> None:
        self.code = code
        self.directory = directory
        self.gateway = gateway

    async def request(self, req: Request) -> Reply:
        return await self.directory.ask(self.code, Serve(req))

    async def session(self, follower: Follower) -> None:
        handle = await self.directory.handle(self.code)
        gen = follow(handle, Subscribe(self.gateway, follower.delivered, self.code))
        renewing = Tasks(f"ray link {self.code}", report=False)  # lives as long as the session
        renewing.spawn(self._renew(handle), "renew")
        try:
            async for ref in gen:
                batch: Batch = await ref
                metrics.STREAM_BATCHES.inc()
                follower.on_batch(batch)
        finally:
            with contextlib.suppress(Exception):
                ray.cancel(gen)
            await renewing.close()
        raise LinkFault("the subscription ended")

    async def _renew(self, handle: Any) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            with contextlib.suppress(Exception):
                await ask(handle, Renew(self.gateway, self.code))

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            handle = await self.directory.handle(self.code)
            await ask(handle, Unsubscribe(self.gateway, self.code))
