"""A reshuffle vote that asks a player to answer is on their screen, wherever they are scrolled,
before its result is (issue 33, point 4: "Vote refused" had come with no vote seen). On a small
phone the table is taller than the screen; a player scrolled down to their hand and the calls
has the vote's buttons in view and uncovered without scrolling back up — in Haitian Creole and
Arabic — and the toast of its result comes after."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.players import RIGGED_4, SMALL_PHONE, create_table, join_by_link, new_player
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations

# Idle bots, and a clock four times quicker: the vote runs out, unanswered, after 5 s.
QUICK = {**RIGGED_4, "bot_policy": "idle"}

# From now on, the first moment (ms) the vote's buttons are wholly on screen and uncovered, and
# the first moment a toast says `result`; checked at every frame.
WATCH = """(result) => {
  window.seen = { vote: null, result: null };
  const uncovered = (el) => {
    const r = el.getBoundingClientRect();
    if (r.top < 0 || r.bottom > innerHeight || r.left < 0 || r.right > innerWidth) return false;
    return el.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
  };
  const look = () => {
    const now = performance.now();
    const buttons = [...document.querySelectorAll("[data-vote]")];
    if (window.seen.vote === null && buttons.length === 2 && buttons.every(uncovered)) {
      window.seen.vote = now;
    }
    const toasts = [...document.querySelectorAll(".toast")].map((el) => el.textContent);
    if (window.seen.result === null && toasts.some((text) => text.includes(result))) {
      window.seen.result = now;
    }
    requestAnimationFrame(look);
  };
  look();
}"""


def seen(page: Page) -> dict[str, float | None]:
    found: dict[str, float | None] = page.evaluate("window.seen")
    return found


@pytest.mark.parametrize(("locale", "lang"), [("ht", "ht"), ("ar", "ar")])
def test_a_vote_asking_for_an_answer_is_on_screen_before_its_result(
    browser: Any, stack_url: str, locale: str, lang: str
) -> None:
    words = catalog(lang)
    host = new_player(
        browser, "Ana", locale=locale, scenario=QUICK, viewport=SMALL_PHONE, touch=True
    )
    guest = new_player(browser, "Wòdlin", locale=locale, viewport=SMALL_PHONE, touch=True)
    try:
        code = create_table(host, stack_url, 4)
        join_by_link(guest, stack_url, code, 1)
        host.page.locator("#fill-bots").tap()
        host.page.locator("#start-match").tap()
        for p in (host, guest):
            p.page.locator("#ready-btn").tap()
        for p in (host, guest):
            expect(p.page.locator(".hand-card")).to_have_count(4)

        # The guest plays scrolled down to their hand and the calls, the vote's place above.
        page = guest.page
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        assert page.evaluate("scrollY") > 0, "the table fits this phone: nothing to scroll"
        page.evaluate(WATCH, words["vote.failed"])

        host.page.locator(".vote-btn").tap()
        page.wait_for_function("() => window.seen.vote !== null")
        expect(page.locator("[data-vote='yes']")).to_have_text(words["vote.accept"])
        assert page.evaluate("scrollY") > 0  # it came to the player, not the player to it
        assert severe_violations(page) == []

        # Unanswered, the vote runs out (R19: silence is refusal); its result comes after it.
        expect(page.locator("[data-vote]")).to_have_count(0, timeout=15_000)
        page.wait_for_function("() => window.seen.result !== null")
        when = seen(page)
        assert when["vote"] is not None
        assert when["result"] is not None
        assert when["vote"] < when["result"], when
    finally:
        host.close()
        guest.close()
