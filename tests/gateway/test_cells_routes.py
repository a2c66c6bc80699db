"""The internal port's cell routes (gateway/cells.py) without Ray: refused without the fleet's
secret, only the four table methods with typed arguments, a table not of this cell answered
409 (never passed on), and none of it on the public app."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import warnings
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi import FastAPI

from actors.cells import ForeignTable
from actors.codec import to_json
from actors.protocol import Act, Outcome
from cluster.settings import Settings
from gateway.app import create_app
from gateway.cells import AUTH_HEADER, SIGNED_FOR_S, answering, cells_router, signed, verified
from gateway.internal import internal_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

SECRET = "s3cret"


class FakeDirectory:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, tuple[Any, ...]]] = []

    async def call_here(self, code: str, method: str, *args: Any) -> Any:
        self.calls.append((code, method, args))
        if code == "ELSEWH":
            raise ForeignTable(code, "b")
        if method == "serve":
            return Outcome(True, None, 0, ())
        return {"host": "127.0.0.1", "port": 20001, "incarnation": "x"}


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
    assert directory.calls == []


def test_only_table_methods_with_typed_arguments(served: tuple[TestClient, FakeDirectory]) -> None:
    client, directory = served
    for method, args in (("stop", []), ("open", []), ("endpoint", [1]), ("serve", [{"t": "x"}])):
        body = {"code": "ABCDEF", "method": method, "args": args}
        assert post(client, "/cells/call", body).status_code == 400, method
    assert directory.calls == []
    r = post(client, "/cells/call", {"code": "ABCDEF", "method": "endpoint", "args": []})
    assert r.status_code == 200
    assert r.json()["answer"]["port"] == 20001
    act = Act.of("c-1", "gw", "p0", "ready", {})
    r = post(client, "/cells/call", {"code": "ABCDEF", "method": "serve", "args": [to_json(act)]})
    assert r.status_code == 200
    assert r.json()["answer"]["ok"] is True
    assert directory.calls[-1][2][0] == act  # the request arrives typed, as sent


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
