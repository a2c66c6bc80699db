"""A replay lays its table out like the live one (issue 33, point 4): its ring takes the height
the page leaves, as at a live table, instead of its smallest height with the seats squashed onto
the centre's cards; and at a moment when a floor is open its emissions are shown, on the seat
that showed each one and in the list of emissions — at every width, phones to desktop, in
Arabic, Haitian Creole and English."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import ViewportSize, expect

from gateway.emoji_vendor import emoji_code
from tests.browser.bot_match import FinishedMatch
from tests.browser.players import new_player
from tests.browser.test_match import severe_violations
from tests.browser.test_one_screen import seats_over_centre
from tests.browser.test_replay import scrub

SIZES: list[tuple[str, ViewportSize, bool]] = [
    ("ar", {"width": 390, "height": 844}, True),
    ("ht", {"width": 360, "height": 640}, True),
    ("en-US", {"width": 768, "height": 1024}, False),
    ("en-US", {"width": 1280, "height": 800}, False),
]


@pytest.fixture(scope="module")
def replay(stack_url: str, finished_match: FinishedMatch) -> tuple[str, list[dict[str, Any]]]:
    """The session's finished bot match: its table id and its public events."""
    table_id = finished_match.table_id
    with httpx.Client(base_url=stack_url, timeout=30) as c:
        events = c.get(f"/api/replays/{table_id}").json()["events"]
    return table_id, events


def a_moment_with_emissions(events: list[dict[str, Any]]) -> tuple[int, list[tuple[int, str]]]:
    """The first position where an emission was just shown from an open floor, and the round's
    emissions up to there, newest first (seat, emoji)."""
    shown: list[tuple[int, str]] = []
    floors: set[int] = set()
    for i, ev in enumerate(events):
        if ev["type"] == "signing":
            shown, floors = [], set()
        elif ev["type"] == "floor":
            (floors.add if ev["open"] else floors.discard)(ev["seat"])
        elif ev["type"] == "emission":
            shown.insert(0, (ev["seat"], ev["emoji"]))
            if ev["seat"] in floors and len(shown) >= 2:
                return i + 1, shown[:8]
    raise AssertionError("no two emissions in one round of the match")


@pytest.mark.parametrize(("locale", "view", "touch"), SIZES)
def test_the_replay_table_is_laid_out_like_the_live_one_with_its_emissions(
    browser: Any,
    replay: tuple[str, list[dict[str, Any]]],
    stack_url: str,
    locale: str,
    view: ViewportSize,
    touch: bool,
) -> None:
    table_id, events = replay
    pos, emissions = a_moment_with_emissions(events)
    p = new_player(browser, "Lou", locale=locale, viewport=view, touch=touch)
    try:
        page = p.page
        page.goto(f"{stack_url}/replay/{table_id}")
        expect(page.locator("#replay-scrubber")).to_be_visible()
        scrub(page, pos)

        # The ring takes the height the page leaves it (a third of the screen at least, as the
        # live table's does), and no seat lies over a centre card.
        ring = page.locator(".ring").bounding_box()
        assert ring is not None
        assert ring["height"] >= view["height"] / 3, ring
        expect(page.locator(".ring .seat")).to_have_count(4)
        assert seats_over_centre(page) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= view["width"]

        # The emissions of the moment: on the seats that showed them, and listed newest first.
        latest: dict[int, str] = {}
        for seat, emoji in reversed(emissions):
            latest[seat] = emoji
        for seat, emoji in latest.items():
            bubble = page.locator(f".ring .seat[data-seat='{seat}'] .bubble")
            # The sign drawn as its shipped picture (no device font needed), named for its emoji.
            expect(bubble).to_have_attribute("data-emoji", emoji)
            expect(bubble.locator("img.pic")).to_have_attribute("data-pic", emoji_code(emoji))
            expect(bubble).to_be_in_viewport(ratio=1)
        items = page.locator(".history li")
        expect(items).to_have_count(len(emissions))
        for k, (_, emoji) in enumerate(emissions):
            sign = items.nth(k).locator(".big-emoji")
            expect(sign).to_have_attribute("data-emoji", emoji)
            expect(sign.locator("img.pic")).to_have_attribute("data-pic", emoji_code(emoji))
        assert severe_violations(page) == []
    finally:
        p.close()
