"""Replays in the web client (issue 13, part 3): from the end-of-match screen, "Watch the replay"
opens `/replay/{table_id}`, which plays the match back on the same table as a live game —
play/pause, speed, a scrubber that the keyboard moves — and shows at each reveal the scores and
hands the live match showed; a player of the table switches to their own seat's view (their
hands), which everyone's view never shows. In Arabic (right to left) on a phone and in English
on a desktop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, ViewportSize, expect

from tests.browser.bot_match import FinishedMatch, finished_bot_match
from tests.browser.emoji_fonts import all_drawn
from tests.browser.players import new_player
from tests.browser.test_match import severe_violations

PHONE: ViewportSize = {"width": 390, "height": 664}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
CATALOGS = Path(__file__).resolve().parents[2] / "gateway" / "static" / "i18n"
PLAY, PAUSE = "25b6", "23f8"  # the play and pause pictures (vendor/twemoji/)


def scrub(page: Page, pos: int) -> None:
    """Move the scrubber to `pos` as a drag would (an `input` event)."""
    page.locator("#replay-scrubber").evaluate(
        "(el, pos) => { el.value = String(pos); el.dispatchEvent(new Event('input', "
        "{bubbles: true})); }",
        pos,
    )
    expect(page.locator(".replay")).to_have_attribute("data-pos", str(pos))


def shown_scores(page: Page) -> list[int]:
    points = page.locator(".statusbar .points").evaluate_all(
        "els => els.map(e => Number(e.dataset.score))"
    )
    return [int(x) for x in points]


@pytest.mark.parametrize(
    ("locale", "lang", "view"), [("ar", "ar", PHONE), ("en-US", "en", DESKTOP)]
)
def test_the_end_of_a_match_links_to_its_replay_which_plays_it_back(
    browser: Any,
    stack_url: str,
    finished_match: FinishedMatch,
    locale: str,
    lang: str,
    view: ViewportSize,
) -> None:
    session, code = finished_match.session, finished_match.code
    words = json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8"))
    host = new_player(browser, "Ana", locale=locale, viewport=view)
    host.context.add_init_script(
        f"localStorage.setItem('quatro.session', {json.dumps(json.dumps(session))});"
    )
    try:
        page = host.page
        page.goto(f"{stack_url}/t/{code}")
        expect(page.locator("html")).to_have_attribute("dir", "rtl" if lang == "ar" else "ltr")
        link = page.locator("#watch-replay")
        expect(link).to_have_text(words["replay.watch"])
        link.click()
        page.wait_for_url("**/replay/table-*")
        table_id = page.url.rsplit("/", 1)[1]
        expect(page.locator(".replay")).to_have_attribute("data-view", "public")
        expect(page.locator("#replay-title")).to_have_text(words["replay.title"])
        expect(page.locator("html")).to_have_attribute("dir", "rtl" if lang == "ar" else "ltr")
        with httpx.Client(base_url=stack_url, timeout=30) as c:
            public = c.get(f"/api/replays/{table_id}").json()
            auth = {"Authorization": f"Bearer {session['token']}"}
            own = c.get(f"/api/replays/{table_id}?view=own", headers=auth).json()
        events = public["events"]

        # Every reveal of the match, at its moment: the scores and every hand it showed.
        reveals = [i for i, e in enumerate(events) if e["type"] == "reveal"]
        assert len(reveals) >= 5
        for i in reveals:
            # The reveal panel opens with the `pause` (or `over`) that follows the reveal.
            shown = next(j for j in range(i, len(events)) if events[j]["type"] in ("pause", "over"))
            scrub(page, shown + 1)
            assert shown_scores(page) == events[i]["scores"]
            expect(page.locator(".reveal.panel")).to_be_visible()
            # Each team's sign is its picture (and no emoji is left as text).
            signs = [s for s in events[i]["signs"] if s]
            team_signs = page.locator(".reveal-team [data-sign] img.pic")
            expect(team_signs).to_have_count(len(signs))
            assert (
                team_signs.evaluate_all("ps => ps.map(p => p.closest('[data-sign]').dataset.sign)")
                == signs
            )
            all_drawn(page)
            for seat, hand in enumerate(events[i]["hands"]):
                cards = page.locator(f".reveal-seat[data-seat='{seat}'] .card")
                ranks = cards.evaluate_all("els => els.map(e => e.dataset.rank)")
                assert ranks == [c["rank"] for c in hand], (i, seat)
        over = events[-1]
        assert over["type"] == "over"
        expect(page.locator(".winners")).to_have_attribute(
            "data-winners", ",".join(str(w) for w in over["winners"])
        )
        assert severe_violations(page) == []

        # The keyboard moves the scrubber: Home to the first deal, End to the last move.
        scrubber = page.locator("#replay-scrubber")
        scrubber.focus()
        page.keyboard.press("Home")
        first = int(scrubber.get_attribute("min") or 0)
        expect(page.locator(".replay")).to_have_attribute("data-pos", str(first))
        page.keyboard.press("End")
        expect(page.locator(".replay")).to_have_attribute("data-pos", str(len(events)))
        page.keyboard.press("Home")
        # Play at 8×: the moves go by on their own; pause stops them.
        page.select_option("#replay-speed", "8")
        play = page.locator("#replay-play")
        expect(play.locator(f"img.pic[data-pic='{PLAY}']")).to_be_visible()
        play.focus()
        page.keyboard.press("Enter")
        expect(play).to_have_attribute("aria-pressed", "true")
        expect(play.locator(f"img.pic[data-pic='{PAUSE}']")).to_be_visible()
        page.wait_for_function(
            "n => Number(document.querySelector('.replay').dataset.pos) > n + 3", arg=first
        )
        play.click()
        expect(play).to_have_attribute("aria-pressed", "false")
        stopped = page.locator(".replay").get_attribute("data-pos")
        page.wait_for_timeout(600)  # paused: nothing moves (a deadline would hide a bug here)
        expect(page.locator(".replay")).to_have_attribute("data-pos", str(stopped))

        # Everyone's view never shows a hand; the host's own view shows theirs, as dealt.
        dealt = next(i for i, e in enumerate(events) if e["type"] == "round")
        scrub(page, dealt + 1)
        expect(page.locator(".slot .card")).to_have_count(4)
        expect(page.locator(".hand-card")).to_have_count(0)
        page.click("#replay-view")
        expect(page.locator(".replay")).to_have_attribute("data-view", "own")
        mine = next(i for i, e in enumerate(own["events"]) if e["type"] == "round")
        scrub(page, mine + 1)
        ranks = page.locator(".hand-card").evaluate_all("els => els.map(e => e.dataset.rank)")
        assert ranks == [c["rank"] for c in own["events"][mine]["hand"]]
        assert severe_violations(page) == []
    finally:
        host.close()


def test_a_table_closed_to_watchers_is_replayed_only_by_its_players(
    browser: Any, stack_url: str
) -> None:
    session, _, table_id = finished_bot_match(stack_url, watchers=False)
    words = json.loads((CATALOGS / "fr.json").read_text(encoding="utf-8"))
    stranger = new_player(browser, "Lou", locale="fr-FR", viewport=PHONE)
    host = new_player(browser, "Ana", locale="fr-FR", viewport=PHONE)
    host.context.add_init_script(
        f"localStorage.setItem('quatro.session', {json.dumps(json.dumps(session))});"
    )
    try:
        # Someone who only has the link is told why, and offered nothing more.
        stranger.page.goto(f"{stack_url}/replay/{table_id}")
        expect(stranger.page.locator("section[role='alert']")).to_contain_text(
            words["replay.private"]
        )
        expect(stranger.page.locator("#replay-own-instead")).to_have_count(0)
        # Its player is offered their own seat's view, which plays.
        page = host.page
        page.goto(f"{stack_url}/replay/{table_id}")
        expect(page.locator("section[role='alert']")).to_contain_text(words["replay.private"])
        page.click("#replay-own-instead")
        expect(page.locator(".replay")).to_have_attribute("data-view", "own")
        # Back to everyone's view: refused again, never shown.
        page.click("#replay-view")
        expect(page.locator("section[role='alert']")).to_contain_text(words["replay.private"])
        expect(page.locator(".replay")).to_have_count(0)
        assert severe_violations(page) == []
    finally:
        stranger.close()
        host.close()
