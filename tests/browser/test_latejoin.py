"""Joining late (issue 13, part 2): a friend who opens the invite link after the start, while
bots hold seats, watches, asks for a bot's seat, the host allows it, and at the next round's
signing the friend's page turns into that seat's — with the team's score, then their own hand.
In Arabic on a phone and in English on a desktop."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import ViewportSize, expect

from tests.browser.players import CALM, DESKTOP, PHONE, call, new_player, start_with_bots
from tests.browser.test_match import severe_violations


@pytest.mark.parametrize(
    ("locale", "lang", "view"), [("ar", "ar", PHONE), ("en-US", "en", DESKTOP)]
)
def test_a_friend_who_comes_late_takes_a_bots_seat_at_the_next_round(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    host = new_player(browser, "Ana", scenario=CALM)
    friend = new_player(browser, "Rosa", locale=locale, viewport=view)
    try:
        # Asking is the lobby's default for joining late.
        code = start_with_bots(
            host, stack_url, lambda lobby: expect(lobby.locator("#late-join")).to_have_value("ask")
        )

        page = friend.page
        page.goto(f"{stack_url}/t/{code}")
        expect(page.locator("html")).to_have_attribute("dir", "rtl" if lang == "ar" else "ltr")
        # Not "every seat is taken": bots hold three, and watching is the way to one.
        expect(page.locator("[data-late='yes']")).to_be_visible()
        page.fill("#player-name", friend.name)  # the name the seat will carry
        page.click("#watch-btn")
        expect(page.locator(".table-page.watching")).to_be_visible()
        expect(page.locator(".claim-seat")).to_have_count(3)
        assert severe_violations(page) == []
        page.click("#claim-1")
        expect(page.locator(".late-join[data-claim='1'][data-granted='no']")).to_be_visible()
        expect(page.locator(".claim-seat")).to_have_count(0)

        # The host hears of it and allows it; the friend is told the seat is theirs next round.
        expect(host.page.locator(".claim-requests li[data-seat='1']")).to_contain_text("Rosa")
        assert severe_violations(host.page) == []
        host.page.click("#allow-claim-1")
        expect(page.locator(".late-join[data-claim='1'][data-granted='yes']")).to_be_visible()
        expect(host.page.locator(".claim-requests li[data-approved='yes']")).to_be_visible()
        # Never mid-round: still watching, still no hand.
        expect(page.locator(".hand-card")).to_have_count(0)

        # The host's wrong Quatro! scores for team 1 (seat 1's), then skips the pause.
        call(host.page, "#call-quatro")
        host.page.click("#start-now")

        # The next signing: the friend's page is seat 1's, with the team's point.
        seated = page.locator(".table-page[data-seat='1']")
        expect(seated).to_be_visible()
        expect(page.locator(".table-page.watching")).to_have_count(0)
        expect(page.locator(".score.ours .points")).to_have_attribute("data-score", "1")
        expect(page.locator(".me[data-seat='1']")).to_contain_text("Rosa")
        expect(host.page.locator(".claim-requests")).to_have_count(0)
        page.locator(".signing .emoji").first.click()
        page.click("#ready-btn")
        host.page.click("#ready-btn")
        expect(page.locator(".hand-card")).to_have_count(4)
        assert severe_violations(page) == []

        # A reload keeps the seat: the page says hello seated, not watching.
        page.reload()
        expect(seated).to_be_visible()
        expect(page.locator(".hand-card")).to_have_count(4)
    finally:
        friend.close()
        host.close()
