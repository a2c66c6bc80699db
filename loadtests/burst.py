"""A burst of arrivals: 200 players reach one node within 10 s and each must be seated.

    python -m loadtests.burst                  # its own embedded stack, 200 players in 10 s
    python -m loadtests.burst --players 40 --window 5 --seed 7
    python -m loadtests.burst --url http://127.0.0.1:8000   # a stack already running
    python -m loadtests.burst --floor 50       # the crowd announced: 50 actors ready ahead

`--floor N` is what an operator does for a known peak (docs/operations.md, "A known peak"): the
embedded stack's pool keeps N ready actors (`QUATRO_POOL_FLOOR`), and the arrivals begin once
the gateway counts them ready (`quatro_pool_ready`; the time that took is printed apart). Without
it, the pool sees the crowd only as it comes (the rate of creations and its trend), and on a cold
node the tables of a 10 s burst wait for worker processes started a few at a time.

Each player opens a session (`POST /api/sessions`), then either hosts a table of four
(`POST /api/tables`) whose three friends open its invite (`GET /api/tables/{code}`) and take a
seat (`POST /api/tables/{code}/seats/{s}`), or presses Play now (`POST /api/quickplay`); it is
seated when its WebSocket `hello` is answered by a `welcome` naming its seat. Arrival times are
drawn over the window with a seeded RNG; in a group of friends the host is the first to arrive,
and a friend who arrives before the host has a code arrives, in effect, when the link reaches them.

Every player has an HTTP client (a connection pool) of its own, as separate browsers do
(`--shared-client` puts them all on one pool instead); `--think` lets friends look at the table
a while before taking a seat (left out of the times), so their connections idle as a browser's
do. A documented refusal (`429 rate_limited`/`too_many_lobbies`, `503 unavailable`/`no_room`,
WebSocket close 1013) is waited out as its `Retry-After` says, like the web client, within the
player's deadline; anything else is a failure: a non-2xx, an exception (named by its type:
`RemoteProtocolError` is the keep-alive race of a request sent on a connection the server is
closing), a hello refused, or no `welcome` by the deadline. Prints a summary, then one JSON
line: the failures by kind and the time from arrival to seated (p50/p99). Exits 1 when any
player failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets

from cluster.stack import Launched, Spec
from loadtests import cli, tls
from loadtests.burst_plan import TABLE_SIZE, Failed, Outcome, Plan, plan
from loadtests.burst_report import report, summary
from loadtests.figures import emit
from loadtests.player import Player, Refused
from loadtests.runner import scrape

SEAT_DEADLINE_S = 60.0  # from arrival to welcome
# Refusals the protocol documents as "retry after Retry-After" (docs/protocol.md, Errors).
REFUSALS = {
    (429, "rate_limited"),
    (429, "too_many_lobbies"),
    (503, "unavailable"),
    (503, "no_room"),
}
WS_TRY_AGAIN = 1013


@dataclass
class Burst:
    url: str
    deadline_s: float = SEAT_DEADLINE_S
    quick_size: int = TABLE_SIZE
    think_s: float = 0.0  # a friend's longest look at the table before taking a seat
    shared: httpx.AsyncClient | None = None
    codes: dict[int, asyncio.Future[str | None]] = field(default_factory=dict)
    players: list[Player] = field(default_factory=list)
    tables: set[str] = field(default_factory=set)
    rng: random.Random = field(default_factory=random.Random)  # the jitter of retries

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        if self.shared is not None:
            yield self.shared
            return
        async with httpx.AsyncClient(base_url=self.url, timeout=None, verify=tls.context()) as c:
            yield c  # no timeout here: each request is given its player's time left

    async def call(
        self,
        c: httpx.AsyncClient,
        out: Outcome,
        method: str,
        path: str,
        route: str,
        token: str | None = None,
        body: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One REST call, a documented refusal waited out within the player's deadline."""
        loop = asyncio.get_running_loop()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        while True:
            left = out.arrived + self.deadline_s - loop.time()
            if left <= 0:
                raise Failed("not seated by the deadline", f"still waiting on {route}")
            try:
                # No timeout of its own (a browser's fetch has none): the player's patience.
                r = await c.request(method, path, json=body, headers=headers, timeout=left)
            except httpx.TimeoutException as exc:
                if loop.time() < out.arrived + self.deadline_s - 0.1:
                    raise Failed(f"{type(exc).__name__} on {route}", str(exc)) from exc
                raise Failed("not seated by the deadline", f"still waiting on {route}") from exc
            except httpx.HTTPError as exc:
                raise Failed(f"{type(exc).__name__} on {route}", str(exc)) from exc
            if r.is_success:
                data: dict[str, Any] = r.json()
                return data
            try:
                code = str(r.json()["error"]["code"])
            except (ValueError, KeyError, TypeError):
                code = "?"
            if (r.status_code, code) not in REFUSALS:
                raise Failed(f"http {r.status_code} {code} on {route}", r.text[:200])
            out.refusals.append(f"{code} on {route}")
            wait = float(r.headers.get("Retry-After", "1"))
            if loop.time() + wait >= out.arrived + self.deadline_s:
                raise Failed("not seated by the deadline", f"refused {code} on {route}")
            await asyncio.sleep(wait * self.rng.uniform(1.0, 1.2))

    async def hello(self, out: Outcome, token: str, code: str, seat: int) -> None:
        """Say hello until welcomed at `seat` (close 1013 or `unavailable`: again, later)."""
        loop = asyncio.get_running_loop()
        while True:
            left = out.arrived + self.deadline_s - loop.time()
            if left <= 0:
                raise Failed("not seated by the deadline", "no welcome")
            player = Player(self.url, keep=False)
            player.token = token
            try:
                async with asyncio.timeout(left):
                    welcome = await player.connect(code, limit=left + 1)
            except TimeoutError as exc:
                await player.close()
                raise Failed("not seated by the deadline", "no welcome") from exc
            except Refused as refused:
                await player.close()
                if refused.code == "unavailable" or (
                    refused.code is None and refused.close_code == WS_TRY_AGAIN
                ):
                    out.refusals.append("ws unavailable" if refused.code else "ws 1013")
                    await asyncio.sleep(self.rng.uniform(1.0, 1.2))
                    continue
                what = refused.code or f"closed {refused.close_code}"
                raise Failed(f"hello refused {what}", str(refused)) from None
            except (OSError, websockets.WebSocketException) as exc:
                await player.close()
                raise Failed(f"{type(exc).__name__} on hello", str(exc)) from exc
            if welcome["you"]["seat"] != seat:
                await player.close()
                got = welcome["you"]["seat"]
                raise Failed("welcomed at another seat", f"{got} instead of {seat}")
            self.players.append(player)  # stays open: a seated player stays at the table
            return

    async def player(self, p: Plan, t0: float) -> Outcome:
        loop = asyncio.get_running_loop()
        out = Outcome(p)
        await asyncio.sleep(max(0.0, t0 + p.at - loop.time()))
        out.arrived = loop.time()
        out.late_s = out.arrived - (t0 + p.at)
        link = self.codes[p.group] if p.group is not None else None
        try:
            if p.kind == "friend":
                assert link is not None
                if not link.done():
                    out.waited_for_link = True
                    left = out.arrived + self.deadline_s - loop.time()
                    try:
                        await asyncio.wait_for(asyncio.shield(link), left)
                    except TimeoutError as exc:
                        raise Failed("not seated by the deadline", "no invite link") from exc
                    out.arrived = loop.time()  # the friend opens the link when it comes
                if link.result() is None:
                    raise Failed("its host has no table")
            async with self.client() as c:
                token = str(
                    (
                        await self.call(
                            c, out, "POST", "/api/sessions", "sessions", body={"name": f"p{p.i}"}
                        )
                    )["token"]
                )
                if p.kind == "host":
                    made = await self.call(
                        c, out, "POST", "/api/tables", "tables", token, {"players": TABLE_SIZE}
                    )
                    code, seat = str(made["code"]), 0
                    assert link is not None
                    link.set_result(code)
                elif p.kind == "friend":
                    assert link is not None
                    code = str(link.result())
                    await self.call(c, out, "GET", f"/api/tables/{code}", "table")
                    if self.think_s > 0:  # the connection idles meanwhile (keep-alive)
                        out.thought_s = self.rng.uniform(0, self.think_s)
                        await asyncio.sleep(out.thought_s)
                    taken = await self.call(
                        c, out, "POST", f"/api/tables/{code}/seats/{p.seat}", "seat", token
                    )
                    seat = int(taken["seat"])
                else:
                    got = await self.call(
                        c,
                        out,
                        "POST",
                        "/api/quickplay",
                        "quickplay",
                        token,
                        {"players": self.quick_size},
                    )
                    code, seat = str(got["code"]), int(got["seat"])
            self.tables.add(code)
            await self.hello(out, token, code, seat)
            out.seated_s = loop.time() - out.arrived - out.thought_s
        except Failed as exc:
            out.failure = exc
        except Exception as exc:  # a bug of this script or an answer of the wrong shape
            out.failure = Failed(f"{type(exc).__name__} in the script", repr(exc)[:200])
        finally:
            if link is not None and p.kind == "host" and not link.done():
                link.set_result(None)  # its friends stop waiting
        return out

    async def run(self, plans: list[Plan]) -> list[Outcome]:
        loop = asyncio.get_running_loop()
        self.codes = {p.group: loop.create_future() for p in plans if p.group is not None}
        t0 = loop.time() + 0.5  # every task created before the first arrival
        try:
            return await asyncio.gather(*(self.player(p, t0) for p in plans))
        finally:
            await asyncio.gather(*(p.close() for p in self.players), return_exceptions=True)


async def burst(
    url: str,
    players: int = 200,
    window: float = 10.0,
    table_share: float = 0.6,
    quick_share: float = 0.4,
    seed: int = 1,
    deadline_s: float = SEAT_DEADLINE_S,
    shared_client: bool = False,
    think_s: float = 0.0,
) -> tuple[dict[str, Any], list[Outcome], set[str]]:
    """Run one burst against `url`; the report, every player's outcome, and the tables used."""
    plans = plan(players, window, table_share, quick_share, seed)
    b = Burst(url.rstrip("/"), deadline_s, think_s=think_s, rng=random.Random(seed + 1))
    tls.context()  # made once, before the first arrival (loadtests/tls.py)
    t0 = time.monotonic()
    if shared_client:
        limits = httpx.Limits(max_connections=players, max_keepalive_connections=players)
        async with httpx.AsyncClient(base_url=b.url, timeout=None, limits=limits) as c:
            b.shared = c
            outcomes = await b.run(plans)
    else:
        outcomes = await b.run(plans)
    result = report(outcomes, window, seed, b.url, time.monotonic() - t0)
    return result, outcomes, b.tables


def ready(url: str, floor: int, within_s: float = 600.0) -> float:
    """Seconds until the gateway counts `floor` ready actors (its pool's last look)."""
    began = time.monotonic()
    while scrape(url).get("quatro_pool_ready", 0.0) < floor:
        if time.monotonic() - began > within_s:
            raise SystemExit(f"the pool did not reach its floor of {floor} in {within_s:.0f} s")
        time.sleep(0.5)
    return time.monotonic() - began


def main() -> None:
    ap = cli.command("burst", __doc__)
    ap.add_argument("--players", type=int, default=200)
    ap.add_argument("--window", type=float, default=10.0, help="seconds over which they arrive")
    ap.add_argument(
        "--table-share", type=float, default=0.6, help="weight of groups of four friends"
    )
    ap.add_argument("--quick-share", type=float, default=0.4, help="weight of Play now")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=SEAT_DEADLINE_S, help="arrival → welcome, s")
    ap.add_argument("--shared-client", action="store_true", help="one HTTP pool for everyone")
    ap.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="a friend looks at the table up to this many s before taking a seat (left out of"
        " the times; the connection idles meanwhile, as a browser's does)",
    )
    cli.add_url(p=ap, what="a running gateway (default: start an embedded stack)")
    ap.add_argument("--pool-size", type=int, default=4, help="embedded stack: QUATRO_POOL_SIZE")
    ap.add_argument("--table-slots", type=int, default=400, help="embedded stack: slots")
    ap.add_argument(
        "--floor",
        type=int,
        default=0,
        help="embedded stack: QUATRO_POOL_FLOOR, waited for before the first arrival",
    )
    args = ap.parse_args()

    stack = None
    url = args.url
    if url is None:
        log = Path(tempfile.mkdtemp(prefix="quatro-burst-")) / "stack.log"
        print(f"starting an embedded stack (log: {log})", file=sys.stderr)
        floor = {"QUATRO_POOL_FLOOR": str(args.floor)} if args.floor else {}
        spec = Spec.under_load(table_slots=args.table_slots, pool=args.pool_size, settings=floor)
        stack = Launched(spec, log).start()
        url = stack.url
        if args.floor:
            print(f"floor of {args.floor} ready in {ready(url, args.floor):.1f} s", file=sys.stderr)
    try:
        result, outcomes, _ = asyncio.run(
            burst(
                url,
                args.players,
                args.window,
                args.table_share,
                args.quick_share,
                args.seed,
                args.deadline,
                args.shared_client,
                args.think,
            )
        )
    finally:
        if stack is not None:
            stack.stop()
    print(summary(result, outcomes))
    emit(result)
    sys.exit(1 if result["failed"] else 0)


if __name__ == "__main__":
    main()
