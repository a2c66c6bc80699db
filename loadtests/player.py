"""The kit's WebSocket player: a player as an outside client would write one from PROTOCOL.md,
REST with httpx and the game over a real WebSocket, every wait with a deadline and none a fixed
sleep. The test suite plays with it (tests/cluster/client.py), and so do the kit's asyncio
commands: bench_ws, spectators, burst, fuzz_ws and cells. (The Locust users are gevent
greenlets with a socket of their own, loadtests/users/link.py; they read frames through the same
loadtests/frames.py.)

One reader task per connection folds every frame in as it comes: events (with `seq`, checked
in order: a gap is a `problem`), answers by the id of the frame they answer, answers without an
id. `keep=False` keeps none of them (a crowd of a thousand, a fuzzer's hundred thousand frames)
but still counts answers and notes the latest; `on_frame` sees each frame with its arrival time
(`time.perf_counter()`), for whoever times them."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

from engine.cards import ranks_for
from loadtests import tls
from loadtests.frames import Frame, Order, hello, kind_of, ws_url

WAIT_S = 15.0
# A REST call may take as long as the server waits for a table (QUATRO_TABLE_WAIT, 40 s, through
# a restart) or for a ready actor (a creation: QUATRO_POOL_WAIT + QUATRO_ACTOR_TIMEOUT, 45 s):
# a client that gives up sooner turns the server's late answer into a failure of its own.
REST_TIMEOUT_S = 60.0
HELLO_ID = "hi"


class Refused(RuntimeError):
    """A hello that was not welcomed: refused with an error (`code`), or closed (`close_code`)."""

    def __init__(self, code: str | None, close_code: int | None, detail: str = "") -> None:
        super().__init__(f"hello refused: {code or f'closed {close_code}'} {detail}".strip())
        self.code = code
        self.close_code = close_code


class Player:
    def __init__(
        self,
        base: str,
        name: str = "",
        *,
        keep: bool = True,
        on_frame: Callable[[Frame, float], None] | None = None,
    ) -> None:
        self.base = base
        self.name = name
        self.keep = keep
        self.on_frame = on_frame
        self.token = ""
        self.player_id = ""
        self.ws: ClientConnection | None = None
        self.events: list[Frame] = []  # event frames (with seq), in order
        self.answers: dict[str, Frame] = {}
        self.unsolicited: list[Frame] = []  # answers without an id
        self.order: list[Frame] = []  # every frame, in arrival order
        self.answered = 0  # answers of this connection, kept or not
        self.last_answer: Frame | None = None
        self.last_welcome: Frame | None = None  # of this connection
        self.seat = -1
        self.welcome: Frame | None = None  # the one that answered connect()
        self.close_code: int | None = None
        self.problems: list[str] = []
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()

    # -- REST -----------------------------------------------------------------------------
    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def rest(self, method: str, path: str, **kw: Any) -> httpx.Response:
        async with httpx.AsyncClient(
            base_url=self.base, timeout=REST_TIMEOUT_S, verify=tls.context()
        ) as c:
            return await c.request(method, path, headers=self.auth, **kw)

    async def register(self) -> Player:
        r = await self.rest("POST", "/api/sessions", json={"name": self.name})
        _expect(r, 201, f"{self.name}: a session")
        self.token, self.player_id = r.json()["token"], r.json()["player_id"]
        return self

    # -- WebSocket ------------------------------------------------------------------------
    async def open(self, base: str | None = None) -> None:
        """A fresh connection, reading, before any hello."""
        await self.close()
        if base is not None:
            self.base = base
        self.events, self.answers, self.order, self.close_code = [], {}, [], None
        self.answered, self.last_answer, self.last_welcome = 0, None, None
        ws = await websockets.connect(ws_url(self.base), max_size=None)
        self.ws = ws
        self._reader = asyncio.get_running_loop().create_task(self._read(ws))

    async def connect(
        self,
        code: str,
        base: str | None = None,
        *,
        watch: bool = False,
        claimant: bool = False,
        limit: float = WAIT_S,
    ) -> Frame:
        """Say hello (to watch, with `watch`) on a fresh connection and wait for `welcome`; the
        connection then keeps reading. Refused when the hello is refused or the socket closed;
        AssertionError when nothing came within `limit` seconds."""
        await self.open(base)
        await self.send(hello(self.token, code, HELLO_ID, watch=watch, claimant=claimant))

        def outcome() -> Frame | bool | None:
            answer = self.last_answer or {}
            refused = answer.get("id") == HELLO_ID and answer.get("type") == "error"
            return self.last_welcome or refused or self.closed

        try:
            got = await self.until(outcome, limit)
        except TimeoutError:
            raise AssertionError(f"{self.name}: no welcome within {limit} s") from None
        if not isinstance(got, dict):
            answer = self.last_answer or {}
            raise Refused(answer.get("code"), self.close_code, str(answer.get("message", "")))
        self.welcome = got
        self.seat = got["you"]["seat"]
        return got

    async def _read(self, ws: ClientConnection) -> None:
        order = Order()
        try:
            async for raw in ws:
                arrived = time.perf_counter()
                frame = json.loads(raw)
                problem = order.take(frame)
                if problem is not None:
                    self.problems.append(problem)
                kind = kind_of(frame)
                if kind == "event":
                    if frame.get("type") == "welcome":
                        self.last_welcome = frame
                else:
                    self.answered += 1
                    self.last_answer = frame
                if self.keep:
                    self.order.append(frame)
                    if kind == "event":
                        self.events.append(frame)
                    elif kind == "answer":
                        self.answers[frame["id"]] = frame
                    else:
                        self.unsolicited.append(frame)
                if self.on_frame is not None:
                    self.on_frame(frame, arrived)
                self._changed.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.close_code = ws.close_code
            self._changed.set()

    @property
    def closed(self) -> bool:
        return self.ws is None or (self._reader is not None and self._reader.done())

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            if self._reader is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._reader, 5)
            self.ws = None

    async def until(self, check: Callable[[], Any], limit: float = WAIT_S, what: str = "") -> Any:
        """The first true answer of `check`, asked again after each frame; TimeoutError after
        `limit` seconds."""
        async with asyncio.timeout(limit):
            while True:
                result = check()
                if result:
                    return result
                self._changed.clear()
                await self._changed.wait()
        raise AssertionError(what)  # pragma: no cover

    async def wait_event(
        self, pred: Callable[[Frame], bool], limit: float = WAIT_S, after: int = 0
    ) -> Frame:
        def find() -> Frame | None:
            return next((e for e in self.events if e["seq"] > after and pred(e)), None)

        try:
            result: Frame = await self.until(find, limit)
        except TimeoutError:
            seen = [(e["seq"], e["type"]) for e in self.events[-12:]]
            raise AssertionError(f"{self.name}: no such event; last seen {seen}") from None
        return result

    async def wait_closed(self, limit: float = WAIT_S) -> int | None:
        await self.until(lambda: self._reader is not None and self._reader.done(), limit)
        return self.close_code

    async def send(self, frame: Frame) -> None:
        assert self.ws is not None
        await self.ws.send(json.dumps(frame))

    async def send_raw(self, text: str | bytes) -> None:
        assert self.ws is not None
        await self.ws.send(text)

    def next_id(self, kind: str) -> str:
        return f"{kind}-{next(self._ids)}"

    async def request(self, kind: str, **fields: Any) -> Frame:
        """Send one frame; return its answer (ack, error or pong)."""
        frame_id = self.next_id(kind)
        await self.send({"type": kind, "id": frame_id, **fields})
        answer: Frame = await self.until(lambda: self.answers.get(frame_id), what=frame_id)
        return answer

    async def ok(self, kind: str, **fields: Any) -> Frame:
        answer = await self.request(kind, **fields)
        assert answer["type"] in ("ack", "pong"), answer
        return answer

    @property
    def last_seq(self) -> int:
        return self.events[-1]["seq"] if self.events else 0

    def latest(self, kind: str) -> Frame | None:
        return next((e for e in reversed(self.events) if e["type"] == kind), None)


def rigged_deal(players: int) -> dict[str, Any]:
    """A deal obeying R3/R4 where the partner of seat 0 holds A A K K and the centre A A K K:
    two swaps (K for A) give that partner a carré. The other hands pair up the other ranks."""
    ranks = ranks_for(players)
    a, k, rest = ranks[0], ranks[1], list(ranks[2:])
    partner = players // 2
    others = [s for s in range(players) if s != partner]
    hands: list[list[str]] = [[] for _ in range(players)]
    hands[partner] = [a, a, k, k]
    for i, seat in enumerate(others):
        r1, r2 = rest[i], rest[(i + 1) % len(rest)]
        hands[seat] = [r1, r1, r2, r2]
    return {"hands": hands, "center": [a, a, k, k]}


async def table_with(
    base: str,
    players: int,
    humans: int,
    *,
    time_scale: float = 0.05,
    deals: int = 0,
    bot_policy: str = "idle",
    seed: int = 7,
    bot_level: str = "normal",
) -> tuple[str, list[Player]]:
    """A table of `players` seats (the server's test hooks on): `humans` players (seat 0
    hosts), bots in the others at `bot_level` (named, since a new player's tables would start
    at relaxed: gateway/newcomers.py); everyone connected, the match not started."""
    people = [await Player(base, f"P{i}").register() for i in range(humans)]
    scenario = {
        "seed": seed,
        "time_scale": time_scale,
        "deals": [rigged_deal(players)] * deals,
        "bot_policy": bot_policy,
    }
    host = people[0]
    body = {"players": players, "scenario": scenario, "bot_level": bot_level}
    r = await host.rest("POST", "/api/tables", json=body)
    _expect(r, 201, "table")
    code = r.json()["code"]
    for seat, p in enumerate(people[1:], start=1):
        _expect(await p.rest("POST", f"/api/tables/{code}/seats/{seat}"), 200, f"seat {seat}")
    for seat in range(humans, players):
        r = await host.rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})
        _expect(r, 200, f"bot at {seat}")
    for p in people:
        await p.connect(code)
    return code, people


def _expect(r: httpx.Response, status: int, what: str) -> None:
    """An answer other than `status` is a failed expectation (AssertionError, as a test's would
    be: callers wait through one, a test reports it)."""
    if r.status_code != status:
        raise AssertionError(f"{what}: {r.status_code} {r.text}")
