"""Fixtures for the web client's tests in a real browser (Debian's /usr/bin/chromium).

- `static_url`: the client's own files served as the gateway serves them (`/`, `/t/{code}` →
  index.html; `/static/...`), for tests of the client alone (catalogs, plural rules, layout of
  the home page). Nothing is faked: there is simply no table behind it.
- `stack_url`: a gateway of the real stack shared by the whole test session (`stack` in
  tests/conftest.py, with QUATRO_TEST_HOOKS=1). Set QUATRO_STACK_URL to point the tests at a
  stack that is already running instead (`QUATRO_TEST_HOOKS=1 python -m cluster up`).
"""

from __future__ import annotations

import http.server
import os
import socket
import threading
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
def playwright() -> Iterator[Any]:
    """The one Playwright of the session (a second one cannot start while it runs): tests that
    need a Chromium of their own (other fonts) launch it from here."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (make test installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Any) -> Iterator[Any]:
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
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


@pytest.fixture(scope="session")
def stack_url(request: pytest.FixtureRequest) -> str:
    """The first gateway of the shared `stack` (tests/conftest.py: redis-server, Ray head and
    uvicorn gateways with QUATRO_TEST_HOOKS=1), or QUATRO_STACK_URL when it is set."""
    given = os.environ.get("QUATRO_STACK_URL")
    if given:
        return given.rstrip("/")
    stack = request.getfixturevalue("stack")
    return str(stack.a.url)
