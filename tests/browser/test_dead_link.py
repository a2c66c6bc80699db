"""A network that dies without closing anything (Chromium's offline emulation: frames are held,
then delivered when it comes back): the player sees "Reconnecting…" within seconds and cannot
play meanwhile, is told the truth about what they pressed, and nothing pressed during the cut
happens once the network is back — on a phone in Arabic (right to left) and on a desktop in
English."""

from __future__ import annotations

import re
import time
from typing import Any

import httpx
import pytest
from playwright.sync_api import ViewportSize, expect

from tests.browser.players import RIGGED_4, call, create_table, join_by_link, new_player
from tests.browser.test_languages import catalog

PHONE: ViewportSize = {"width": 390, "height": 664}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}


def expired_refusals(base: str) -> float:
    text = httpx.get(f"{base}/metrics", timeout=10).text
    found = re.search(r'^quatro_errors_total\{code="expired"\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


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

        host.context.set_offline(True)
        cut = time.monotonic()
        # Pressed at once, while the page still believes it is online: a swap and a Quatro!
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

        host.context.set_offline(False)
        expect(banner).to_have_count(0, timeout=30_000)
        # The held frames reach the server now (those Chromium still sends on the socket the
        # page gave up on: at least the first); it refuses them as expired.
        deadline = time.monotonic() + 20
        while expired_refusals(stack_url) < before + 1 and time.monotonic() < deadline:
            page.wait_for_timeout(200)
        assert expired_refusals(stack_url) >= before + 1
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
