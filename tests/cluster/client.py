"""A player as an outside client would write one from PROTOCOL.md: REST with httpx, the game
over a real WebSocket. Every wait has a deadline; nothing sleeps a fixed time."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

from engine.cards import ranks_for

Frame = dict[str, Any]
WAIT_S = 15.0
# A REST call may take as long as the server waits for a table (QUATRO_TABLE_WAIT, 40 s, through
# a restart) or for a ready actor (a creation: QUATRO_POOL_WAIT + QUATRO_ACTOR_TIMEOUT, 45 s):
# a client that gives up sooner turns the server's late answer into a failure of its own.
REST_TIMEOUT_S = 60.0


class Player:
    def __init__(self, base: str, name: str) -> None:
        self.base = base
        self.name = name
        self.token = ""
        self.player_id = ""
        self.ws: ClientConnection | None = None
        self.events: list[Frame] = []  # event frames (with seq), in order
        self.answers: dict[str, Frame] = {}
        self.unsolicited: list[Frame] = []  # answers without an id
        self.order: list[Frame] = []  # every frame, in arrival order
        self.seat = -1
        self.welcome: Frame | None = None
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
        async with httpx.AsyncClient(base_url=self.base, timeout=REST_TIMEOUT_S) as c:
            return await c.request(method, path, headers=self.auth, **kw)

    async def register(self) -> Player:
        r = await self.rest("POST", "/api/sessions", json={"name": self.name})
        assert r.status_code == 201, r.text
        self.token, self.player_id = r.json()["token"], r.json()["player_id"]
        return self

    # -- WebSocket ------------------------------------------------------------------------
    async def connect(
        self, code: str, base: str | None = None, *, watch: bool = False, claimant: bool = False
    ) -> Frame:
        """Say hello (to watch, with `watch`) and wait for `welcome`; the connection then keeps
        reading."""
        await self.close()
        if base is not None:
            self.base = base
        self.events, self.answers, self.order, self.close_code = [], {}, [], None
        self.ws = await websockets.connect(self.base.replace("http", "ws") + "/ws", max_size=None)
        hello: dict[str, Any] = {"type": "hello", "id": "hi", "token": self.token, "table": code}
        if watch:
            hello["watch"] = True
        if claimant:
            hello["claimant"] = True
        await self.ws.send(json.dumps(hello))
        self._reader = asyncio.get_running_loop().create_task(self._read(self.ws))
        welcome = await self.wait_event(lambda e: e["type"] == "welcome")
        self.welcome = welcome
        self.seat = welcome["you"]["seat"]
        return welcome

    async def _read(self, ws: ClientConnection) -> None:
        last = 0
        try:
            async for raw in ws:
                frame = json.loads(raw)
                self.order.append(frame)
                if "seq" in frame:
                    if frame["seq"] != last + 1:
                        self.problems.append(f"seq {frame['seq']} after {last}")
                    last = frame["seq"]
                    self.events.append(frame)
                elif frame.get("id") is not None:
                    self.answers[frame["id"]] = frame
                else:
                    self.unsolicited.append(frame)
                self._changed.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            self.close_code = ws.close_code
            self._changed.set()

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            if self._reader is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._reader, 5)
            self.ws = None

    async def until(self, check: Callable[[], Any], limit: float = WAIT_S, what: str = "") -> Any:
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

    async def send_raw(self, text: str | bytes) -> None:
        assert self.ws is not None
        await self.ws.send(text)

    async def request(self, kind: str, **fields: Any) -> Frame:
        """Send one frame; return its answer (ack, error or pong)."""
        assert self.ws is not None
        frame_id = f"{kind}-{next(self._ids)}"
        await self.ws.send(json.dumps({"type": kind, "id": frame_id, **fields}))
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
) -> tuple[str, list[Player]]:
    """A table of `players` seats: `humans` players (seat 0 hosts), bots in the others;
    everyone connected, the match not started."""
    people = [await Player(base, f"P{i}").register() for i in range(humans)]
    scenario = {
        "seed": seed,
        "time_scale": time_scale,
        "deals": [rigged_deal(players)] * deals,
        "bot_policy": bot_policy,
    }
    r = await people[0].rest("POST", "/api/tables", json={"players": players, "scenario": scenario})
    assert r.status_code == 201, r.text
    code = r.json()["code"]
    for seat, p in enumerate(people[1:], start=1):
        r = await p.rest("POST", f"/api/tables/{code}/seats/{seat}")
        assert r.status_code == 200, r.text
    for seat in range(humans, players):
        r = await people[0].rest("POST", f"/api/tables/{code}/bots", json={"seat": seat})
        assert r.status_code == 200, r.text
    for p in people:
        await p.connect(code)
    return code, people
