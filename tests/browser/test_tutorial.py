"""The guided round (issue 46) in real browsers against the real stack: offered on a first visit,
played to its end on a 390×844 touch phone in each language and on a desktop by keyboard alone,
and skipped — its table left cleanly, the way on said, the way back from "How to play".

Each test is one page session; the tutorial's clock runs four times as fast (`guided.FAST`,
a test hook), its script as it is.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.emoji_fonts import all_drawn
from tests.browser.guided import (
    FAST,
    LOOK_JS,
    SCRIPT,
    WATCHING,
    Learner,
    fixed_part,
    record,
    shown,
    start,
    tab_to,
)
from tests.browser.players import DESKTOP, TALL_PHONE, new_player
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations


def auth(page: Page) -> dict[str, str]:
    token = page.evaluate("JSON.parse(localStorage.getItem('quatro.session')).token")
    return {"Authorization": f"Bearer {token}"}


def session(page: Page, base: str) -> dict[str, Any]:
    r = page.request.get(f"{base}/api/sessions/tables", headers=auth(page))
    assert r.ok
    data: dict[str, Any] = r.json()
    return data


def code_of(page: Page) -> str:
    return page.url.rstrip("/").rsplit("/", 1)[-1]


@pytest.mark.parametrize(
    ("locale", "lang", "sign"),
    [("en-US", "en", "🍍"), ("fr-FR", "fr", "🐙"), ("ht", "ht", "🦜"), ("ar", "ar", "🌙")],
)
def test_the_guided_round_played_to_its_end_on_a_phone(
    browser: Any, stack_url: str, locale: str, lang: str, sign: str
) -> None:
    """A first visit on a phone: the offer, then every lesson one instruction at a time, in the
    page's language, each pointing at something on the screen; done is remembered."""
    text = catalog(lang)
    p = new_player(browser, "Rosa", locale=locale, scenario=FAST, viewport=TALL_PHONE, touch=True)
    page = p.page
    record(p.page)
    try:
        page.goto(f"{stack_url}/")
        offer = page.locator("#tutorial-offer")
        expect(offer).to_contain_text(text["tutorial.offerTitle"])
        start(page, stack_url, "Rosa")
        assert page.evaluate("document.documentElement.dir") == ("rtl" if lang == "ar" else "ltr")
        coach = page.locator(".coach")
        looked: list[str] = []

        def look(step: str) -> None:
            now = page.evaluate(LOOK_JS)
            if now["step"] != step:
                assert step in WATCHING, (step, now["step"])
                return  # the bots moved on meanwhile: the next step is looked at in its turn
            looked.append(step)
            assert fixed_part(text[f"tutorial.step.{step}"]) in now["say"], (step, now["say"])
            assert step in ("finished", "watch_others") or now["marks"], f"{step} marks nothing"
            assert all(now["marks"]), f"{step}: a mark is off the screen"
            if step == "watch_partner":
                # A lesson takes no reshuffle (engine.coach refuses it): its button is off.
                expect(page.locator(".vote-btn")).to_be_disabled()
            if step == "call_contre":
                all_drawn(page)  # the emojis of the coach's sentence are pictures too
                assert severe_violations(page) == []

        Learner(page, sign=sign).play(look)
        assert shown(page) == SCRIPT
        assert set(SCRIPT) - set(looked) <= set(WATCHING)
        expect(coach.locator("#next-play")).to_have_text(text["home.quickPlay"])
        expect(page.locator(".score[data-team='0'] .points")).to_have_text("3")
        assert page.evaluate("localStorage.getItem('quatro.tutorial')") == "done"
        # Nothing is rated, and nothing asks for a rematch of a tutorial.
        expect(page.locator(".rating-change, #play-again")).to_have_count(0)
        page.goto(f"{stack_url}/")
        expect(page.locator("#home-title")).to_be_visible()
        expect(offer).to_have_count(0)
    finally:
        p.close()


def test_the_guided_round_by_keyboard_alone_on_a_desktop(browser: Any, stack_url: str) -> None:
    p = new_player(browser, "Kwame", scenario=FAST, viewport=DESKTOP)
    page = p.page
    record(page)
    try:
        page.goto(f"{stack_url}/")
        tab_to(page, "#player-name")
        page.keyboard.type("Kwame")
        tab_to(page, "#tutorial-start")
        page.keyboard.press("Enter")
        page.wait_for_url("**/t/*")
        Learner(page, keys=True).play()
        assert shown(page) == SCRIPT
        tab_to(page, "#next-play")
    finally:
        p.close()


def test_skipping_leaves_the_table_says_what_next_and_how_to_play_brings_it_back(
    browser: Any, stack_url: str
) -> None:
    text = catalog("en")
    p = new_player(browser, "Noor", scenario=FAST, viewport=TALL_PHONE, touch=True)
    page = p.page
    try:
        page.goto(f"{stack_url}/")
        start(page, stack_url, "Noor")
        code = code_of(page)
        # One tutorial at a time: asking again while it is under way answers it.
        again = page.request.post(f"{stack_url}/api/tutorial", headers=auth(page), data={})
        assert (again.status, again.json()["code"]) == (201, code)
        learner = Learner(page)
        for step in ("sign", "ready"):
            # The coach's next step comes with the table's next event: wait for it.
            expect(page.locator(".coach")).to_have_attribute("data-step", step)
            learner.do(step)
        expect(page.locator(".coach")).to_have_attribute("data-step", "swap")
        page.locator("#coach-skip").tap()
        # Home, with where to go next; the tutorial's match is over and no longer the player's.
        left = page.locator("#tutorial-left")
        expect(left).to_contain_text(text["tutorial.leftTitle"])
        expect(left.locator("#next-play")).to_be_visible()
        expect(left.locator("#next-practice")).to_be_visible()
        assert page.evaluate("localStorage.getItem('quatro.tutorial')") == "skipped"
        expect(page.locator("#tutorial-offer")).to_have_count(0)
        summary = page.request.get(f"{stack_url}/api/tables/{code}").json()
        assert summary["phase"] == "over"
        assert session(page, stack_url)["tables"] == []
        # "How to play" offers it again: a new tutorial starts at once, the name known.
        page.goto(f"{stack_url}/static/help/en.html")
        page.locator("#guided-round").tap()
        page.wait_for_url("**/t/*")
        expect(page.locator(".coach")).to_have_attribute("data-step", "sign")
        assert code_of(page) != code
        page.locator("#coach-skip").tap()
        expect(left).to_be_visible()
    finally:
        p.close()
