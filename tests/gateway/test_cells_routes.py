"""The internal port's cell routes (gateway/cells.py) without Ray: refused without the fleet's
secret, only the four table calls with typed arguments, a table not of this cell answered
409 (never passed on), and none of it on the public app; and the calls' JSON, as gateways of
every release send it."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import warnings
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from actors.cells import CellInfo, ForeignTable
from actors.codec import (
    BadMessage,
    answer_from_json,
    answer_json,
    call_from_json,
    call_json,
    to_json,
)
from actors.protocol import (
    Act,
    Address,
    Endpoint,
    Outcome,
    Overview,
    Probe,
    Seated,
    SeatOf,
    Serve,
    Summary,
    TableCall,
    answer_type,
)
from cluster.settings import Settings
from gateway.app import create_app
from gateway.cells import AUTH_HEADER, SIGNED_FOR_S, answering, cells_router, signed, verified
from gateway.internal import internal_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SECRET = "s3cret"


ADDRESS = Address("127.0.0.1", 20001, "x")


class FakeCalls:
    """`TableCalls.ask_here` of a cell with one table, `ELSEWH` being another cell's."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, TableCall[Any]]] = []

    async def ask_here(self, code: str, call: TableCall[Any]) -> Any:
        self.asked.append((code, call))
        if code == "ELSEWH":
            raise ForeignTable(code, "b")
        if isinstance(call, Serve):
            return Outcome(True, None, 0, ())
        return ADDRESS


class FakeDirectory:
    def __init__(self) -> None:
        self.calls = FakeCalls()


@pytest.fixture
def served() -> Iterator[tuple[TestClient, FakeDirectory]]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    public = FastAPI()
    directory = FakeDirectory()
    public.state.services = SimpleNamespace(directory=directory)
    public.state.loop = loop
    app = FastAPI()
    app.include_router(cells_router(public, SECRET))
    try:
        yield TestClient(app), directory
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def post(
    client: TestClient, path: str, body: dict[str, Any], secret: str = SECRET, age_s: float = 0
) -> Any:
    raw = json.dumps(body).encode()
    at = int((time.time() - age_s) * 1000)
    headers = {AUTH_HEADER: signed(secret, path, raw, at), "Content-Type": "application/json"}
    return client.post(path, content=raw, headers={**headers, "Host": "localhost"})


def test_no_signature_no_call(served: tuple[TestClient, FakeDirectory]) -> None:
    client, directory = served
    body = {"code": "ABCDEF", "method": "endpoint", "args": []}
    assert client.post("/cells/call", json=body).status_code == 403
    assert post(client, "/cells/call", body, secret="nope").status_code == 403
    assert post(client, "/cells/call", body, age_s=SIGNED_FOR_S + 5).status_code == 403  # late
    raw = json.dumps(body).encode()
    other = {
        AUTH_HEADER: signed(SECRET, "/cells/call", raw + b" "),
        "Content-Type": "application/json",
    }
    assert (
        client.post("/cells/call", content=raw, headers=other).status_code == 403
    )  # not this body
    create = {"players": 4, "config": {}, "host": "p", "name": "n"}
    assert client.post("/cells/create", json=create).status_code == 403
    assert directory.calls.asked == []


def test_only_table_calls_with_typed_arguments(served: tuple[TestClient, FakeDirectory]) -> None:
    client, directory = served
    refused: tuple[tuple[str, list[Any]], ...] = (
        ("stop", []),
        ("open", []),
        ("ping", []),
        ("endpoint", [1]),
        ("seat_of", [3]),
        ("serve", [{"t": "x"}]),
        ("serve", [{"t": "act"}]),
    )
    for method, args in refused:
        body = {"code": "ABCDEF", "method": method, "args": args}
        assert post(client, "/cells/call", body).status_code == 400, method
    assert directory.calls.asked == []
    r = post(client, "/cells/call", {"code": "ABCDEF", "method": "endpoint", "args": []})
    assert r.status_code == 200
    assert r.json()["answer"] == {"host": "127.0.0.1", "port": 20001, "incarnation": "x"}
    act = Act.of("c-1", "gw", "p0", "ready", {})
    r = post(client, "/cells/call", {"code": "ABCDEF", "method": "serve", "args": [to_json(act)]})
    assert r.status_code == 200
    assert r.json()["answer"]["ok"] is True
    assert directory.calls.asked[-1] == ("ABCDEF", Serve(act))  # the request arrives typed


def test_a_table_call_crosses_as_every_release_sends_it() -> None:
    """The shapes of the hop before typed calls: `{"method", "args"}`, and answers read by key
    (an address, a seat, a summary as REST answers it), so cells of two releases still talk."""
    act = Act.of("c-1", "gw", "p0", "ready", {})
    assert call_json(Serve(act)) == {"method": "serve", "args": [to_json(act)]}
    assert call_json(SeatOf("p0")) == {"method": "seat_of", "args": ["p0"]}
    assert call_json(Endpoint()) == {"method": "endpoint", "args": []}
    assert call_json(Summary()) == {"method": "summary", "args": []}
    with pytest.raises(BadMessage):
        call_json(Probe())  # only the four calls cross
    summary = {"code": "ABCDEF", "players": 4, "phase": "lobby", "seats": []}
    answers: list[tuple[TableCall[Any], Any, Any]] = [
        (Endpoint(), ADDRESS, {"host": "127.0.0.1", "port": 20001, "incarnation": "x"}),
        (SeatOf("p0"), Seated(2, 6, "playing"), {"seat": 2, "players": 6, "phase": "playing"}),
        (Summary(), Overview.of(summary), summary),
        (Endpoint(), None, None),
        (Serve(act), Outcome(True, None, 0, ()), to_json(Outcome(True, None, 0, ()))),
    ]
    for call, answer, wire in answers:
        assert isinstance(answer, answer_type(call))
        sent = json.loads(json.dumps(answer_json(answer)))
        assert sent == wire, call
        assert answer_from_json(call, sent) == answer
        assert call_from_json(**call_json(call)) == call
    with pytest.raises(BadMessage):
        answer_from_json(SeatOf("p0"), {"host": "127.0.0.1"})  # an answer to another call
    with pytest.raises(BadMessage):
        answer_from_json(Serve(act), {"host": "127.0.0.1"})


def test_answers_are_signed_for_their_request(served: tuple[TestClient, FakeDirectory]) -> None:
    client, _ = served
    r = post(client, "/cells/call", {"code": "ABCDEF", "method": "endpoint", "args": []})
    asked = r.request.headers
    assert verified(SECRET, r.headers[AUTH_HEADER], answering(asked), r.content)
    assert not verified(SECRET, r.headers[AUTH_HEADER], answering(asked), r.content + b" ")
    assert not verified(SECRET, r.headers[AUTH_HEADER], "answer:another request", r.content)
    assert not verified("another secret", r.headers[AUTH_HEADER], answering(asked), r.content)


def test_a_table_of_another_cell_is_not_passed_on(served: tuple[TestClient, FakeDirectory]) -> None:
    client, _ = served
    body = {"code": "ELSEWH", "method": "summary", "args": []}
    assert post(client, "/cells/call", body).status_code == 409


async def test_another_cells_answer_is_read_typed(
    served: tuple[TestClient, FakeDirectory],
) -> None:
    """`HttpCells.ask` against these routes: the call crosses signed, the answer comes back
    as the call's type. Async, so that it runs on a loop of its own (tests/gateway/conftest.py):
    asyncio.run here failed once the browser tests' Playwright held the main thread's loop."""
    from gateway.cells import HttpCells

    client, _ = served

    async def over_http() -> Any:
        cells = HttpCells(SECRET)
        cells._client = httpx.AsyncClient(transport=httpx.ASGITransport(client.app))
        info = CellInfo("b", 10, 10, 0, "cell-b")
        try:
            return await cells.ask(info, "ABCDEF", Endpoint())
        finally:
            await cells.close()

    assert await over_http() == ADDRESS


def test_the_cell_routes_are_internal_only() -> None:
    settings = Settings(internal_port=9999, cell="a")
    public = create_app(settings)
    body = {"code": "ABCDEF", "method": "endpoint", "args": []}

    def status(app: FastAPI) -> int:
        return int(post(TestClient(app), "/cells/call", body).status_code)

    assert status(public) == 404  # the public port: no such route, signed or not
    assert status(internal_app(public, settings)) == 404  # no cells: none either
    assert status(internal_app(public, settings, SECRET)) == 503  # there ("starting")


def test_a_scenarios_rigged_deals_cross_to_another_cell_only_with_its_test_hooks() -> None:
    """A creation placed in another cell sends its configuration as JSON: a test scenario's
    deals (DealSpec) failed to encode, and the creation answered 500 (tests/cluster/test_cells
    when placement sent the rigged table across)."""
    from fastapi import HTTPException

    from engine import DealSpec
    from gateway.cells import config_from_json, config_json

    deal = DealSpec(hands=(("A", "K", "Q", "J"),) * 4, center=("2", "3", "4", "5"))
    config = {"seed": 7, "time_scale": 1.0, "deals": (deal, deal)}
    wire = json.loads(json.dumps(config_json(config)))
    assert config_from_json(wire, test_hooks=True) == config
    assert config_from_json({"seed": 3}, test_hooks=False) == {"seed": 3}
    with pytest.raises(HTTPException) as refused:
        config_from_json(wire, test_hooks=False)
    assert refused.value.status_code == 403
    with pytest.raises(HTTPException) as malformed:
        config_from_json({"seed": 1, "deals": [{"hands": 3}]}, test_hooks=True)
    assert malformed.value.status_code == 422
