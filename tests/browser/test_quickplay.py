"""Quick play from the home page (issue 13, part 4): "Play now" with a table size lands the player
on a public table's page; a second player pressing it lands at the same table; nobody hosts it
(no bot or start buttons), a clock says when bots fill it, and then the match starts by itself
with bots in the seats left. In Arabic (RTL) on a phone and in English (LTR) on a desktop."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from tests.browser.players import Player, new_player
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations

PHONE: ViewportSize = {"width": 390, "height": 664}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
FILL_MS = 8_000  # QUATRO_QUICK_FILL_S in tests/conftest.py


def play_now(p: Player, base: str, players: int) -> str:
    page = p.page
    page.goto(f"{base}/")
    page.fill("#player-name", p.name)
    page.check(f"[data-quick-size='{players}']")
    page.click("#quick-play")
    page.wait_for_url("**/t/*")
    expect(page.locator(".seat-row.mine")).to_be_visible()
    return page.url.rsplit("/t/", 1)[1]


def nobody_hosts(page: Page) -> None:
    expect(page.locator("#quick-wait")).to_be_visible()
    expect(page.locator("#quick-wait [role='timer']")).to_be_visible()
    expect(page.locator("#start-match")).to_have_count(0)
    expect(page.locator("[data-addbot]")).to_have_count(0)


@pytest.mark.parametrize(
    ("locale", "lang", "view", "players"),
    [("ar", "ar", PHONE, 6), ("en-US", "en", DESKTOP, 4)],
)
def test_play_now_seats_two_players_at_one_public_table_that_bots_fill(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize, players: int
) -> None:
    first = new_player(browser, "Lina", locale=locale, viewport=view)
    second = new_player(browser, "Omar", locale=locale, viewport=view)
    try:
        page = first.page
        page.goto(f"{stack_url}/")
        expect(page.locator("html")).to_have_attribute("dir", "rtl" if lang == "ar" else "ltr")
        expect(page.locator("#quick-play")).to_be_visible()
        assert severe_violations(page) == []
        code = play_now(first, stack_url, players)
        nobody_hosts(page)
        assert play_now(second, stack_url, players) == code
        nobody_hosts(second.page)
        expect(page.locator(".seat-row[data-kind='human']")).to_have_count(2)
        # The fill clock runs out: bots take the other seats and the match starts by itself.
        for p in (first, second):
            expect(p.page.locator(".signing")).to_be_visible(timeout=FILL_MS + 20_000)
            # The others around the ring: the other player, and bots in every seat left.
            expect(p.page.locator(".ring .seat")).to_have_count(players - 1)
            expect(p.page.locator(".ring .seat .bot-tag")).to_have_count(players - 2)
        # The bots' level is in sight, and says that nobody chooses it here.
        page.click(".level-chip summary")
        expect(page.locator(".level-where")).to_contain_text(catalog(lang)["level.wherePublic"])
        assert severe_violations(page) == []
    finally:
        second.close()
        first.close()
