"""Fixtures for the web client's tests in a real browser (Debian's /usr/bin/chromium).

- `static_url`: the client's own page and files served by the gateway's own code
  (gateway.app.add_web_client: `/`, `/t/{code}`, `/static/...`, `/sw.js`), for tests of the
  client alone (catalogs, plural rules, layout of the home page). Nothing is faked: there is
  simply no table behind it.
- `stack_url`: a gateway of the real stack shared by the whole test session (`stack` in
  tests/conftest.py, with QUATRO_TEST_HOOKS=1). Set QUATRO_STACK_URL to point the tests at a
  stack that is already running instead (`QUATRO_TEST_HOOKS=1 python -m cluster up`).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser.bot_match import FinishedMatch, finished_bot_match

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


def client_app(root: Path = STATIC) -> Any:
    """The gateway's web client alone (page routes, the files under `root`, security headers):
    no Ray, no Redis, no /api (404)."""
    from fastapi import FastAPI

    from gateway.app import add_web_client
    from gateway.security_headers import SecurityHeaders

    app = FastAPI()
    add_web_client(app, root)
    app.add_middleware(SecurityHeaders)
    return app


@contextmanager
def serving_client(root: Path = STATIC) -> Iterator[str]:
    """`client_app(root)` on a free loopback port, in a thread of this process."""
    import uvicorn

    config = uvicorn.Config(
        client_app(root), host="127.0.0.1", port=free_port(), log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the client's server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def static_url() -> Iterator[str]:
    with serving_client() as url:
        yield url


@pytest.fixture(scope="session")
def stack_url(request: pytest.FixtureRequest) -> str:
    """The first gateway of the shared `stack` (tests/conftest.py: redis-server, Ray head and
    uvicorn gateways with QUATRO_TEST_HOOKS=1), or QUATRO_STACK_URL when it is set."""
    given = os.environ.get("QUATRO_STACK_URL")
    if given:
        return given.rstrip("/")
    stack = request.getfixturevalue("stack")
    return str(stack.a.url)


@pytest.fixture(scope="session")
def finished_match(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FinishedMatch]:
    """One finished bot match for the session's tests that only read what it left (its
    end-of-match screen, its replay). Opened through a gateway of the shared stack whose
    finished tables stay an hour (`QUATRO_OVER_IDLE=3600`; the stack's own keep them 60 s), so
    that its table still shows its end to the last of them, minutes of other tests later; its
    pages are then visited through `stack_url` as any other. With QUATRO_STACK_URL, played
    there."""
    given = os.environ.get("QUATRO_STACK_URL")
    if given:
        yield FinishedMatch(*finished_bot_match(given.rstrip("/")))
        return
    stack = request.getfixturevalue("stack")
    gw = stack.gateway(tmp_path_factory.mktemp("gateway-matches"), QUATRO_OVER_IDLE="3600")
    try:
        gw.wait_ready()
        yield FinishedMatch(*finished_bot_match(gw.url))
    finally:
        gw.stop()
