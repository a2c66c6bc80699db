"""Names with joined emoji, typed on a phone in Arabic and on a desktop in English: the whole
name reaches the table (nothing cut in the middle of 👨‍👩‍👧‍👦), while a name hiding an invisible
filler is refused with words saying why, not "the server did not understand"."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import ViewportSize, expect

from tests.browser.players import new_player
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations

PHONE: ViewportSize = {"width": 390, "height": 664}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}

# 24 characters as a reader sees them, 34 code points, 44 UTF-16 units.
FAMILY = "Famille Jean-Baptiste 👨\u200d👩\u200d👧\u200d👦👨\u200d👩\u200d👧"


@pytest.mark.parametrize(
    ("locale", "lang", "view"), [("ar", "ar", PHONE), ("en-US", "en", DESKTOP)]
)
def test_joined_emoji_make_a_name_and_fillers_are_refused_in_words(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    words = catalog(lang)
    p = new_player(browser, "x", locale=locale, viewport=view)
    try:
        page = p.page
        page.goto(f"{stack_url}/")
        field = page.locator("#player-name")
        field.fill("Ana\u3164")
        page.click("button[data-players='4']")
        alert = page.locator(".home .error[role=alert]")
        expect(alert).to_have_text(words["err.name_refused"])
        assert severe_violations(page) == []

        field.fill("")
        field.press_sequentially(FAMILY)
        expect(field).to_have_value(FAMILY)
        page.click("button[data-players='4']")
        page.wait_for_url("**/t/*")
        expect(page.locator(".seat-row.mine[data-seat='0'] .name")).to_have_text(FAMILY)

        # One character too many is refused by the page itself, and said so.
        page.goto(f"{stack_url}/")
        field.fill(FAMILY + "👍🏽")
        page.click("button[data-players='6']")
        expect(alert).to_have_text(words["err.name_long"])
    finally:
        p.close()
