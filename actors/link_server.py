"""The table actor's side of the data plane: a TCP server on the actor's own event loop.

Each gateway that serves players of this table keeps one connection to it. The connection opens
with a `Hello` carrying the cluster secret (Ray's auth token; compared in constant time), the
table's code and the incarnation the gateway was told about; nothing is read or served before it
checks out, and a peer that fails it is told why once, closed and counted. Then the gateway's
calls are served side by side (each in its own task of the connection's task group, as Ray ran
them) and its subscription's batches are pushed as they are published. A connection that says
nothing for `silence_s` (a gateway sends a ping every few seconds) is a dead peer: it is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import random
from collections.abc import AsyncIterator
from typing import Protocol

from actors.codec import (
    MAX_REQUEST_LINE,
    BadMessage,
    decode,
    encode,
)
from actors.link_messages import (
    Answer,
    Bye,
    Call,
    Follow,
    Gone,
    Hello,
    Message,
    Ping,
    Pong,
    Refused,
    Welcome,
)
from actors.protocol import Batch, ErrorBody, Outcome, Reply, Request
from actors.store import TableMoved
from engine.errors import ErrorCode

log = logging.getLogger("quatro.link")

HELLO_WAIT_S = 5.0
# Connections still owing their hello: a table has a gateway or two, so more means a flood,
# and each would hold a task and a buffer for HELLO_WAIT_S.
MAX_PENDING_HELLOS = 32
BIND_TRIES = 64


class Served(Protocol):
    """What the server needs of the table actor."""

    code: str

    async def serve(self, request: Request) -> Reply: ...

    def follow(self, gateway: str, after: int, leased: bool) -> AsyncIterator[Batch]: ...

    def link_ended(self, gateway: str, orderly: bool) -> None: ...


def port_range(spec: str) -> tuple[int, int]:
    """`20000-29999` → (20000, 29999); `0` → any port the kernel picks."""
    spec = spec.strip()
    if spec in ("", "0"):
        return (0, 0)
    low, _, high = spec.partition("-")
    lo, hi = int(low), int(high or low)
    if not 0 < lo <= hi < 65536:
        raise ValueError(f"bad port range {spec!r}")
    return (lo, hi)


class LinkServer:
    def __init__(
        self, table: Served, secret: str, incarnation: str, silence_s: float = 20.0
    ) -> None:
        self.table = table
        self.secret = secret.encode()
        self.incarnation = incarnation
        self.silence_s = silence_s
        self.refused = 0  # hellos that failed: `ping` reports it
        self.pending_hellos = 0
        self.links = 0
        self._server: asyncio.Server | None = None
        self._closing = False
        self._writers: set[asyncio.StreamWriter] = set()  # the links' connections

    async def start(self, host: str, ports: tuple[int, int]) -> int:
        """Listen on `host`, on a free port of `ports`; the port."""
        lo, hi = ports
        candidates = (
            [0] if lo == 0 else random.sample(range(lo, hi + 1), min(BIND_TRIES, hi - lo + 1))
        )
        last: OSError | None = None
        for port in candidates:
            try:
                self._server = await asyncio.start_server(
                    self._serve, host, port, limit=MAX_REQUEST_LINE, reuse_address=True
                )
            except OSError as exc:
                last = exc
                continue
            sock = self._server.sockets[0]
            return int(sock.getsockname()[1])
        raise OSError(f"no free port in {lo}-{hi} on {host}: {last}")

    async def close(self) -> None:
        """Tell every gateway the table is gone, then stop listening."""
        self.close_listening()

    def drop(self) -> None:
        """The table parked (actors/parking.py): every link is cut at once, without `Gone`
        (the table is not gone), and nothing is listened for any more. Each gateway then asks
        for the table again, which wakes it, and sends again what was not answered."""
        self.close_listening()
        for writer in list(self._writers):
            writer.transport.abort()

    def close_listening(self) -> None:
        self._closing = True
        if self._server is not None:
            self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        if self.pending_hellos >= MAX_PENDING_HELLOS:
            self.refused += 1
            writer.close()
            return
        try:
            self.pending_hellos += 1
            try:
                gateway = await self._hello(reader, writer)
            finally:
                self.pending_hellos -= 1
            if gateway is None:
                return
            self.links += 1
            self._writers.add(writer)
            try:
                orderly = await Link(self, gateway, reader, writer).run()
            finally:
                self.links -= 1
                self._writers.discard(writer)
            self.table.link_ended(gateway, orderly)
        except Exception:
            log.exception("table %s: link from %s failed", self.table.code, peer)
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _hello(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> str | None:
        why = ""
        try:
            async with asyncio.timeout(HELLO_WAIT_S):
                line = await reader.readline()
            hello = decode(line)
        except (TimeoutError, BadMessage, ValueError, ConnectionError) as exc:
            why = f"no hello ({type(exc).__name__})"
            hello = None
        if isinstance(hello, Hello) and not why:
            if not isinstance(hello.secret, str) or not hmac.compare_digest(
                hello.secret.encode(), self.secret
            ):
                why = "bad secret"
            elif hello.table != self.table.code or not self.table.code:
                why = "not this table"
            elif hello.incarnation != self.incarnation:
                why = "another incarnation"
            else:
                writer.write(encode(Welcome(self.incarnation)))
                return str(hello.gateway)
        elif not why:
            why = "no hello"
        self.refused += 1
        log.warning(
            "table %s: link from %s refused (%s)",
            self.table.code,
            writer.get_extra_info("peername"),
            why,
        )
        with contextlib.suppress(Exception):
            # Only a peer that knew the secret learns which check failed.
            writer.write(encode(Refused(why if why not in ("bad secret",) else "refused")))
            writer.write_eof()
            # Closing with unread bytes would reset the connection and could lose the line
            # above: what the peer sent meanwhile is read and dropped first (bounded).
            async with asyncio.timeout(1.0):
                for _ in range(16):
                    if not await reader.read(65536):
                        break
        return None


class Link:
    """One authenticated connection: the gateway's calls, its subscription, its pings."""

    def __init__(
        self,
        server: LinkServer,
        gateway: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.server = server
        self.gateway = gateway
        self.reader = reader
        self.writer = writer
        self.orderly = False

    def send(self, msg: Message) -> None:
        if not self.writer.is_closing():
            self.writer.write(encode(msg))

    async def run(self) -> bool:
        """Serve until the peer leaves (True when it said Bye), falls silent, or the table
        stops."""
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self._read(tg))
        except* _LinkEnded:
            pass
        return self.orderly

    async def _read(self, tg: asyncio.TaskGroup) -> None:
        table = self.server.table
        pusher: asyncio.Task[None] | None = None
        while True:
            try:
                async with asyncio.timeout(self.server.silence_s):
                    line = await self.reader.readline()
            except TimeoutError:
                log.warning("table %s: gateway %s fell silent", table.code, self.gateway)
                raise _LinkEnded from None
            except (ConnectionError, ValueError):  # reset, or a line over MAX_REQUEST_LINE
                raise _LinkEnded from None
            if not line:
                raise _LinkEnded
            try:
                msg = decode(line)
            except BadMessage as exc:
                log.warning("table %s: bad line from %s: %s", table.code, self.gateway, exc)
                raise _LinkEnded from None
            if isinstance(msg, Call):
                tg.create_task(self._answer(msg))
            elif isinstance(msg, Ping):
                self.send(Pong(msg.n))
            elif isinstance(msg, Follow):
                if pusher is not None:
                    pusher.cancel()
                pusher = tg.create_task(self._push(msg.after))
            elif isinstance(msg, Bye):
                self.orderly = True
                raise _LinkEnded
            await self._drain()

    async def _answer(self, call: Call) -> None:
        try:
            reply = await self.server.table.serve(call.request)
        except TableMoved:
            return  # no answer: this incarnation ends, and the gateway asks the table's new one
        except Exception:
            # A bug, not the peer's fault: answered (a retry would meet it again), link kept.
            log.exception("table %s: %s failed", self.server.table.code, call.request)
            reply = Outcome(False, ErrorBody(ErrorCode.INTERNAL, "the table could not serve this"))
        self.send(Answer(call.rid, reply))
        await self._drain()

    async def _push(self, after: int) -> None:
        async for batch in self.server.table.follow(self.gateway, after, False):
            self.send(batch)
            await self._drain()
        # The subscription ended without us: the table stopped, or a newer link took over.
        self.send(Gone())
        await self._drain()
        raise _LinkEnded

    async def _drain(self) -> None:
        try:
            await self.writer.drain()
        except ConnectionError:
            raise _LinkEnded from None


class _LinkEnded(Exception):
    pass
