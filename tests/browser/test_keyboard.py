"""Playing from the keyboard alone: after each action (create, bots, start, sign, ready, the
deal, swap, floor, emit) focus lands on the next thing to do, never on the page's body; a swap
is two key presses with the shortcuts (three without them), and the hand comes before the
centre in tab order — on a phone in Arabic and a desktop in English. On a touch phone the hint
says nothing about keys, and Ready without a sign says what will happen."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from tests.browser.players import (
    RIGGED_4,
    TALL_PHONE,
    new_player,
    start_with_bots,
    wait_hand,
    wait_swap_ready,
)
from tests.browser.test_languages import catalog, run_i18n
from tests.browser.test_match import severe_violations

PHONE: ViewportSize = {"width": 390, "height": 664}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
# Seat 0 holds K K Q Q; the centre A A J 10. Bots that never play keep the centre still.
CALM = {**RIGGED_4, "bot_policy": "idle"}

ACTIVE = """() => {
  const el = document.activeElement;
  return {
    tag: el ? el.tagName.toLowerCase() : null,
    id: el?.id || "",
    cls: el?.className || "",
    slot: el?.dataset?.slot ?? null,
    rank: el?.dataset?.rank ?? null,
  };
}"""


def active(page: Page) -> dict[str, Any]:
    found: dict[str, Any] = page.evaluate(ACTIVE)
    return found


class Keys:
    """page.keyboard, counting presses."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.count = 0

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)
        self.count += 1

    def tab_to(self, selector: str, most: int = 30) -> None:
        for _ in range(most):
            if self.page.evaluate("s => document.activeElement?.matches(s)", selector):
                return
            self.press("Tab")
        raise AssertionError(f"Tab never reached {selector}; focus is on {active(self.page)}")


def hand(page: Page) -> list[str]:
    ranks: list[str] = page.locator(".hand-card").evaluate_all(
        "els => els.map(e => e.dataset.rank)"
    )
    return ranks


@pytest.mark.parametrize(
    ("locale", "lang", "view"), [("ar", "ar", PHONE), ("en-US", "en", DESKTOP)]
)
def test_a_whole_round_from_the_keyboard_with_focus_always_somewhere(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    words = catalog(lang)
    p = new_player(browser, "Rosa", locale=locale, scenario=CALM, viewport=view)
    try:
        page = p.page
        keys = Keys(page)
        page.goto(f"{stack_url}/")
        keys.tab_to("#player-name")
        page.keyboard.type("Rosa")
        keys.tab_to("button[data-players='4']")
        keys.press("Enter")
        page.wait_for_url("**/t/*")
        expect(page.locator("#lobby-title")).to_be_focused()

        # Three bots: each used button hands focus to the next, then to Start.
        keys.tab_to("[data-addbot]")
        for n in (1, 2, 3):
            keys.press("Enter")
            expect(page.locator(".seat-row[data-kind='bot']")).to_have_count(n)
            if n < 3:
                expect(page.locator("[data-addbot]").first).to_be_focused()
        expect(page.locator("#start-match")).to_be_focused()
        keys.press("Enter")

        # Signing: the grid, then Ready once the sign is fixed.
        expect(page.locator(".signing .emoji").first).to_be_focused()
        keys.press("ArrowRight" if lang == "en" else "ArrowLeft")
        picked = active(page)
        keys.press("Enter")
        expect(page.locator(".our-sign, .sign-fixed [data-sign]").first).to_be_visible()
        expect(page.locator("#ready-btn")).to_be_focused()
        assert picked["cls"].startswith("emoji")
        keys.press("Enter")

        # The deal (the bots are ready at once): focus on the hand.
        expect(page.locator(".hand-card")).to_have_count(4, timeout=20_000)
        expect(page.locator(".hand-card").first).to_be_focused()
        assert sorted(hand(page)) == ["K", "K", "Q", "Q"]

        # The hand comes before the centre in tab order: from the top of the page, Tab meets a
        # card of the hand first, and no centre slot is a tab stop until a card is chosen.
        page.locator("a.brand").focus()
        keys.tab_to(".hand-card, .slot")
        assert active(page)["cls"].startswith("hand-card")
        assert page.locator(".slot[tabindex='0']").count() == 0

        # A swap with the shortcuts: 1 (first card of the hand), 3 (third centre card).
        first = hand(page)[0]
        before = keys.count
        keys.press("1")
        expect(page.locator(".hand-card").first).to_have_attribute("aria-pressed", "true")
        if lang == "en":
            expect(page.locator(".me .hint")).to_contain_text(words["table.pickSlotKeys"])
        keys.press("3")
        shortcut_presses = keys.count - before
        assert shortcut_presses == 2
        expect(page.locator(".slot[data-slot='2'] .card")).to_have_attribute("data-rank", first)
        wait_hand(page, ["J", "K", "Q", "Q"])
        now = active(page)
        assert now["cls"].startswith("hand-card")
        assert now["rank"] == "J"

        # Without shortcuts: Enter on the card, an arrow to the next centre card, Enter.
        wait_swap_ready(page, timeout=10_000)
        keys.press("Escape")
        before = keys.count
        keys.press("Enter")
        expect(page.locator(".slot[data-slot='0']")).to_be_focused()
        keys.press("ArrowRight")
        expect(page.locator(".slot[data-slot='1']")).to_be_focused()
        keys.press("Enter")
        plain_presses = keys.count - before
        assert plain_presses == 3
        wait_hand(page, ["A", "K", "Q", "Q"])
        assert active(page)["rank"] == "A"

        # Escape lets go of a chosen card.
        wait_swap_ready(page, timeout=10_000)
        keys.press("2")
        expect(page.locator(".hand-card[aria-pressed='true']")).to_have_count(1)
        keys.press("Escape")
        expect(page.locator(".hand-card[aria-pressed='true']")).to_have_count(0)

        # The floor, then an emoji: focus follows to the emoji button and comes back to it.
        keys.tab_to("#floor-toggle")
        keys.press("Enter")
        expect(page.locator("#emit-toggle")).to_be_focused()
        keys.press("Enter")
        expect(page.locator("#emit-picker .emoji").first).to_be_focused()
        keys.press("Enter")
        expect(page.locator(".history li")).to_have_count(1)
        expect(page.locator("#emit-toggle")).to_be_focused()
        assert severe_violations(page) == []
        print(f"{lang}: swap by shortcuts {shortcut_presses} presses, without {plain_presses}")
    finally:
        p.close()


def test_on_a_touch_phone_no_keys_are_mentioned_and_ready_without_a_sign_is_explained(
    browser: Any, stack_url: str
) -> None:
    words = catalog("ar")
    context = browser.new_context(
        locale="ar", viewport=PHONE, has_touch=True, is_mobile=True, reduced_motion="reduce"
    )
    context.add_init_script(
        f"sessionStorage.setItem('quatro.scenario', {json.dumps(json.dumps(CALM))});"
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(f"{stack_url}/")
        page.fill("#player-name", "Rosa")
        page.tap("button[data-players='4']")
        page.wait_for_url("**/t/*")
        for seat in (1, 2, 3):
            page.tap(f"[data-addbot='{seat}']")
            expect(page.locator(f".seat-row[data-seat='{seat}'][data-kind='bot']")).to_be_visible()
        page.tap("#start-match")
        # No sign yet: Ready says beforehand what happens without one.
        note = page.locator("#ready-note")
        expect(note).to_have_text(words["sign.readyNoSign"])
        expect(page.locator("#ready-btn")).to_have_attribute("aria-describedby", "ready-note")
        assert severe_violations(page) == []
        page.tap("#ready-btn")
        expect(page.locator(".hand-card")).to_have_count(4, timeout=20_000)
        page.locator(".hand-card").first.tap()
        hint = page.locator(".me .hint")
        expect(hint).to_have_text(words["table.pickSlot"])
        assert "Escape" not in hint.inner_text()
        assert severe_violations(page) == []
    finally:
        context.close()


# Whether the focused element draws a focus ring, and how many of the shortcuts' badges show.
RINGS_AND_BADGES = """() => ({
  ring: getComputedStyle(document.activeElement).outlineStyle !== "none",
  badges: [...document.querySelectorAll(".key-hint")].filter((b) => b.checkVisibility()).length,
})"""


@pytest.mark.parametrize(("locale", "lang"), [("en-US", "en"), ("ht", "ht"), ("ar", "ar")])
def test_after_a_reload_on_a_touch_phone_no_key_badges_or_ring_and_the_hint_is_there(
    browser: Any, stack_url: str, locale: str, lang: str
) -> None:
    """Issue 33: a reload puts focus on the hand by itself (where a screen reader wants it), which
    had drawn the focus ring and the 1–4 badges meant for a keyboard on a touch phone."""
    words = catalog(lang)
    p = new_player(browser, "Rosa", locale=locale, scenario=CALM, viewport=TALL_PHONE, touch=True)
    try:
        page = p.page
        start_with_bots(p, stack_url)
        page.reload()
        wait_hand(page, ["K", "K", "Q", "Q"])
        expect(page.locator(".hand-card").first).to_be_focused()
        assert page.evaluate(RINGS_AND_BADGES) == {"ring": False, "badges": 0}
        # The hint line is there, on screen: round 1's tip, in the player's language.
        tip = page.locator(".me > .tip")
        expect(tip).to_have_attribute("data-hint", "tip_play")
        expect(tip).to_contain_text(words["hint.tip_play"])
        expect(tip).to_be_in_viewport(ratio=1)
        assert page.evaluate("document.activeElement.closest('.hand') !== null")
        # A tap changes nothing of it; a key pressed shows the keys where they work.
        page.locator(".hand-card").nth(1).tap()
        assert page.evaluate(RINGS_AND_BADGES)["badges"] == 0
        page.keyboard.press("Escape")
        page.keyboard.press("1")
        expect(page.locator(".hand-card").first).to_have_attribute("aria-pressed", "true")
        assert page.evaluate(RINGS_AND_BADGES) == {"ring": True, "badges": 8}
    finally:
        p.close()


# What each language said before: "a hand was too strong", words that explain nothing.
VAGUE = {"en": "strong", "fr": "forte", "ht": "fò", "ar": "قوية"}
# What they say now: the reason, three cards of one rank.
PLAIN = {"en": "three cards", "fr": "trois cartes", "ht": "twa kat", "ar": "ثلاث أوراق"}


def test_a_deal_thrown_back_is_told_in_plain_words(browser: Any, static_url: str) -> None:
    context = browser.new_context(locale="en-US")
    page = context.new_page()
    try:
        page.goto(f"{static_url}/")
        for lang in ("en", "fr", "ht", "ar"):
            texts = run_i18n(
                page,
                "async (i18n, lang) => { await i18n.setLanguage(lang);"
                " return [1, 2, 3, 11].map((n) => i18n.t('notice.redeals', { n })); }",
                lang,
            )
            for text in texts:
                assert VAGUE[lang] not in text, (lang, text)
                assert PLAIN[lang] in text, (lang, text)
    finally:
        context.close()
