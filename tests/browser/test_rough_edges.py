"""Rough edges of the table's page (issue 46, point 4), each seen on a touch phone at 390×844 in
English and at a desktop's keyboard at 1280×800 in Arabic: toasts never over the status bar or
a round's result; the scores still on screen after the reveal comes into view; names readable
beside emission bubbles; no keyboard instructions on a phone whose name was typed on its own
keyboard; the bot level in sight during play; lists of names joined in each language's words;
and, in the lobby, radios and boxes a finger's size, each on its label's first line."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from tests.browser.players import DESKTOP, RIGGED_4, TALL_PHONE, Player, join_by_link, new_player
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations

EN = catalog("en")
AR = catalog("ar")
# Six seats, idle bots, clocks four times faster: a pause and R20's gap between votes of 7.5 s.
EDGES = {"seed": 31, "time_scale": 0.25, "deals": [], "bot_policy": "idle"}
# Long enough to fill a phone's seat: a bubble on its corner would cover part of it.
HOST_NAME = "Anaïs Bellerose"
GUEST_NAME = "فاطمة الزهراء"

OVERLAPS = """([a, b]) => {
  const boxes = (sel) => [...document.querySelectorAll(sel)]
    .map((el) => el.getBoundingClientRect()).filter((r) => r.width > 0);
  const apart = (p, q) => p.right <= q.left || q.right <= p.left
    || p.bottom <= q.top || q.bottom <= p.top;
  return boxes(a).flatMap((p) => boxes(b).filter((q) => !apart(p, q))
    .map((q) => [p.top, p.bottom, q.top, q.bottom].map(Math.round)));
}"""


def overlaps(page: Page, a: str, b: str) -> list[Any]:
    found: list[Any] = page.evaluate(OVERLAPS, [a, b])
    return found


def fully_on_screen(page: Page, selector: str) -> bool:
    """Whether the element is within the screen's height (to a pixel's fraction: an element
    scrolled to the top may lie a fraction above it)."""
    return bool(
        page.evaluate(
            """(s) => { const r = document.querySelector(s).getBoundingClientRect();
              return r.top > -1 && r.bottom <= innerHeight; }""",
            selector,
        )
    )


def no_toast_over_what_it_must_leave(page: Page) -> None:
    """A toast shows, and within a frame or two of what it keeps clear of moving (a reveal
    scrolled into view: js/toast.js places it every frame) it lies over none of them."""
    toast = page.locator(".toast").first
    expect(toast).to_be_visible()
    guarded = ".statusbar, .reveal h2, .reveal-text"
    page.wait_for_function(
        f"() => ({OVERLAPS})(['.toast', '{guarded}']).length === 0", timeout=1_000
    )


def seated_at_six(browser: Any, base: str) -> tuple[Player, Player]:
    """The host types their name on a phone's own keyboard (real key events, as iOS sends
    them) and opens a 6-seat table; the Arabic guest takes seat 1; bots fill the others."""
    host = new_player(browser, HOST_NAME, scenario=EDGES, viewport=TALL_PHONE, touch=True)
    guest = new_player(browser, GUEST_NAME, locale="ar", viewport=DESKTOP)
    host.page.goto(f"{base}/")
    host.page.locator("#player-name").press_sequentially(HOST_NAME)
    host.page.locator("button[data-players='6']").tap()
    host.page.wait_for_url("**/t/*")
    code = host.page.locator("[data-code]").get_attribute("data-code")
    assert code
    join_by_link(guest, base, code, 1)
    host.page.locator("#fill-bots").tap()
    expect(host.page.locator(".seat-row[data-kind='bot']")).to_have_count(4)
    host.page.locator("#start-match").tap()
    return host, guest


def sign_and_ready(people: tuple[Player, Player]) -> None:
    for p in people:
        p.page.locator(".signing .emoji").first.click()
        p.page.click("#ready-btn")
    for p in people:
        expect(p.page.locator(".hand-card")).to_have_count(4)


def test_the_table_page_on_a_phone_and_at_a_keyboard(browser: Any, stack_url: str) -> None:
    host, guest = seated_at_six(browser, stack_url)
    hp, gp = host.page, guest.page
    try:
        sign_and_ready((host, guest))

        # A phone's keyboard typed the host's name: that says nothing of a keyboard in play.
        hint = hp.locator(".me > .hint")
        expect(hint).to_have_text(EN["table.pickCard"])
        hp.locator(".hand-card").first.tap()
        expect(hint).to_have_text(EN["table.pickSlot"])
        hp.locator(".hand-card").first.tap()
        # At the keyboard, the shortcuts are told.
        gp.keyboard.press("1")
        expect(gp.locator(".me > .hint")).to_contain_text(AR["table.pickSlotKeys"])
        gp.keyboard.press("Escape")

        # The bots' level, in sight during play, overlapping no seat; opened, it says where it
        # is chosen (the host is told it was them). A new player's table starts relaxed.
        for p, words in ((hp, EN), (gp, AR)):
            chip = p.locator(".level-chip")
            expect(chip).to_have_attribute("data-level", "relaxed")
            expect(chip.locator("summary")).to_contain_text(words["level.relaxed"])
            assert overlaps(p, ".level-chip summary", ".ring .seat") == []
        hp.locator(".level-chip summary").tap()
        expect(hp.locator(".level-where")).to_contain_text(EN["level.whereHost"])
        hp.locator(".level-chip summary").tap()
        gp.locator(".level-chip summary").focus()
        gp.keyboard.press("Enter")
        expect(gp.locator(".level-where")).to_contain_text(AR["level.where"])
        # A pop-up like the others: Escape closes it, focus back on the chip.
        gp.keyboard.press("Escape")
        expect(gp.locator(".level-where")).to_be_hidden()
        expect(gp.locator(".level-chip summary")).to_be_focused()

        # Each shows a decoy from the floor: the other sees the bubble beside the whole name.
        for p in (hp, gp):
            p.click("#floor-toggle")
            p.click("#emit-toggle")
            p.click("#emit-picker [data-emoji='🐢']")
        for p, seat in ((hp, 0), (gp, 1)):
            other = p.locator(f".seat[data-seat='{1 - seat}']")
            expect(other.locator(".bubble")).to_be_visible()
            assert (
                overlaps(
                    p,
                    f".seat[data-seat='{1 - seat}'] .bubble",
                    f".seat[data-seat='{1 - seat}'] .name",
                )
                == []
            )

        # The Contre! picker joins each team's names in the page's own words.
        for p, lang in ((hp, "en"), (gp, "ar")):
            p.click("#call-contre")
            for team in p.locator(".team-choice button").all():
                names = team.locator("bdi").all_text_contents()
                assert len(names) == 2, names
                joined = p.evaluate(
                    "([l, n]) => new Intl.ListFormat(l, {type: 'conjunction'}).format(n)",
                    [lang, names],
                )
                expect(team).to_contain_text(joined)
                assert "&" not in (team.text_content() or "")
            p.keyboard.press("Escape")
            expect(p.locator("[role=dialog]")).to_have_count(0)
        assert severe_violations(hp) == []
        assert severe_violations(gp) == []

        # A reshuffle vote runs; both pages are scrolled to their foot; the guest's Contre! ends
        # the round, and the vote with it: the reveal comes into view with the scores above it,
        # and the vote's toast leaves the status bar and the result's text uncovered.
        hp.locator(".vote-btn").tap()
        expect(gp.locator(".banner.vote.asking")).to_be_visible()
        for p in (hp, gp):
            p.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        gp.locator("#call-contre").focus()
        gp.keyboard.press("Enter")
        team = gp.locator(".team-choice button[data-team='0']")
        team.focus()
        gp.keyboard.press("Enter")
        expect(team).to_have_attribute("data-guard", "armed")
        gp.keyboard.press("Enter")
        # The toasts first: they leave after 4.5 s.
        for p, words in ((gp, AR), (hp, EN)):
            expect(p.locator(".reveal[data-reason='contre']")).to_be_visible()
            expect(p.locator(".toast")).to_contain_text(words["vote.failed"])
            no_toast_over_what_it_must_leave(p)
        for p in (hp, gp):
            p.wait_for_function(
                """() => { const r = (s) => document.querySelector(s).getBoundingClientRect();
                  return r(".statusbar").top > -1 && r(".reveal h2").bottom <= innerHeight; }""",
                timeout=3_000,
            )
            assert fully_on_screen(p, ".statusbar .scores")

        # The pause runs out (and R20's gap with it); in the next round a vote refused shows its
        # toast under the status bar, never over it.
        for p in (hp, gp):
            expect(p.locator("#signing-title")).to_be_visible(timeout=15_000)
        sign_and_ready((host, guest))
        hp.locator(".vote-btn").tap()
        no = gp.locator("[data-vote='no']")
        no.focus()
        gp.keyboard.press("Enter")
        for p, words in ((hp, EN), (gp, AR)):
            expect(p.locator(".toast")).to_contain_text(words["vote.failed"])
            no_toast_over_what_it_must_leave(p)
    finally:
        host.close()
        guest.close()


@pytest.mark.parametrize(
    ("locale", "view", "touch"), [("en-US", TALL_PHONE, True), ("ar", DESKTOP, False)]
)
def test_the_lobbys_radios_and_boxes_are_a_fingers_size_on_their_first_line(
    browser: Any, stack_url: str, locale: str, view: ViewportSize, touch: bool
) -> None:
    p = new_player(browser, "Ana", locale=locale, viewport=view, touch=touch, scenario=RIGGED_4)
    page = p.page
    try:
        page.goto(f"{stack_url}/")
        page.fill("#player-name", "Ana")
        page.click("button[data-players='4']")
        page.wait_for_url("**/t/*")
        inputs = page.locator(
            ".table-settings input[type='radio'], .table-settings input[type='checkbox']"
        )
        expect(inputs).to_have_count(5)  # three levels, hints, watchers
        found = inputs.evaluate_all(
            """(els) => els.map((el) => {
              const box = el.getBoundingClientRect();
              const label = el.closest("label");
              const range = document.createRange();
              const text = [...label.querySelectorAll("span")].find((s) => s.textContent.trim());
              range.selectNodeContents(text);
              const line = range.getClientRects()[0];
              return {w: box.width, h: box.height, x: box.left, mid: box.top + box.height / 2,
                      line: line.top + line.height / 2};
            })"""
        )
        for f in found:
            assert f["w"] >= 22, f  # 1.4rem: a fingertip, not 13 px
            assert f["h"] >= 22, f
            assert abs(f["mid"] - f["line"]) <= 3, f  # on its label's first line
        assert len({round(f["x"]) for f in found}) == 1, found  # one column
        # Chosen by touch on the label's words, or with the arrows at the keyboard.
        if touch:
            page.locator("label:has(input[data-level='relaxed']) strong").tap()
        else:
            page.locator("input[data-level='normal']").focus()
            page.keyboard.press("ArrowUp")
        expect(page.locator("input[data-level='relaxed']")).to_be_checked()
        expect(page.locator(".table-settings")).to_be_visible()
        assert severe_violations(page) == []
    finally:
        p.close()
