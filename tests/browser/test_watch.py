"""Watching a match from the invite link (issue 13, part 1): a friend who arrives after the start
watches instead of being turned away — the whole ring, the centre and every swap, never a hand —
in Arabic on a phone and in English on a desktop, and keeps watching over a reload; everyone sees
how many watch, and the host can close the table to watchers mid-match."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import ViewportSize, expect

from tests.browser.players import (
    CALM,
    DESKTOP,
    PHONE,
    new_player,
    start_with_bots,
    swap_by_taps,
)
from tests.browser.test_match import severe_violations


@pytest.mark.parametrize(
    ("locale", "lang", "view"), [("ar", "ar", PHONE), ("en-US", "en", DESKTOP)]
)
def test_a_friend_who_comes_late_watches_the_match(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    host = new_player(browser, "Ana", scenario=CALM)
    friend = new_player(browser, "Rosa", locale=locale, viewport=view)
    try:
        code = start_with_bots(host, stack_url)

        page = friend.page
        page.goto(f"{stack_url}/t/{code}")
        expect(page.locator("html")).to_have_attribute("dir", "rtl" if lang == "ar" else "ltr")
        page.click("#watch-btn")
        expect(page.locator(".table-page.watching")).to_be_visible()
        # The whole ring, the centre as dealt, and no hand: nothing here belongs to a seat.
        expect(page.locator(".ring .seat")).to_have_count(4)
        expect(page.locator(".slot .card")).to_have_count(4)
        ranks = page.locator(".slot .card").evaluate_all("els => els.map(e => e.dataset.rank)")
        assert ranks == ["A", "A", "J", "10"]
        expect(page.locator(".hand-card")).to_have_count(0)
        expect(page.locator(".our-sign")).to_have_count(0)
        expect(page.locator("#stop-watching")).to_be_visible()
        assert severe_violations(page) == []

        # A swap at the table shows in the watcher's centre.
        swap_by_taps(host.page, "K", 0)
        expect(page.locator(".slot[data-slot='0'] .card")).to_have_attribute("data-rank", "K")

        # A reload watches again (the tab remembers), with the centre as it now stands.
        page.reload()
        expect(page.locator(".table-page.watching")).to_be_visible()
        expect(page.locator(".slot[data-slot='0'] .card")).to_have_attribute("data-rank", "K")
        expect(page.locator(".hand-card")).to_have_count(0)

        # Everyone sees how many watch; the host closes the table to watchers mid-match, and the
        # watcher is told so and cannot come back until it opens again.
        for p in (host.page, page):
            expect(p.locator(".watch-count")).to_have_attribute("data-count", "1", timeout=15_000)
        host.page.locator(".watch-menu summary").click()
        host.page.locator("#watchers-live-toggle").uncheck()
        expect(page.locator("#watch-closed")).to_be_visible(timeout=15_000)
        expect(page.locator("#watch-btn")).to_have_count(0)
        expect(host.page.locator(".watch-count")).to_have_attribute(
            "data-count", "0", timeout=15_000
        )
        host.page.locator("#watchers-live-toggle").check()
        page.click("#watch-btn", timeout=15_000)
        expect(page.locator(".table-page.watching")).to_be_visible()
        assert severe_violations(host.page) == []

        page.click("#stop-watching")
        expect(page.locator("#watch-btn")).to_be_visible()
    finally:
        friend.close()
        host.close()
