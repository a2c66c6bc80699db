"""Every sign and every emoji of the interface is a picture shipped with the client (issue 33,
point 1), so a device without a colour-emoji font sees them all: a Chromium that sees no emoji
font (tests/browser/emoji_fonts.py, which proves it) plays a round on two 390×844 touch phones,
in Arabic and in English, and finds the 24 signs drawn and all different, every picture
loaded, and no emoji left as text anywhere on the page (where it would be an empty box). The
help pages too."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect

from engine.signs import EMOJIS
from gateway.emoji_vendor import emoji_code as code
from tests.browser.conftest import STATIC
from tests.browser.emoji_fonts import (
    MISSING_JS,
    MUST_BE_MISSING,
    TEXT_SYMBOLS,
    all_drawn,
    fake_emoji_font,
    launch,
    system_fonts,
    without_emoji_fonts,
)
from tests.browser.players import (
    CALM,
    Player,
    call,
    create_table,
    join_by_link,
    swap_by_taps,
    wait_hand,
    wait_swap_ready,
)

PINEAPPLE, COCONUT = "🍍", "🥥"


def catalog(lang: str) -> dict[str, Any]:
    data = json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def bare(playwright: Playwright, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """A Chromium with every emoji font hidden from it (the proof: `without_emoji_fonts`, then
    Chromium's own drawing, below)."""
    b = launch(playwright, without_emoji_fonts(tmp_path_factory.mktemp("fonts")))
    try:
        page = b.new_page()
        page.set_content("<p>Quatro</p>")
        drawn = page.evaluate(MISSING_JS, [*MUST_BE_MISSING, *TEXT_SYMBOLS])
        page.close()
        assert [ch for ch in MUST_BE_MISSING if not drawn[ch]] == [], "an emoji font is visible"
        assert [ch for ch in TEXT_SYMBOLS if drawn[ch]] == [], "a text symbol has no font"
        yield b
    finally:
        b.close()


def phone(browser: Browser, locale: str, scenario: dict[str, Any] | None = None) -> Page:
    context: BrowserContext = browser.new_context(
        locale=locale,
        viewport={"width": 390, "height": 844},
        has_touch=True,
        is_mobile=True,
        reduced_motion="reduce",
    )
    if scenario is not None:
        context.add_init_script(
            f"sessionStorage.setItem('quatro.scenario', {json.dumps(json.dumps(scenario))});"
        )
    page = context.new_page()
    page.set_default_timeout(20_000)
    return page


def check_grid(page: Page, grid: str, lang: str) -> None:
    """The 24 signs of a grid: in R5's order, loaded, named in the page's language, and drawn as
    24 different pictures, none blank."""
    words = catalog(lang)
    cells = page.locator(f"{grid} button.emoji")
    expect(cells).to_have_count(24)
    assert cells.evaluate_all("bs => bs.map(b => b.dataset.emoji)") == list(EMOJIS)
    pics = page.locator(f"{grid} button.emoji img.pic")
    expect(pics).to_have_count(24)
    all_drawn(page)
    alts = pics.evaluate_all("ps => ps.map(p => p.alt)")
    assert alts == [words[f"emoji.{code(e)}"] for e in EMOJIS]
    drawn = pics.evaluate_all(PIXELS_JS)
    assert all(share > 0.05 for _, share in drawn), "a sign is drawn blank"
    assert len({digest for digest, _ in drawn}) == 24, "two signs look the same"


# Each picture as the page drew it from its file, read back from a canvas: its pixels' digest
# and the share of them that show. (Not 24 element screenshots: each waits for frames that a
# loaded machine may not give a phone page in time, and a picker's signs can be scrolled away.)
PIXELS_JS = """async (pics) => {
  const out = [];
  for (const pic of pics) {
    await pic.decode();
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 64;
    const g = canvas.getContext("2d");
    g.drawImage(pic, 0, 0, 64, 64);
    const data = g.getImageData(0, 0, 64, 64).data;
    let shown = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) shown += 1;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
    out.push([Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join(""), shown / 4096]);
  }
  return out;
}"""


def test_a_round_on_phones_without_an_emoji_font_shows_every_sign_as_a_picture(
    bare: Browser, stack_url: str
) -> None:
    host = phone(bare, "ar", CALM)
    partner = phone(bare, "en-US")
    ar, en = catalog("ar"), catalog("en")
    try:
        # The lobby: the header's sound button is a picture too.
        code_ = create_table(Player("فاطمة", host.context, host), stack_url, 4)
        join_by_link(Player("Marie", partner.context, partner), stack_url, code_, 2)
        for seat in (1, 3):
            host.click(f"[data-addbot='{seat}']")
            expect(host.locator(f".seat-row[data-seat='{seat}'][data-kind='bot']")).to_be_visible()
        all_drawn(host)

        # Signing: the grid, then "Our sign" for the partner.
        host.click("#start-match")
        check_grid(host, ".signing", "ar")
        host.click(f".signing [data-emoji='{PINEAPPLE}']")
        ours = partner.locator(f".sign-fixed [data-sign='{PINEAPPLE}'] img.pic")
        expect(ours).to_have_attribute("alt", en[f"emoji.{code(PINEAPPLE)}"])
        all_drawn(partner)
        for page in (host, partner):
            page.click("#ready-btn")
        for page in (host, partner):
            expect(page.locator(".hand-card")).to_have_count(4)

        # The partner makes a carré and shows the sign from the floor's picker (★ on ours).
        swap_by_taps(partner, "K", 0)
        wait_hand(partner, ["A", "A", "A", "Q"])
        wait_swap_ready(partner)
        swap_by_taps(partner, "Q", 1)
        wait_hand(partner, ["A", "A", "A", "A"])
        partner.click("#floor-toggle")
        expect(partner.locator("#floor-toggle[aria-pressed='true']")).to_be_visible()
        partner.click(".emit-btn")
        check_grid(partner, "#emit-picker", "en")
        expect(
            partner.locator(f"#emit-picker [data-emoji='{PINEAPPLE}'] .sign-mark")
        ).to_be_visible()
        partner.click(f"#emit-picker [data-emoji='{PINEAPPLE}']")
        expect(partner.locator(f".emit-btn img.pic[data-pic='{code(PINEAPPLE)}']")).to_be_visible()
        all_drawn(partner)

        # The host sees it over the partner's seat, in the hint line and in the emissions, and
        # the seat's accessible name says it.
        marie = host.locator(".seat[data-seat='2']")
        expect(marie.locator(f".bubble[data-emoji='{PINEAPPLE}'] img.pic")).to_be_visible()
        name = ar[f"emoji.{code(PINEAPPLE)}"]
        expect(marie).to_have_attribute("aria-label", re.compile(re.escape(name)))
        tip = host.locator(".tip")
        expect(tip).to_have_attribute("data-hint", "partner_sign")
        expect(tip.locator(f"img.pic[data-pic='{code(PINEAPPLE)}']")).to_be_visible()
        expect(host.locator(f".history [data-emoji='{PINEAPPLE}'] img.pic")).to_be_visible()
        all_drawn(host)

        # The host's own picker, in Arabic, then a decoy from the host.
        host.click("#floor-toggle")
        expect(host.locator("#floor-toggle[aria-pressed='true']")).to_be_visible()
        host.click(".emit-btn")
        check_grid(host, "#emit-picker", "ar")
        host.click(f"#emit-picker [data-emoji='{COCONUT}']")
        expect(host.locator(f".history [data-emoji='{COCONUT}'] img.pic")).to_be_visible()
        all_drawn(host)

        # The reveal: each team's sign.
        call(host, "#call-quatro")
        expect(host.locator(".reveal")).to_be_visible()
        expect(host.locator(f".reveal-team [data-sign='{PINEAPPLE}'] img.pic")).to_be_visible()
        expect(host.locator(".reveal-team [data-sign] img.pic")).to_have_count(2)
        all_drawn(host)
        all_drawn(partner)
    finally:
        host.context.close()
        partner.context.close()


@pytest.mark.parametrize("lang", ["en", "fr", "ht", "ar"])
def test_the_help_pages_draw_the_signs_as_pictures_named_as_in_the_game(
    bare: Browser, static_url: str, lang: str
) -> None:
    page = phone(bare, lang)
    try:
        page.goto(f"{static_url}/static/help/{lang}.html")
        all_drawn(page)
        items = page.locator(".signs li")
        assert [t.strip() for t in items.all_inner_texts()] == [
            catalog(lang)[f"emoji.{code(e)}"] for e in EMOJIS
        ]
        srcs = page.locator(".signs img.pic").evaluate_all("ps => ps.map(p => p.src)")
        assert [s.rsplit("/", 1)[1] for s in srcs] == [f"{code(e)}.svg" for e in EMOJIS]
    finally:
        page.context.close()


def test_the_font_check_notices_an_emoji_font_and_the_test_config_hides_it(
    playwright: Playwright, tmp_path: Path
) -> None:
    """The proof behind `bare`, proved: with a font that draws the signs (made here, so that
    every machine has one), Chromium draws them; with the same font hidden, it draws none."""
    fonts = tmp_path / "fonts"
    fake_emoji_font(fonts / "test-emoji.ttf", MUST_BE_MISSING)
    seen = {}
    for name, env in (
        ("with", system_fonts(tmp_path / "with", [fonts])),
        ("without", without_emoji_fonts(tmp_path / "without", [fonts])),
    ):
        b = launch(playwright, env)
        try:
            page = b.new_page()
            page.set_content("<p>Quatro</p>")
            seen[name] = page.evaluate(MISSING_JS, list(MUST_BE_MISSING))
        finally:
            b.close()
    assert not any(seen["with"].values()), "Chromium did not use the font that draws the signs"
    assert all(seen["without"].values()), "the font that draws the signs was not hidden"
