"""The lobby on a phone (issue 33, point 4): the host's "Start the match" stays on screen however
far the seats and the settings are scrolled, on the 390×844 phone the issue was found on and on a
small one, in English, Haitian Creole and Arabic; and one tap on "Fill with bots" puts a bot in
every empty seat — one REST call, `POST /api/tables/{code}/fill` — leaving alone the seat a
guest took, which the guest sees happen."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Request, ViewportSize, expect

from tests.browser.players import SMALL_PHONE, TALL_PHONE, create_table, join_by_link, new_player
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations
from tests.browser.test_one_screen import off_screen

# Bots that never act: the match only has to start.
IDLE = {"seed": 3, "bot_policy": "idle"}
SCROLLS = {
    "top": "0",
    "middle": "document.documentElement.scrollHeight / 2",
    "bottom": "document.documentElement.scrollHeight",
}


@pytest.mark.parametrize(
    ("locale", "lang", "view"),
    [("en-US", "en", TALL_PHONE), ("ht", "ht", SMALL_PHONE), ("ar", "ar", TALL_PHONE)],
)
def test_start_stays_on_screen_and_one_tap_fills_the_empty_seats(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    words = catalog(lang)
    host = new_player(browser, "Rosa", locale=locale, scenario=IDLE, viewport=view, touch=True)
    guest = new_player(browser, "Wòdlin", locale=locale, viewport=view, touch=True)
    try:
        code = create_table(host, stack_url, 6)
        join_by_link(guest, stack_url, code, 3)
        page = host.page
        start = page.locator("#start-match")
        fill = page.locator("#fill-bots")
        expect(start).to_have_text(words["lobby.start"])
        expect(fill).to_have_text(words["lobby.fillBots"])
        free = {"en": "other", "ht": "other", "ar": "few"}[lang]  # four seats
        expect(page.locator("#lobby-bar [role=status]")).to_have_text(
            words["lobby.seatsFree"][free].replace("{n}", "4")
        )
        # The settings alone are taller than the screen: wherever the host scrolls, the next
        # steps are in view, uncovered, and nothing makes the page wider than the phone.
        assert page.evaluate("document.documentElement.scrollHeight") > view["height"]
        for where, y in SCROLLS.items():
            page.evaluate(f"window.scrollTo(0, {y})")
            assert off_screen(page, "#start-match, #fill-bots", view) == [], where
        assert page.evaluate("document.documentElement.scrollWidth") <= view["width"]
        expect(start).to_be_disabled()

        calls: list[str] = []

        def lobby_call(request: Request) -> None:
            if f"/api/tables/{code}/" in request.url:
                calls.append(f"{request.method} {request.url.split(code, 1)[1]}")

        page.on("request", lobby_call)
        page.evaluate("window.scrollTo(0, 0)")
        fill.tap()
        for p in (host, guest):
            expect(p.page.locator(".seat-row[data-kind='bot']")).to_have_count(4)
            expect(p.page.locator(".seat-row[data-seat='3'] .name")).to_have_text("Wòdlin")
        assert calls == ["POST /fill"]
        expect(fill).to_have_count(0)
        expect(page.locator("#lobby-bar [role=status]")).to_have_text(words["lobby.full"])
        expect(start).to_be_enabled()
        assert off_screen(page, "#start-match", view) == []
        assert severe_violations(page) == []

        start.tap()
        expect(page.locator("#ready-btn")).to_be_visible()
    finally:
        host.close()
        guest.close()
