"""Gateways of different cells asking each other, over the internal port (gateway/internal.py).

A gateway is a Ray driver of its home cell only. What needs Ray for a table of another cell —
its data plane's `endpoint`, a REST lobby call from a player with no socket here (`serve`), its
`summary` or a player's `seat_of`, and opening a new table placed there — is asked of a gateway
of that cell, here, rather than published by the actors to Redis: the actor stays as it is
(its address is asked of it through Ray, by its own cell's gateway), and one path serves both
the lookups and the creations, which need a driver of that cell anyway.

Every request is signed with the fleet's shared secret (the link secret: the Ray token, the same
in every cell of a fleet): an HMAC of its time, path and body, refused 403 when it does not
match or is older than `SIGNED_FOR_S`. The secret itself never travels: the address a request
goes to comes from the registry in Redis, and whoever can write Redis must not collect the Ray
token by publishing a cell of their own. Answers are signed too, bound to the request they
answer: a forged one (a data-plane address that would collect the link's hello, a table said
gone) is not believed. The internal port is never the public one, and on
Kubernetes only the fleet's gateways may reach it (the chart's NetworkPolicy). Only
the four table calls above can be asked (`Serve`, `Endpoint`, `Summary`, `SeatOf` of
actors/protocol.py), each encoded and read back typed by actors/codec.py (`call_json`,
`answer_json`). The gateway that answers uses its own Ray only (`TableCalls.ask_here`): a table
that is not of its cell is answered 409, so a request never bounces between gateways.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Coroutine
from typing import Annotated, Any, TypeVar

import httpx
from fastapi import APIRouter, FastAPI, Header, HTTPException, Request, Response
from pydantic import BaseModel, Field

from actors.cells import CellInfo, CellUnreachable, ForeignTable
from actors.codec import BadMessage, answer_from_json, answer_json, call_from_json, call_json
from actors.directory import Directory, NoRoom, TableGone
from actors.protocol import Serve, TableCall
from engine import DealSpec

log = logging.getLogger("quatro.cells")

AUTH_HEADER = "X-Quatro-Cell-Auth"  # "<epoch ms>:<hex HMAC-SHA256 of ms, path and body>"
SIGNED_FOR_S = 30.0  # a signed request older (or newer) than this is refused: no late replay
CONNECT_S = 2.0
# A call waits through the table's restart there (actors.table_calls.RESTART_WAIT_S), a
# creation for a pooled actor (QUATRO_POOL_WAIT): a little longer, so their answer is not lost.
CALL_S = 45.0
# A lookup (`Endpoint`, `Summary`, `SeatOf`) answers at once from a live cell; one whose gateway
# lives on while its Ray is gone would hold it until Ray gives up, long after the cell's record
# expired and the table could have been moved: give up sooner, and read the registry again.
LOOKUP_S = 10.0
NO_ROOM = "no_room"

A = TypeVar("A")


# At module level: FastAPI reads the routes' annotations from the module's names.
Auth = Annotated[str | None, Header(alias=AUTH_HEADER)]


def signature(secret: str, at_ms: int, path: str, body: bytes) -> str:
    message = f"{at_ms}\n{path}\n".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signed(secret: str, path: str, body: bytes, now_ms: int | None = None) -> str:
    """The auth header of a request of this gateway."""
    at = int(time.time() * 1000) if now_ms is None else now_ms
    return f"{at}:{signature(secret, at, path, body)}"


def answering(request_headers: Any) -> str:
    """What an answer's signature covers besides its body: the request's own signature."""
    return f"answer:{request_headers.get(AUTH_HEADER, '')}"


def verified(secret: str, header: str | None, path: str, body: bytes) -> bool:
    """Whether `header` signs this request with `secret`, recently enough."""
    at, _, given = (header or "").partition(":")
    if not at.isdigit() or not given:
        return False
    if abs(time.time() * 1000 - int(at)) > SIGNED_FOR_S * 1000:
        return False
    return hmac.compare_digest(given.encode(), signature(secret, int(at), path, body).encode())


class CallBody(BaseModel):
    code: str = Field(min_length=1, max_length=16)
    method: str
    args: list[Any] = Field(default_factory=list, max_length=4)


class CreateBody(BaseModel):
    players: int
    config: dict[str, Any]
    host: str = Field(max_length=64)
    name: str = Field(max_length=64)


def config_json(config: dict[str, Any]) -> dict[str, Any]:
    """A new table's configuration as JSON: a test scenario's rigged deals (`DealSpec`, only
    with QUATRO_TEST_HOOKS) as their hands and centre."""
    deals = config.get("deals")
    if not deals:
        return config
    return {**config, "deals": [{"hands": d.hands, "center": d.center} for d in deals]}


def config_from_json(raw: dict[str, Any], test_hooks: bool) -> dict[str, Any]:
    """`config_json` read back (HTTPException 403 for deals without the test hooks here, 422 for
    deals that are not shaped as deals): rigging a deal is a test hook on every gateway,
    whichever one the player asked. The table checks them against the rules when it opens, as
    for a creation of its own cell."""
    deals = raw.get("deals")
    if not deals:
        return raw
    if not test_hooks:
        raise HTTPException(403, "scenarios need QUATRO_TEST_HOOKS=1")
    try:
        specs = tuple(
            DealSpec(hands=tuple(tuple(h) for h in d["hands"]), center=tuple(d["center"]))
            for d in deals
        )
    except (KeyError, TypeError) as exc:
        raise HTTPException(422, f"not a scenario: {exc}") from None
    return {**raw, "deals": specs}


class HttpCells:
    """`actors.cells.RemoteCells` over the other cells' internal ports."""

    def __init__(self, secret: str) -> None:
        self._secret = secret
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        """Made at the first use, on the gateway's event loop."""
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(CALL_S, connect=CONNECT_S))
        return self._client

    async def _post(
        self, cell: CellInfo, path: str, body: dict[str, Any], wait_s: float = CALL_S
    ) -> httpx.Response:
        raw = json.dumps(body, separators=(",", ":")).encode()
        headers = {AUTH_HEADER: signed(self._secret, path, raw), "Content-Type": "application/json"}
        try:
            r = await self.client.post(
                f"http://{cell.internal}{path}",
                content=raw,
                headers=headers,
                timeout=httpx.Timeout(wait_s, connect=CONNECT_S),
            )
        except httpx.HTTPError as exc:
            raise CellUnreachable(f"cell {cell.name} at {cell.internal}: {exc!r}") from exc
        if not verified(self._secret, r.headers.get(AUTH_HEADER), answering(headers), r.content):
            raise CellUnreachable(f"cell {cell.name} at {cell.internal}: unsigned {r.status_code}")
        return r

    async def ask(self, cell: CellInfo, code: str, call: TableCall[A]) -> A:
        body = {"code": code, **call_json(call)}
        wait_s = CALL_S if isinstance(call, Serve) else LOOKUP_S
        r = await self._post(cell, "/cells/call", body, wait_s)
        if r.status_code == 404:
            raise TableGone(code)
        if r.status_code == 409:
            raise ForeignTable(code, cell.name)
        if r.status_code != 200:
            raise CellUnreachable(f"cell {cell.name} answered {r.status_code}: {r.text[:200]}")
        try:
            return answer_from_json(call, r.json()["answer"])
        except (BadMessage, KeyError, TypeError, ValueError) as exc:
            raise CellUnreachable(f"cell {cell.name}: {exc}") from exc

    async def create(
        self, cell: CellInfo, players: int, config: dict[str, Any], host: str, name: str
    ) -> str:
        body = {"players": players, "config": config_json(config), "host": host, "name": name}
        r = await self._post(cell, "/cells/create", body)
        if r.status_code == 503 and r.json().get("detail") == NO_ROOM:
            raise NoRoom()
        if r.status_code != 200:
            raise CellUnreachable(f"cell {cell.name} answered {r.status_code}: {r.text[:200]}")
        return str(r.json()["code"])

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def cells_router(public: FastAPI, secret: str) -> APIRouter:
    """The internal port's routes other cells' gateways call. They run in the internal
    server's thread; the work runs on the public app's loop, where its directory lives."""
    router = APIRouter(prefix="/cells", include_in_schema=False)

    async def check(request: Request, auth: str | None) -> Directory:
        if not verified(secret, auth, request.url.path, await request.body()):
            raise HTTPException(403, "not a gateway of this fleet")
        services = getattr(public.state, "services", None)
        if services is None:
            raise HTTPException(503, "starting")
        directory: Directory = services.directory
        return directory

    async def on_public_loop(coro: Coroutine[Any, Any, Any]) -> Any:
        loop: asyncio.AbstractEventLoop = public.state.loop
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))

    def answer(request: Request, status: int, content: dict[str, Any]) -> Response:
        raw = json.dumps(content, separators=(",", ":")).encode()
        sig = signed(secret, answering(request.headers), raw)
        return Response(raw, status, {AUTH_HEADER: sig}, media_type="application/json")

    @router.post("/call")
    async def call(request: Request, body: CallBody, auth: Auth = None) -> Response:
        directory = await check(request, auth)
        try:
            table_call = call_from_json(body.method, body.args)
        except BadMessage as exc:
            return answer(request, 400, {"detail": str(exc)})
        try:
            found = await on_public_loop(directory.calls.ask_here(body.code, table_call))
        except TableGone:
            return answer(request, 404, {"detail": "no such table"})
        except ForeignTable:
            return answer(request, 409, {"detail": "not a table of this cell"})
        return answer(request, 200, {"answer": answer_json(found)})

    @router.post("/create")
    async def create(request: Request, body: CreateBody, auth: Auth = None) -> Response:
        directory = await check(request, auth)
        try:
            config = config_from_json(body.config, public.state.services.settings.test_hooks)
        except HTTPException as exc:
            return answer(request, exc.status_code, {"detail": exc.detail})
        try:
            code = await on_public_loop(
                directory.opening.create_here(body.players, config, body.host, body.name)
            )
        except NoRoom:
            return answer(request, 503, {"detail": NO_ROOM})
        return answer(request, 200, {"code": str(code)})

    return router
