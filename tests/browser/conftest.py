"""Fixtures for the web client's tests in a real browser (Debian's /usr/bin/chromium).

- `static_url`: the client's own files served as the gateway serves them (`/`, `/t/{code}` →
  index.html; `/static/...`), for tests of the client alone (catalogs, plural rules, layout of
  the home page). Nothing is faked: there is simply no table behind it.
- `stack_url`: the whole stack (`python -m cluster up`: Ray head, redis-server, gateway) with
  QUATRO_TEST_HOOKS=1, started once per session on a free loopback port and stopped by PID.
  Set QUATRO_STACK_URL to point the tests at a stack that is already running instead.
"""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "gateway" / "static"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STACK_START_TIMEOUT_S = 120.0

pytestmark = pytest.mark.browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


class _StaticHandler(http.server.SimpleHTTPRequestHandler):
    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0].split("#", 1)[0]
        if path.startswith("/static/"):
            return str(STATIC / path[len("/static/") :])
        return str(STATIC / "index.html")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="session")
def static_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _StaticHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _wait_up(url: str, proc: subprocess.Popen[bytes] | None, log: Path) -> None:
    deadline = time.monotonic() + STACK_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the stack exited early:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/emojis", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"the stack did not come up in time:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def stack_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    given = os.environ.get("QUATRO_STACK_URL")
    if given:
        yield given.rstrip("/")
        return
    port = free_port()
    log = tmp_path_factory.mktemp("stack") / "stack.log"
    env = {**os.environ, "PORT": str(port), "QUATRO_TEST_HOOKS": "1"}
    env.pop("RAY_ADDRESS", None)
    env.pop("REDIS_URL", None)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cluster", "up"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(url, proc, log)
        yield url
    finally:
        # SIGTERM lets `cluster up` stop its own Ray head and redis-server by their PIDs.
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
