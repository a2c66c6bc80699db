"""A network that dies without closing anything (frames are held, then delivered late): the
player sees "Reconnecting…" within seconds and cannot play meanwhile, is told the truth about
what they pressed, and nothing pressed during the cut happens once the frames do arrive — on a
phone in Arabic (right to left) and on a desktop in English.

A socket the page opens during the cut opens and then carries nothing: the page gives it up at
its welcome deadline and tries again, so that "Reconnecting…" never lasts for good.

The cut is the test's own: the table's socket runs through Playwright (`page.route_web_socket`),
which stops passing anything either way, keeps what the page sends, and hands it to the server
late, on the same connection, before the page's new socket is let through. An earlier version
used Chromium's offline emulation and counted on Chromium flushing a socket the page had given
up on once the network came back; on a loaded machine it sometimes dropped them instead
(`expired` never counted), which said nothing about the game.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, ViewportSize, WebSocketRoute, expect

from tests.browser.players import RIGGED_4, call, create_table, join_by_link, new_player
from tests.browser.test_languages import catalog

PHONE: ViewportSize = {"width": 390, "height": 664}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}


def expired_refusals(base: str) -> float:
    text = httpx.get(f"{base}/metrics", timeout=10).text
    found = re.search(r'^quatro_errors_total\{code="expired"\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


class DeadLink:
    """The page's table sockets, passed through until `cut`; then nothing passes either way and
    the page's frames are kept. `deliver` sends the kept commands to the server on the socket
    they were written to; `mend` lets the page's next sockets through again."""

    def __init__(self, page: Page) -> None:
        self.cut = False
        self.silent = 0  # sockets the page opened during the cut (never welcomed)
        self.held: list[tuple[WebSocketRoute, str]] = []
        page.route_web_socket(re.compile(r"/ws(\?|$)"), self._route)

    def _route(self, ws: WebSocketRoute) -> None:
        if self.cut:
            # A new socket during the cut opens and carries nothing (a proxy's side of a cut):
            # the page must give it up by itself (connection.js, WELCOME_MS) once mended.
            self.silent += 1
            return
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            if not self.cut:
                server.send(message)
            elif isinstance(message, str) and json.loads(message).get("type") != "ping":
                self.held.append((server, message))

        def from_server(message: str | bytes) -> None:
            if not self.cut:
                ws.send(message)

        ws.on_message(from_page)
        server.on_message(from_server)
        # A socket the page closes during the cut stays open towards the server (a dead link
        # closes nothing): its held frames still go there, late.
        ws.on_close(lambda code, reason: None if self.cut else server.close())

    def deliver(self) -> int:
        for server, message in self.held:
            server.send(message)
        return len(self.held)

    def mend(self) -> None:
        self.cut = False
        for server, _ in self.held:
            server.close()


@pytest.mark.parametrize(
    ("locale", "lang", "view"), [("ar", "ar", PHONE), ("en-US", "en", DESKTOP)]
)
def test_actions_pressed_into_a_dead_link_never_happen(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    words = catalog(lang)
    host = new_player(browser, "Rosa", locale=locale, scenario=RIGGED_4, viewport=view)
    others = [new_player(browser, name) for name in ("Bruno", "Chloé", "Dieudonné")]
    players = [host, *others]
    link = DeadLink(host.page)
    try:
        code = create_table(host, stack_url, 4)
        for seat, p in enumerate(others, start=1):
            join_by_link(p, stack_url, code, seat)
        host.page.click("#start-match")
        for p in players:
            p.page.click("#ready-btn")
        for p in players:
            expect(p.page.locator(".hand-card")).to_have_count(4)
        page = host.page
        before = expired_refusals(stack_url)
        centre = page.locator(".slot .card").evaluate_all("els => els.map(e => e.dataset.rank)")

        link.cut = True
        cut = time.monotonic()
        # Pressed at once, while the page still believes the link alive: a swap and a Quatro!
        # (Rosa holds no carré, so a call that landed would be a wrong one, a point lost).
        page.locator(".hand-card[data-rank='K']").first.click()
        page.click(".slot[data-slot='0']")
        call(page, "#call-quatro")
        banner = page.locator(".banner[data-conn]")
        expect(banner).to_be_visible(timeout=8_000)
        assert time.monotonic() - cut < 8
        expect(banner).to_contain_text(words["conn.lost"])
        expect(page.locator("#call-quatro")).to_be_disabled()
        expect(page.locator(".hand-card").first).to_be_disabled()
        # Told once the actions' expiry has passed: not "not sent" (they left), but unconfirmed.
        told = page.locator(".toast").filter(has_text=words["err.unconfirmed"])
        expect(told.first).to_be_visible(timeout=8_000)
        expect(page.locator(".toast").filter(has_text=words["err.offline"])).to_have_count(0)

        # The page has already tried a new socket, which opened and stays silent.
        deadline = time.monotonic() + 10
        while not link.silent and time.monotonic() < deadline:
            page.wait_for_timeout(100)
        assert link.silent

        # The held frames reach the server now, late, on their own socket: it refuses each as
        # expired. Then the page's next socket gets through, and the banner goes.
        sent = link.deliver()
        assert sent == 2, link.held  # the swap and the Quatro!
        deadline = time.monotonic() + 20
        while expired_refusals(stack_url) < before + sent and time.monotonic() < deadline:
            page.wait_for_timeout(200)
        assert expired_refusals(stack_url) >= before + sent
        link.mend()
        # The silent socket is given up at its welcome deadline, and the next one is welcomed.
        expect(banner).to_have_count(0, timeout=30_000)
        # Nothing happened: still the round's play, no score, the centre as it was.
        for p in players:
            expect(p.page.locator(".table-page")).to_have_attribute("data-phase", "playing")
            expect(p.page.locator(".scores .points[data-score='0']")).to_have_count(2)
        after = page.locator(".slot .card").evaluate_all("els => els.map(e => e.dataset.rank)")
        assert after == centre
        expect(page.locator("#call-quatro")).to_be_enabled()
    finally:
        for p in players:
            p.close()
