"""A guard before a costly signal, in a real browser against the real stack: showing the team's
own sign without a carré tells the partner "call Quatro! now" (R13, R15), so the client asks
first — once a round, never for a decoy, never with a carré (engine/hints.py,
`sign_needs_confirm`, says when; js/hints.js follows it)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize, WebSocket, expect

from tests.browser.players import PHONE, RIGGED_4, new_player, start_with_bots
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations
from tests.browser.test_newcomers import HOST_CARRE, make_host_carre, start_rigged_match

# RIGGED_4 (the host holds K K Q Q: no carré) with idle bots, on a quick clock: an emoji is
# shown again every 1.25 s, so a choice shows on the table soon.
QUICK_CALM = {**RIGGED_4, "bot_policy": "idle", "time_scale": 0.25}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}


def our_sign(page: Page) -> str:
    sign = page.locator(".our-sign").get_attribute("data-sign")
    assert sign
    return sign


def pick(page: Page, emoji: str) -> None:
    page.click("#emit-toggle")
    page.click(f"#emit-picker [data-emoji='{emoji}']")


def record_emits(page: Page) -> list[str]:
    """The emoji of every `emit` frame the page sends, in order, on any of its sockets."""
    sent: list[str] = []

    def on_socket(ws: WebSocket) -> None:
        def on_frame(payload: str | bytes) -> None:
            frame = json.loads(payload)
            if frame.get("type") == "emit":
                sent.append(frame["emoji"])

        ws.on("framesent", on_frame)

    page.on("websocket", on_socket)
    return sent


def until_sent(page: Page, sent: list[str], want: list[str], timeout_s: float = 10.0) -> None:
    """Until the page's emit frames are `want` (Playwright reports frames while it waits)."""
    deadline = time.monotonic() + timeout_s
    while sent != want and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert sent == want


@pytest.mark.parametrize(
    ("locale", "lang", "view", "hints"),
    [("en-US", "en", PHONE, True), ("ar", "ar", DESKTOP, False)],
)
def test_the_sign_without_a_carre_asks_first_once_a_round_and_a_decoy_never(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize, hints: bool
) -> None:
    """With hints on or off: the question protects a point, like R16's reminder."""
    text = catalog(lang)
    host = new_player(browser, "Rosa", locale=locale, scenario=QUICK_CALM, viewport=view)
    page = host.page
    sent = record_emits(page)
    me = page.locator("section.me")
    floor = page.locator(".floor-controls")
    dialog = page.locator("[role=dialog]")

    def hints_off(lobby: Page) -> None:
        if not hints:
            lobby.locator("#hints-toggle").uncheck()
            expect(lobby.locator("#hints-toggle")).not_to_be_checked()

    try:
        start_with_bots(host, stack_url, before_start=hints_off)
        sign = our_sign(page)
        decoy = next(e for e in ("🐢", "🌵") if e != sign)
        page.click("#floor-toggle")
        expect(page.locator("#emit-toggle")).to_be_visible()

        # The sign, without a carré: asked first, in the player's language.
        pick(page, sign)
        expect(dialog).to_be_visible()
        expect(dialog.locator("h2")).to_have_text(text["floor.signTitle"])
        expect(dialog.locator(".sign-guard")).to_have_attribute("data-sign", sign)
        expect(dialog).to_contain_text(text["floor.signBody"].split("{sign}")[0].strip())
        expect(page.locator("#confirm-sign")).to_have_text(text["floor.signConfirm"])
        assert severe_violations(page) == []

        # Cancel sends nothing: the floor still waits for a choice. A decoy then goes out at
        # once, without a question, and is the first emoji this floor shows.
        page.click("#cancel-sign")
        expect(dialog).to_have_count(0)
        expect(floor).to_have_attribute("data-choice", "")
        expect(page.locator("#emit-toggle")).to_have_text(text["floor.choose"])
        expect(page.locator("#emit-toggle")).to_be_focused()
        pick(page, decoy)
        expect(me).to_have_attribute("data-shows", decoy)
        expect(dialog).to_have_count(0)
        until_sent(page, sent, [decoy])  # frames go out in order: nothing went before it

        # The sign again: not confirmed yet this round, so asked again; confirming sends it.
        pick(page, sign)
        expect(dialog).to_be_visible()
        assert sent == [decoy]
        page.click("#confirm-sign")
        expect(dialog).to_have_count(0)
        expect(floor).to_have_attribute("data-choice", sign)
        expect(me).to_have_attribute("data-shows", sign)  # at the next emission (R13)
        until_sent(page, sent, [decoy, sign])

        # Confirmed once this round: a decoy and back to the sign, and no question.
        pick(page, decoy)
        expect(floor).to_have_attribute("data-choice", decoy)
        pick(page, sign)
        expect(floor).to_have_attribute("data-choice", sign)
        expect(dialog).to_have_count(0)
        until_sent(page, sent, [decoy, sign, decoy, sign])
    finally:
        host.close()


def test_the_sign_with_a_carre_never_asks(browser: Any, stack_url: str) -> None:
    p = new_player(browser, "Rosa", scenario=HOST_CARRE, viewport=PHONE)
    page = p.page
    sent = record_emits(page)
    try:
        start_rigged_match(page, stack_url, hints=False)
        make_host_carre(page)
        sign = our_sign(page)
        page.click("#floor-toggle")
        pick(page, sign)
        expect(page.locator(".floor-controls")).to_have_attribute("data-choice", sign)
        expect(page.locator("section.me")).to_have_attribute("data-shows", sign)
        expect(page.locator("[role=dialog]")).to_have_count(0)
        until_sent(page, sent, [sign])
    finally:
        p.close()
