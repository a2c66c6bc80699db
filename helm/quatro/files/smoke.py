"""`helm test`: the gateway answers /readyz, then one real game starts end to end — a session,
a 4-seat table, 3 bots, start, and the first round dealt over the WebSocket. Every step goes
through a table actor on a Ray worker, so a green test means Ray, Redis and the gateway work
together, not only that they are up. Standard library plus `websockets` (in the image)."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from typing import Any

from websockets.sync.client import connect

BASE = os.environ["QUATRO_URL"].rstrip("/")
READY_S = float(os.environ.get("QUATRO_READY_TIMEOUT", "300"))
ROUND_S = float(os.environ.get("QUATRO_ROUND_TIMEOUT", "120"))


def call(method: str, path: str, body: object = None, token: str | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read() or b"null")


def wait_ready() -> None:
    deadline = time.monotonic() + READY_S
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(BASE + "/readyz", timeout=5) as answer:
                print("readyz:", answer.read().decode(), flush=True)
                return
        except urllib.error.HTTPError as exc:
            last = f"{exc.code} {exc.read().decode(errors='replace')}"
        except OSError as exc:
            last = repr(exc)
        time.sleep(2)
    sys.exit(f"/readyz never answered 200 in {READY_S:g} s: {last}")


def main() -> None:
    wait_ready()
    session = call("POST", "/api/sessions", {"name": "helm test"})
    token = session["token"]
    table = call("POST", "/api/tables", {"players": 4}, token)
    code = table["code"]
    for seat in (1, 2, 3):
        call("POST", f"/api/tables/{code}/bots", {"seat": seat}, token)
    call("POST", f"/api/tables/{code}/start", None, token)
    print(f"table {code}: 3 bots, started", flush=True)
    ws_url = "ws" + BASE[len("http") :] + "/ws"
    deadline = time.monotonic() + ROUND_S
    with connect(ws_url, open_timeout=30) as ws:
        ws.send(json.dumps({"type": "hello", "id": "h", "token": token, "table": code}))
        while time.monotonic() < deadline:
            frame = json.loads(ws.recv(timeout=max(deadline - time.monotonic(), 0.1)))
            kind = frame.get("type")
            if kind == "error" and frame.get("id") == "h":
                sys.exit(f"hello refused: {frame}")
            if kind == "welcome":
                table = frame["table"]
                if table["phase"] == "signing":
                    ws.send(json.dumps({"type": "ready", "id": "r"}))
                elif table["phase"] != "lobby":
                    # Bots are quick: the round may be dealt before this connection said hello.
                    print(f"round {table['round']} dealt: the cluster plays", flush=True)
                    return
            elif kind == "signing":
                ws.send(json.dumps({"type": "ready", "id": "r"}))
            elif kind == "round":
                print(f"round {frame['round']} dealt: the cluster plays", flush=True)
                return
    sys.exit(f"no round dealt within {ROUND_S:g} s")


if __name__ == "__main__":
    main()
