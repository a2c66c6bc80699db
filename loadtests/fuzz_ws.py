"""Fuzz the WebSocket of a live stack with hypothesis-drawn frames (loadtests/fuzz_frames.py)
over several tables in lobby, signing, playing and pause, then check that nothing broke:

    .venv/bin/python -m loadtests.fuzz_ws --frames 100000              # starts its own stack
    .venv/bin/python -m loadtests.fuzz_ws --url http://127.0.0.1:8000 --frames 100000 \\
        --log gateway.log --ray-address 127.0.0.1:6379 --namespace quatro \\
        --ray-token-path …   # the "Ray token file:" that `make run` prints

The server must run with QUATRO_TEST_HOOKS=1 (the tables use idle bots and a faster clock).
Each table's human seats are fuzzing lanes: a lane sends a frame, waits for its one answer (or
the close it earns), keeps under the flood guard's rate except when it floods on purpose, and
reconnects after a close. It prints a JSON summary: frames sent, answers by type and code, closes
by code, table actor crashes (actor pids before and after, when Ray is reachable), tracebacks in
the gateway's log, and whether every table still plays; it exits 1 if any check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

from loadtests.fuzz_frames import Spec, generate

EXPECTED_CLOSES = {1000, 1008, 1009, 1013, 4409}  # flood, too big, full, replaced
PACE_S = 0.045  # under the flood guard's 30 frames a second
ANSWER_S = 10.0
PROGRESS_EVERY = 10_000
PHASES = ["lobby", "signing", "playing", "pause"]


@dataclass
class Lane:
    """One human seat of one table, and its current connection."""

    base: str
    code: str
    token: str
    host: bool
    table_id: str  # the table actor's Ray name
    ws: ClientConnection | None = None
    answers: int = 0
    last_answer: dict[str, Any] | None = None
    reader: asyncio.Task[None] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    last_welcome: dict[str, Any] | None = None


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
        lanes = [
            Lane(self.base, code, host, True, table_id),
            Lane(self.base, code, guest, False, table_id),
        ]
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
    async def connect(self, lane: Lane) -> None:
        await self.drop(lane)
        ws = await websockets.connect(self.ws_url, max_size=None)
        lane.ws, lane.answers, lane.last_welcome = ws, 0, None
        await ws.send(
            json.dumps({"type": "hello", "id": "hi", "token": lane.token, "table": lane.code})
        )
        lane.reader = asyncio.get_running_loop().create_task(self.read(lane, ws))
        async with asyncio.timeout(ANSWER_S):
            while lane.last_welcome is None:
                if lane.reader.done():
                    raise RuntimeError(f"hello refused: closed {ws.close_code} {ws.close_reason}")
                await self.changed(lane)

    async def read(self, lane: Lane, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                frame = json.loads(raw)
                if frame.get("type") == "welcome":
                    lane.last_welcome = frame
                elif "seq" not in frame:  # an answer: ack, pong or error
                    lane.answers += 1
                    lane.last_answer = frame
                    kind = frame.get("type", "?")
                    self.tally.answers[
                        f"error:{frame.get('code')}" if kind == "error" else kind
                    ] += 1
                lane.changed.set()
        except websockets.ConnectionClosed:
            pass
        finally:
            if lane.ws is ws:
                self.tally.close(ws.close_code)
            lane.changed.set()

    async def changed(self, lane: Lane) -> None:
        lane.changed.clear()
        await lane.changed.wait()

    async def drop(self, lane: Lane) -> None:
        ws, lane.ws = lane.ws, None
        if ws is not None:
            await ws.close()
            if lane.reader is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(lane.reader, 5)

    def closed(self, lane: Lane) -> bool:
        return lane.ws is None or (lane.reader is not None and lane.reader.done())

    async def answered_or_closed(self, lane: Lane, before: int, limit: float = ANSWER_S) -> bool:
        """True once an answer came after `before`; False when the connection closed first."""
        try:
            async with asyncio.timeout(limit):
                while lane.answers <= before and not self.closed(lane):
                    await self.changed(lane)
        except TimeoutError:
            self.tally.unanswered += 1
            return False
        return lane.answers > before

    async def until_answered(self, lane: Lane, text: str) -> None:
        assert lane.ws is not None
        before = lane.answers
        await lane.ws.send(text)
        await self.answered_or_closed(lane, before)

    # -- the fuzzing ------------------------------------------------------------------------------
    async def send(self, lane: Lane, spec: Spec) -> None:
        if self.closed(lane):
            self.tally.reconnects += 1
            await self.connect(lane)
        assert lane.ws is not None
        self.tally.categories[spec.category] += 1
        if spec.kind == "flood":
            for _ in range(spec.size):
                with contextlib.suppress(websockets.ConnectionClosed):
                    await lane.ws.send(spec.text)
            self.tally.frames += spec.size
            # Closed (1008) or answered frame by frame; either way wait for the end of it.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(ANSWER_S):
                    while not self.closed(lane) and lane.answers < spec.size:
                        await self.changed(lane)
            await asyncio.sleep(spec.size / 30)  # let the guard's bucket refill
            return
        if spec.kind == "prehello":
            await self.before_hello(lane, spec)
            return
        if spec.kind == "hello":
            token = {"own": lane.token, "forged": "forged", "table": lane.token}[spec.text]
            table = "ZZZZZZ" if spec.text == "table" else lane.code
            text: str | bytes = json.dumps(
                {"type": "hello", "id": "again", "token": token, "table": table}
            )
        else:
            text = spec.build()
        before = lane.answers
        self.tally.frames += 1
        try:
            await lane.ws.send(text)
        except websockets.ConnectionClosed:
            return
        await self.answered_or_closed(lane, before)

    async def before_hello(self, lane: Lane, spec: Spec) -> None:
        """A fresh socket: junk first (each answered), then this seat's hello, which replaces
        the lane's connection (4409)."""
        async with websockets.connect(self.ws_url, max_size=None) as ws:
            for junk in spec.junk:
                await ws.send(junk)
                self.tally.frames += 1
                async with asyncio.timeout(ANSWER_S):
                    answer = json.loads(await ws.recv())
                self.tally.answers[f"prehello:{answer.get('code', answer.get('type'))}"] += 1
            await ws.send(
                json.dumps({"type": "hello", "id": "h", "token": lane.token, "table": lane.code})
            )
            self.tally.frames += 1
            async with asyncio.timeout(ANSWER_S):
                welcome = json.loads(await ws.recv())
            self.tally.answers[f"prehello:{welcome.get('type')}"] += 1
        self.tally.close(ws.close_code)

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
        assert lane.last_welcome is not None
        assert lane.ws is not None
        table = lane.last_welcome["table"]
        phase = table["phase"]
        if phase == "lobby":
            r = await c.post(
                f"/api/tables/{lane.code}/start", headers={"Authorization": f"Bearer {lane.token}"}
            )
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
        assert lane.ws is not None
        before = lane.answers
        await lane.ws.send(json.dumps(frame))
        if not await self.answered_or_closed(lane, before):
            return False
        answer = lane.last_answer or {}
        return answer.get("id") == "play" and answer.get("type") == "ack"


def _size(log: Path | None) -> int:
    return log.stat().st_size if log is not None and log.exists() else 0


def tracebacks(log: Path | None, offset: int) -> int | None:
    if log is None or not log.exists():
        return None
    with log.open("rb") as f:
        f.seek(offset)
        return f.read().count(b"Traceback")


async def fuzz(
    base: str,
    frames: int,
    *,
    seed: int = 1,
    tables: int = 8,
    log: Path | None = None,
    pid_of: Callable[[str], int] | None = None,
) -> dict[str, Any]:
    """Send `frames` fuzz frames to the stack at `base`; the summary (see the module doc)."""
    t0 = time.monotonic()
    specs = generate(frames, seed)
    drawn_s = time.monotonic() - t0
    offset = _size(log)
    tally = Tally()
    fuzzer = Fuzzer(base, tally)
    async with httpx.AsyncClient(base_url=base, timeout=30) as c:
        lanes_by_table = [await fuzzer.table(c, PHASES[i % len(PHASES)], i) for i in range(tables)]
        codes = [ls[0].code for ls in lanes_by_table]
        ids = [ls[0].table_id for ls in lanes_by_table]
        pids_before = [await asyncio.to_thread(pid_of, i) for i in ids] if pid_of else None
        lanes = [lane for ls in lanes_by_table for lane in ls]
        shares = [specs[i :: len(lanes)] for i in range(len(lanes))]
        started = time.monotonic()
        async with asyncio.TaskGroup() as tg:
            for lane, share in zip(lanes, shares, strict=True):
                tg.create_task(fuzzer.run_lane(lane, share))
        fuzz_s = time.monotonic() - started
        playable = {
            code: await fuzzer.playable(c, ls)
            for code, ls in zip(codes, lanes_by_table, strict=True)
        }
        pids_after = [await asyncio.to_thread(pid_of, i) for i in ids] if pid_of else None
        for lane in lanes:
            await fuzzer.drop(lane)
    crashes = (
        sum(a != b for a, b in zip(pids_before, pids_after, strict=True))
        if pids_before is not None and pids_after is not None
        else None
    )
    closes = {str(k): v for k, v in sorted(tally.closes.items())}
    summary: dict[str, Any] = {
        "frames_sent": tally.frames,
        "specs": len(specs),
        "tables": tables,
        "lanes": len(lanes),
        "seed": seed,
        "categories": dict(tally.categories.most_common()),
        "answers": dict(tally.answers.most_common()),
        "closes": closes,
        "close_1011": tally.closes.get(1011, 0),
        "unexpected_closes": sum(v for k, v in tally.closes.items() if k not in EXPECTED_CLOSES),
        "unanswered": tally.unanswered,
        "reconnects": tally.reconnects,
        "actor_crashes": crashes,
        "tracebacks": tracebacks(log, offset),
        "playable": playable,
        "problems": tally.problems[:20],
        "problem_count": len(tally.problems),
        "seconds": {"draw": round(drawn_s, 1), "fuzz": round(fuzz_s, 1)},
        "frames_per_s": round(tally.frames / fuzz_s, 1) if fuzz_s else None,
    }
    summary["ok"] = (
        summary["close_1011"] == 0
        and not summary["actor_crashes"]
        and not summary["tracebacks"]
        and all(playable.values())
    )
    return summary


def ray_pids(address: str, namespace: str, token_path: str | None) -> Callable[[str], int]:
    """table_id (the actor's Ray name) -> the table actor's pid, through its `ping`. Joins Ray
    as the gateway does (loopback kept, the cluster's token)."""
    import ray

    from actors.protocol import Probe
    from actors.ray_calls import answered, send
    from cluster.connect import connect_ray
    from cluster.settings import Settings

    connect_ray(
        Settings(
            ray_address=address,
            ray_namespace=namespace,
            ray_auth_mode="token" if token_path else None,
            ray_auth_token_path=token_path,
        )
    )

    def pid_of(table_id: str) -> int:
        handle = ray.get_actor(table_id, namespace=namespace)
        return answered(Probe(), ray.get(send(handle, Probe()), timeout=60)).pid

    return pid_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a running stack with QUATRO_TEST_HOOKS=1; none: start one")
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log", type=Path, help="the gateway's log, to count tracebacks")
    parser.add_argument("--ray-address", help="to compare table actor pids (crashes)")
    parser.add_argument("--namespace", default="quatro")
    parser.add_argument("--ray-token-path", help="the file holding that cluster's Ray token")
    args = parser.parse_args(argv)
    own = None
    url, log, ray_address, token = args.url, args.log, args.ray_address, args.ray_token_path
    if url is None:
        from loadtests.stack import EmbeddedStack

        log = Path(tempfile.gettempdir()) / f"quatro-fuzz-{os.getpid()}.log"
        own = EmbeddedStack(log=log, test_hooks=True, table_slots=64, pool_size=2).start()
        url, ray_address, token = own.url, own.ray_address, own.ray_token_path
    try:
        pid_of = ray_pids(ray_address, args.namespace, token) if ray_address else None
        summary = asyncio.run(
            fuzz(url, args.frames, seed=args.seed, tables=args.tables, log=log, pid_of=pid_of)
        )
    finally:
        if own is not None:
            own.stop()
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
