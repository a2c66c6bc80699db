"""How the WebSocket fuzzer (loadtests/fuzz_ws.py) plays its frames: each human seat of its
tables is a lane, one connection of the kit's player (loadtests/player.py) at a time, that sends
a frame and waits for its one answer (or the close it earns), keeps under the flood guard's rate
except when it floods on purpose, reconnects after a close, and tallies what came back."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import httpx
import websockets

from loadtests.frames import hello
from loadtests.fuzz_frames import Spec
from loadtests.player import Player

PACE_S = 0.045  # under the flood guard's 30 frames a second
ANSWER_S = 10.0
PROGRESS_EVERY = 10_000


@dataclass
class Lane:
    """One human seat of one table, and its current connection."""

    code: str
    host: bool
    table_id: str  # the table actor's Ray name
    player: Player


@dataclass
class Tally:
    frames: int = 0
    categories: Counter[str] = field(default_factory=Counter)
    answers: Counter[str] = field(default_factory=Counter)
    closes: Counter[int] = field(default_factory=Counter)
    unanswered: int = 0
    reconnects: int = 0
    problems: list[str] = field(default_factory=list)

    def close(self, code: int | None) -> None:
        self.closes[code if code is not None else -1] += 1


class Fuzzer:
    def __init__(self, base: str, tally: Tally) -> None:
        self.base = base
        self.ws_url = base.replace("http", "ws", 1) + "/ws"
        self.tally = tally
        self.next_report = PROGRESS_EVERY

    def progress(self) -> None:
        """A line on stderr every PROGRESS_EVERY frames: a long run shows it is alive."""
        if self.tally.frames >= self.next_report:
            closes = dict(self.tally.closes)
            print(f"fuzz: {self.tally.frames} frames, closes {closes}", file=sys.stderr, flush=True)
            self.next_report += PROGRESS_EVERY

    # -- setting up tables ----------------------------------------------------------------------
    async def session(self, c: httpx.AsyncClient, name: str) -> str:
        r = await c.post("/api/sessions", json={"name": name})
        r.raise_for_status()
        return str(r.json()["token"])

    async def table(self, c: httpx.AsyncClient, phase: str, n: int) -> list[Lane]:
        """A 4-seat table with two fuzzing humans (seats 0 and 1) and idle bots, left in
        `phase`."""
        host, guest = await self.session(c, f"Host {n}"), await self.session(c, f"Guest {n}")
        auth = {"Authorization": f"Bearer {host}"}
        scenario = {"seed": n, "time_scale": 0.2, "bot_policy": "idle"}
        r = await c.post("/api/tables", json={"players": 4, "scenario": scenario}, headers=auth)
        r.raise_for_status()
        code, table_id = r.json()["code"], r.json()["table_id"]
        r = await c.post(
            f"/api/tables/{code}/seats/1", headers={"Authorization": f"Bearer {guest}"}
        )
        r.raise_for_status()
        for seat in (2, 3):
            (
                await c.post(f"/api/tables/{code}/bots", json={"seat": seat}, headers=auth)
            ).raise_for_status()
        lanes = [self.lane(code, host, True, table_id), self.lane(code, guest, False, table_id)]
        for lane in lanes:
            await self.connect(lane)
        if phase != "lobby":
            (await c.post(f"/api/tables/{code}/start", headers=auth)).raise_for_status()
        if phase in ("playing", "pause"):
            for lane in lanes:
                await self.until_answered(lane, json.dumps({"type": "ready", "id": "r"}))
        if phase == "pause":
            await self.until_answered(lanes[0], json.dumps({"type": "quatro", "id": "q"}))
        return lanes

    # -- one connection ---------------------------------------------------------------------------
    def lane(self, code: str, token: str, host: bool, table_id: str) -> Lane:
        player = Player(self.base, keep=False, on_frame=self.count)
        player.token = token
        return Lane(code, host, table_id, player)

    def count(self, frame: dict[str, Any], _: float) -> None:
        """Every answer (ack, pong or error), by type and code."""
        if "seq" not in frame:
            kind = frame.get("type", "?")
            self.tally.answers[f"error:{frame.get('code')}" if kind == "error" else kind] += 1

    async def connect(self, lane: Lane) -> None:
        await self.drop(lane)
        try:
            await lane.player.connect(lane.code, limit=ANSWER_S)
        except AssertionError as exc:
            raise TimeoutError(str(exc)) from None

    async def drop(self, lane: Lane) -> None:
        """Close the lane's connection; one the server closed first is counted by its code."""
        if lane.player.ws is not None and lane.player.closed:
            self.tally.close(lane.player.close_code)
        await lane.player.close()

    def closed(self, lane: Lane) -> bool:
        return lane.player.closed

    async def answered_or_closed(self, lane: Lane, before: int, limit: float = ANSWER_S) -> bool:
        """True once an answer came after `before`; False when the connection closed first."""
        p = lane.player
        try:
            await p.until(lambda: p.answered > before or p.closed, limit)
        except TimeoutError:
            self.tally.unanswered += 1
            return False
        return p.answered > before

    async def until_answered(self, lane: Lane, text: str) -> None:
        before = lane.player.answered
        await lane.player.send_raw(text)
        await self.answered_or_closed(lane, before)

    # -- the fuzzing ------------------------------------------------------------------------------
    async def send(self, lane: Lane, spec: Spec) -> None:
        if self.closed(lane):
            self.tally.reconnects += 1
            await self.connect(lane)
        self.tally.categories[spec.category] += 1
        if spec.kind == "flood":
            for _ in range(spec.size):
                with contextlib.suppress(websockets.ConnectionClosed):
                    await lane.player.send_raw(spec.text)
            self.tally.frames += spec.size
            # Closed (1008) or answered frame by frame; either way wait for the end of it.
            p = lane.player
            with contextlib.suppress(TimeoutError):
                await p.until(lambda: p.closed or p.answered >= spec.size, ANSWER_S)
            await asyncio.sleep(spec.size / 30)  # let the guard's bucket refill
            return
        if spec.kind == "prehello":
            await self.before_hello(lane, spec)
            return
        if spec.kind == "hello":
            own = lane.player.token
            token = {"own": own, "forged": "forged", "table": own}[spec.text]
            table = "ZZZZZZ" if spec.text == "table" else lane.code
            text: str | bytes = json.dumps(hello(token, table, "again"))
        else:
            text = spec.build()
        before = lane.player.answered
        self.tally.frames += 1
        try:
            await lane.player.send_raw(text)
        except websockets.ConnectionClosed:
            return
        await self.answered_or_closed(lane, before)

    async def before_hello(self, lane: Lane, spec: Spec) -> None:
        """A fresh socket: junk first (each answered), then this seat's hello, which replaces
        the lane's connection (4409)."""
        p = Player(self.base, keep=False)
        await p.open()
        try:
            for junk in spec.junk:
                before = p.answered
                await p.send_raw(junk)
                self.tally.frames += 1
                await p.until(partial(_more, p, before), ANSWER_S)
                answer = p.last_answer or {}
                self.tally.answers[f"prehello:{answer.get('code', answer.get('type'))}"] += 1
            before = p.answered
            await p.send(hello(lane.player.token, lane.code, "h"))
            self.tally.frames += 1
            got = await p.until(lambda: p.last_welcome or _more(p, before), ANSWER_S)
            first = got if isinstance(got, dict) else (p.last_answer or {})
            self.tally.answers[f"prehello:{first.get('type')}"] += 1
        finally:
            await p.close()
        self.tally.close(p.close_code)

    async def run_lane(self, lane: Lane, specs: list[Spec]) -> None:
        for spec in specs:
            started = time.monotonic()
            try:
                await self.send(lane, spec)
                self.progress()
            except (OSError, RuntimeError, TimeoutError, websockets.WebSocketException) as exc:
                self.tally.problems.append(f"{lane.code}: {spec.category}: {exc!r}"[:300])
                await asyncio.sleep(0.5)
            await asyncio.sleep(max(0.0, PACE_S - (time.monotonic() - started)))

    # -- is the table still playable? ------------------------------------------------------------
    async def playable(self, c: httpx.AsyncClient, lanes: list[Lane], limit: float = 60.0) -> bool:
        """Some command that the table's phase allows is acked (a lobby starts over REST)."""
        host = lanes[0]
        try:
            async with asyncio.timeout(limit):
                while True:
                    if await self.try_play(c, host):
                        return True
                    await asyncio.sleep(0.3)
        except TimeoutError:
            return False

    async def try_play(self, c: httpx.AsyncClient, lane: Lane) -> bool:
        await self.connect(lane)
        assert lane.player.last_welcome is not None
        table = lane.player.last_welcome["table"]
        phase = table["phase"]
        if phase == "lobby":
            r = await c.post(f"/api/tables/{lane.code}/start", headers=lane.player.auth)
            return r.status_code == 200
        if phase == "playing" and table["hand"] and table["center"]:
            frame = {
                "type": "swap",
                "card": table["hand"][0]["id"],
                "slot": 0,
                "expect": table["center"][0]["id"],
            }
        else:
            kind = {"signing": "ready", "pause": "next_round", "over": "rematch"}.get(
                phase, "ready"
            )
            frame = {"type": kind}
        frame["id"] = "play"
        return await self.acked(lane, frame)

    async def acked(self, lane: Lane, frame: dict[str, Any]) -> bool:
        before = lane.player.answered
        await lane.player.send(frame)
        if not await self.answered_or_closed(lane, before):
            return False
        answer = lane.player.last_answer or {}
        return answer.get("id") == "play" and answer.get("type") == "ack"


def _more(player: Player, before: int) -> bool:
    return player.answered > before
