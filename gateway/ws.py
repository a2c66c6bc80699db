"""The WebSocket `/ws`: hello → welcome, then one reader and one writer task per socket in one
task group (when either ends, the other is cancelled).

The reader handles one client frame at a time and answers each exactly once (ack, error or pong)
before any event it causes: the answer is queued first, then the command's events are handed to
the table's hub, which queues them in seq order. The writer only drains the queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from ray.exceptions import RayError

from actors.directory import TableGone
from actors.protocol import Act, ErrorBody, Join, Joined, Leave, Outcome
from engine.errors import ErrorCode
from gateway import metrics
from gateway.client_ip import from_scope
from gateway.connection import Close, Connection, FloodGuard
from gateway.errors import (
    BACKEND_DOWN,
    CLOSE_BAD_TOKEN,
    CLOSE_INTERNAL,
    CLOSE_POLICY,
    CLOSE_TRY_AGAIN,
    CLOSE_UNKNOWN_TABLE,
    NO_REASON,
    close_code_for,
    error_frame,
)
from gateway.frame_models import COMMAND_FRAMES, Hello
from gateway.frames import BadFrame, command_of, frame_id, parse
from gateway.hub import TABLE_LOST_MESSAGE, WATCHING_OFF_MESSAGE, TableHub, welcome_frame
from gateway.origin import origin_allowed
from gateway.services import Services

log = logging.getLogger("quatro.ws")
router = APIRouter()

HELLO_WAIT_S = 15.0

# The socket's own refusals (a table's come in its replies).
TOO_MANY_FRAMES = ErrorBody(ErrorCode.RATE_LIMITED, "too many frames")
TOO_MANY_FRAMES_WAIT = ErrorBody(ErrorCode.RATE_LIMITED, "too many frames", retry_in=1000)
SAY_HELLO_FIRST = ErrorBody(ErrorCode.WRONG_PHASE, "say hello first")
ALREADY_HELLO = ErrorBody(ErrorCode.WRONG_PHASE, "already said hello")
RETRY_HELLO = ErrorBody(ErrorCode.UNAVAILABLE, "retry in a few seconds")
BAD_TOKEN = ErrorBody(ErrorCode.BAD_TOKEN, "unknown or expired token")
TABLE_LOST = ErrorBody(ErrorCode.TABLE_LOST, TABLE_LOST_MESSAGE)
WATCHING_OFF = ErrorBody(ErrorCode.WATCHING_OFF, WATCHING_OFF_MESSAGE)
WATCHING_PLAYS_NOT = ErrorBody(ErrorCode.NO_SEAT, "you are watching: take a seat to play")
TABLE_UNAVAILABLE = ErrorBody(ErrorCode.UNAVAILABLE, "the table is unavailable, retry")


class _Ended(Exception):
    """One side of the socket is done: the task group cancels the other."""


def now_ms() -> int:
    return int(time.time() * 1000)


@router.websocket("/ws")
async def websocket(ws: WebSocket) -> None:
    """Refused before accept (HTTP 403) for an Origin not allowed; closed 1013 at once when
    this gateway is full or holds too many sockets of the client's address."""
    svc: Services = ws.app.state.services
    if not origin_allowed(ws.headers.get("origin"), ws.headers.get("host"), svc.origins):
        metrics.ERRORS.labels("bad_origin").inc()
        await ws.close(CLOSE_POLICY, "origin not allowed")
        return
    ip = from_scope(dict(ws.scope), svc.proxies)
    refused = svc.caps.admit(ip)
    if refused is not None:
        metrics.ERRORS.labels("full").inc()
        await ws.accept()  # accepted only to say why (a reason needs an open socket)
        await ws.close(CLOSE_TRY_AGAIN, refused)
        return
    try:
        await ws.accept()
        await _serve(ws, svc)
    finally:
        svc.caps.release(ip)


async def _serve(ws: WebSocket, svc: Services) -> None:
    guard = FloodGuard(
        svc.settings.flood_rate, svc.settings.flood_burst, svc.settings.flood_strikes
    )
    try:
        session = await _handshake(ws, svc, guard)
    except WebSocketDisconnect:
        return
    except Exception:
        log.exception("hello failed")
        with contextlib.suppress(Exception):
            await ws.close(CLOSE_INTERNAL)
        return
    if session is None:
        return
    conn, code = session
    metrics.PLAYERS.inc()
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(_reader(ws, svc, conn, code, guard))
            tg.create_task(_writer(ws, conn))
    except* _Ended:
        pass
    except* Exception as group:
        log.error("connection %s failed", conn.conn_id, exc_info=group.exceptions[0])
        with contextlib.suppress(Exception):
            await ws.close(CLOSE_INTERNAL)
    finally:
        metrics.PLAYERS.dec()
        # Told while the hub still holds the table's link, so a leave travels on it too. A
        # watcher is only in its hub's count.
        try:
            with contextlib.suppress(Exception):
                if conn.watching:
                    metrics.WATCHERS.dec()
                if conn.registered:
                    reply = await svc.hubs.call(code, Leave(svc.gateway, conn.conn_id))
                    if isinstance(reply, Outcome):
                        svc.hubs.feed(code, list(reply.events))
        finally:
            svc.hubs.detach(code, conn)


async def _refuse(ws: WebSocket, frame_id: str | None, error: ErrorBody, close: int) -> None:
    metrics.ERRORS.labels(error.code).inc()
    await ws.send_text(json.dumps(error_frame(frame_id, error), ensure_ascii=False))
    await ws.close(close)


async def _handshake(
    ws: WebSocket, svc: Services, guard: FloodGuard
) -> tuple[Connection, str] | None:
    """Wait for `hello`; answer `welcome` or refuse and close (4401, 4404, 4403; 1008 for a
    flood or no hello in time)."""
    try:
        async with asyncio.timeout(HELLO_WAIT_S):
            while True:
                text = await _receive(ws)
                if not guard.allow():
                    if guard.flooding:
                        await _flooded(ws)
                        return None
                    answer = error_frame(frame_id(text), TOO_MANY_FRAMES)
                    await ws.send_text(json.dumps(answer))
                    continue
                try:
                    frame = parse(text)
                except BadFrame as bad:
                    metrics.ERRORS.labels(bad.body.code).inc()
                    await ws.send_text(json.dumps(error_frame(bad.frame_id, bad.body)))
                    continue
                if isinstance(frame, Hello):
                    break
                await ws.send_text(json.dumps(error_frame(frame.id, SAY_HELLO_FIRST)))
    except TimeoutError:
        await ws.close(CLOSE_POLICY, "no hello")
        return None
    try:
        return await _join(ws, svc, frame)
    except BACKEND_DOWN as exc:  # Redis or Ray out of reach: our trouble, told as such
        log.warning("hello failed: backend unavailable (%r)", exc)
        await _refuse(ws, frame.id, RETRY_HELLO, CLOSE_TRY_AGAIN)
        return None


async def _join(ws: WebSocket, svc: Services, hello: Hello) -> tuple[Connection, str] | None:
    """`welcome`, or a refusal and close (4401, 4404, 4403)."""
    session = await svc.sessions.lookup(hello.token, from_scope(dict(ws.scope), svc.proxies))
    if session is None:
        await _refuse(ws, hello.id, BAD_TOKEN, CLOSE_BAD_TOKEN)
        return None
    code = hello.table.upper()
    if await svc.directory.record(code) is None:
        if await svc.directory.lost(code):
            await _refuse(ws, hello.id, TABLE_LOST, CLOSE_UNKNOWN_TABLE)
        else:
            await _no_table(ws, hello, code)
        return None
    conn_id = f"{svc.gateway}/{uuid.uuid4().hex[:12]}"
    conn = Connection(conn_id, session.player_id, svc.settings.send_queue)
    if hello.watch and not hello.claimant:
        return await _watch(ws, svc, hello, conn, code)
    join = Join(conn.conn_id, svc.gateway, conn.conn_id, session.player_id, hello.watch)
    try:
        async with _attaching(svc, code, conn):
            reply = await svc.hubs.call(code, join)
    except TableGone:
        await _no_table(ws, hello, code)
        return None
    if not isinstance(reply, Joined):
        svc.hubs.detach(code, conn)
        error = reply.error if isinstance(reply, Outcome) and reply.error else None
        error = error or ErrorBody(ErrorCode.UNKNOWN_TABLE, f"no table {code}")
        await _refuse(ws, hello.id, error, close_code_for(error.code))
        return None
    svc.hubs.feed(code, list(reply.events))
    if reply.seat >= 0:
        # Where this player sits, for GET /api/sessions/tables: a seat taken over REST is
        # recorded there already; a bot's seat taken late (4411, then hello) only here.
        await svc.sessions.seated(session.player_id, code, reply.seat)
    conn.event(welcome_frame(hello.id, reply, session.player_id), now_ms())
    conn.welcomed(reply.seat, int(reply.view["players"]), reply.seq)
    if conn.watching:
        metrics.WATCHERS.inc()
    return conn, code


@asynccontextmanager
async def _attaching(svc: Services, code: str, conn: Connection) -> AsyncIterator[TableHub]:
    """The table's hub with `conn` attached for the block; detached again if the block fails
    (the table gone, a refusal raised, the socket cancelled)."""
    hub = await svc.hubs.attach(code, conn)
    try:
        yield hub
    except BaseException:
        svc.hubs.detach(code, conn)
        raise


async def _no_table(ws: WebSocket, hello: Hello, code: str) -> None:
    await _refuse(
        ws, hello.id, ErrorBody(ErrorCode.UNKNOWN_TABLE, f"no table {code}"), CLOSE_UNKNOWN_TABLE
    )


async def _watch(
    ws: WebSocket, svc: Services, hello: Hello, conn: Connection, code: str
) -> tuple[Connection, str] | None:
    """A spectator: welcomed from the public view its hub shares, with no call of its own to the
    table (a thousand spectators are one fetch, then a count now and then)."""
    conn.registered = False
    try:
        async with _attaching(svc, code, conn) as hub:
            joined = await hub.watch(conn)
    except TableGone:
        await _no_table(ws, hello, code)
        return None
    if joined is None:
        svc.hubs.detach(code, conn)
        await _refuse(ws, hello.id, WATCHING_OFF, close_code_for(ErrorCode.WATCHING_OFF))
        return None
    conn.event(welcome_frame(hello.id, joined, conn.player_id), now_ms())
    conn.welcomed(joined.seat, int(joined.view["players"]), joined.seq)
    hub.watchers_changed()
    metrics.WATCHERS.inc()
    return conn, code


async def _receive(ws: WebSocket) -> str:
    message = await ws.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    text = message.get("text")
    if text is None:
        data = message.get("bytes") or b""
        text = data.decode("utf-8", errors="replace")
    metrics.FRAMES_IN.labels("raw").inc()
    return str(text)


async def _flooded(ws: WebSocket) -> None:
    metrics.ERRORS.labels(ErrorCode.FLOODING).inc()
    await ws.close(CLOSE_POLICY, "flooding")


async def _reader(
    ws: WebSocket, svc: Services, conn: Connection, code: str, guard: FloodGuard
) -> None:
    counter = itertools.count(1)
    try:
        while True:
            text = await _receive(ws)
            if conn.closing:
                continue
            # Every frame counts, malformed ones too, before any parsing.
            if not guard.allow():
                if guard.flooding:
                    conn.close(CLOSE_POLICY, "flooding")
                    metrics.ERRORS.labels(ErrorCode.FLOODING).inc()
                    continue
                metrics.ERRORS.labels(ErrorCode.RATE_LIMITED).inc()
                conn.answer(error_frame(frame_id(text), TOO_MANY_FRAMES_WAIT))
                continue
            started = time.perf_counter()
            answer, events, kind = await _handle(svc, conn, code, text, next(counter))
            if answer.get("type") == "error":
                metrics.ERRORS.labels(answer["code"]).inc()
            conn.answer(answer)  # before the events it caused
            svc.hubs.feed(code, events)
            metrics.COMMAND_SECONDS.labels(kind).observe(time.perf_counter() - started)
    except WebSocketDisconnect:
        raise _Ended from None


async def _handle(
    svc: Services, conn: Connection, code: str, text: str, n: int
) -> tuple[dict[str, Any], list[Any], str]:
    try:
        frame = parse(text)
    except BadFrame as bad:
        return error_frame(bad.frame_id, bad.body), [], "bad"
    if frame.type == "ping":
        return {"type": "pong", "id": frame.id}, [], "ping"
    if frame.type == "hello":
        return error_frame(frame.id, ALREADY_HELLO), [], "hello"
    assert frame.type in COMMAND_FRAMES
    if conn.seat < 0:
        # A watching connection plays for nobody, even if its player holds a seat elsewhere
        # (that seat plays from its own connection).
        return error_frame(frame.id, WATCHING_PLAYS_NOT), [], "x"
    try:
        command = command_of(frame)
    except BadFrame as bad:
        return error_frame(bad.frame_id, bad.body), [], "bad"
    act = Act(f"{conn.conn_id}:{n}", svc.gateway, conn.player_id, command, frame.expires)
    try:
        reply = await svc.hubs.call(code, act)
    except (RayError, TableGone, TimeoutError) as exc:
        log.warning("table %s unavailable for %s: %r", code, frame.type, exc)
        return error_frame(frame.id, TABLE_UNAVAILABLE), [], "x"
    assert isinstance(reply, Outcome)
    if reply.ok:
        return {"type": "ack", "id": frame.id}, list(reply.events), frame.type
    error = reply.error or NO_REASON
    return error_frame(frame.id, error), list(reply.events), frame.type


async def _writer(ws: WebSocket, conn: Connection) -> None:
    try:
        await _write(ws, conn)
    finally:
        conn.gone.set()


async def _write(ws: WebSocket, conn: Connection) -> None:
    while True:
        item = await conn.queue.get()
        if isinstance(item, Close):
            with contextlib.suppress(Exception):
                await ws.close(item.code, item.reason)
            raise _Ended
        try:
            await ws.send_text(item)
        except (WebSocketDisconnect, OSError):
            raise _Ended from None
        except RuntimeError:
            # uvicorn already closed the socket (its own ping timeout, or shutdown): done.
            raise _Ended from None
        metrics.FRAMES_OUT.inc()
