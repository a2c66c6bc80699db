"""The table on the phone issue 33 was found on (390×844, touch), in English, Haitian Creole and
Arabic, at eight seats (the narrowest): the round's number is on screen during play, and the
seats' names are cut gracefully in every script — a bot's ("Bot 3", "Robo 3", "روبوت 3") never,
an Arabic or a Creole name of two words shown whole on two lines, a name too long for two lines
ended with an ellipsis, whole in the seat's accessible name and on screen once the seat is
tapped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.players import TALL_PHONE, Player, create_table, new_player
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations
from tests.browser.test_one_screen import STILL, seats_over_centre

# Seat: name. The host sits in seat 0; bots take 2, 4, 6 and 7.
GUESTS = {
    1: "روزالين الحمداني",
    3: "Wòdlin Desalin",
    5: "Bartholomew-Jean Pierre",
}
TOO_LONG = 5
LANGS = {"en": "en-US", "ht": "ht", "ar": "ar"}

# How a name element is drawn: lines shown, and whether some of it is cut off.
SHOWN = """(el) => {
  const style = getComputedStyle(el);
  return {
    lines: Math.round(el.getBoundingClientRect().height / parseFloat(style.lineHeight)),
    cut: el.scrollHeight > el.clientHeight + 1 || el.scrollWidth > el.clientWidth + 1,
  };
}"""


def shown(name: Locator) -> dict[str, Any]:
    found: dict[str, Any] = name.evaluate(SHOWN)
    return found


@pytest.fixture(scope="module")
def hosts(browser: Any, stack_url: str) -> Iterator[dict[str, Player]]:
    """One table of eight per language, its host on a phone; the guests sit down over REST."""
    made: dict[str, Player] = {}
    try:
        for lang, locale in LANGS.items():
            host = new_player(
                browser, "Ana", locale=locale, scenario=STILL, viewport=TALL_PHONE, touch=True
            )
            made[lang] = host
            code = create_table(host, stack_url, 8)
            with httpx.Client(base_url=stack_url, timeout=30) as c:
                for seat, name in GUESTS.items():
                    token = c.post("/api/sessions", json={"name": name}).json()["token"]
                    auth = {"Authorization": f"Bearer {token}"}
                    r = c.post(f"/api/tables/{code}/seats/{seat}", headers=auth)
                    assert r.status_code == 200, r.text
            host.page.locator("#fill-bots").tap()
            host.page.locator("#start-match").tap()
            host.page.locator("#ready-btn").tap()
            expect(host.page.locator(".hand-card")).to_have_count(4)
        yield made
    finally:
        for p in made.values():
            p.close()


def test_the_round_number_is_on_screen_during_play(hosts: dict[str, Player]) -> None:
    for lang, host in hosts.items():
        page = host.page
        rnd = page.locator(".statusbar .round-no")
        expect(rnd).to_have_text(catalog(lang)["status.round"].replace("{n}", "1"))
        expect(rnd).to_be_in_viewport(ratio=1)
        box = rnd.bounding_box()
        assert box is not None
        assert box["width"] > 30, (lang, box)
        assert box["height"] > 8, (lang, box)
        # It costs the ring nothing: the status bar keeps to one line beside four scores.
        bar = page.locator(".statusbar").bounding_box()
        assert bar is not None
        assert bar["height"] < 56, (lang, bar)
        assert seats_over_centre(page) == []


def name_of(page: Page, seat: int) -> Locator:
    return page.locator(f".ring .seat[data-seat='{seat}'] .name")


def test_names_are_cut_gracefully_in_every_script(hosts: dict[str, Player]) -> None:
    for lang, host in hosts.items():
        page = host.page
        words = catalog(lang)
        for seat in (2, 4, 6, 7):
            name = name_of(page, seat)
            expect(name).to_have_text(words["seat.bot"].replace("{n}", str(seat + 1)))
            assert shown(name) == {"lines": 1, "cut": False}, (lang, seat)
        for seat in (1, 3):
            name = name_of(page, seat)
            expect(name).to_have_text(GUESTS[seat])
            assert shown(name) == {"lines": 2, "cut": False}, (lang, seat)

        # Too long for two lines: two lines and an ellipsis, the whole name where it is asked for.
        name = name_of(page, TOO_LONG)
        assert shown(name) == {"lines": 2, "cut": True}, lang
        assert name.evaluate("el => getComputedStyle(el).webkitLineClamp") == "2"
        long_seat = page.locator(f".ring .seat[data-seat='{TOO_LONG}']")
        assert (long_seat.get_attribute("aria-label") or "").startswith(GUESTS[TOO_LONG])
        long_seat.tap()
        expect(long_seat).to_be_focused()
        assert shown(name)["cut"] is False, lang
        page.locator(".me-head").tap()  # away again: cut again
        assert shown(name) == {"lines": 2, "cut": True}, lang
        assert page.evaluate("document.documentElement.scrollWidth") <= TALL_PHONE["width"]
    assert severe_violations(hosts["ar"].page) == []
