"""Coming back: a player who leaves a live table (the browser's Back button) finds "Return to
your table" on the home page and is seated again at once; a player whose seat was given up sees
no such link, nor does anyone without a seat — on a phone in Arabic and a desktop in English; and
once a match the player left is over, it is gone from the list (issue 33)."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from playwright.sync_api import ViewportSize, expect

from tests.browser.players import RIGGED_4, TALL_PHONE, create_table, join_by_link, new_player
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations

PHONE: ViewportSize = {"width": 390, "height": 664}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
CALM = {**RIGGED_4, "bot_policy": "idle"}


@pytest.mark.parametrize(
    ("locale", "lang", "view"), [("ar", "ar", PHONE), ("en-US", "en", DESKTOP)]
)
def test_the_home_page_leads_back_to_a_live_table(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    words = catalog(lang)
    host = new_player(browser, "Rosa", locale=locale, scenario=CALM, viewport=view)
    guest = new_player(browser, "Bruno", locale=locale, viewport=view)
    try:
        code = create_table(host, stack_url, 4)
        join_by_link(guest, stack_url, code, 2)
        for seat in (1, 3):
            host.page.click(f"[data-addbot='{seat}']")
            expect(
                host.page.locator(f".seat-row[data-seat='{seat}'][data-kind='bot']")
            ).to_be_visible()
        # Bruno gives his seat up: the home page has nothing to offer him.
        guest.page.locator(".seat-row.mine button").click()
        expect(guest.page.locator("[data-take='2']")).to_be_visible()
        host.page.click("[data-addbot='2']")
        host.page.click("#start-match")
        expect(host.page.locator("#ready-btn")).to_be_visible()

        host.page.go_back()
        link = host.page.locator(f"a[data-return='{code}']")
        expect(link).to_have_text(words["home.returnTo"])
        assert severe_violations(host.page) == []
        link.click()
        host.page.wait_for_url(f"**/t/{code}")
        expect(host.page.locator(".table-page[data-seat='0']")).to_be_visible()

        guest.page.goto(f"{stack_url}/")
        expect(guest.page.locator("#player-name")).to_be_visible()
        guest.page.wait_for_load_state("networkidle")
        expect(guest.page.locator("a[data-return]")).to_have_count(0)

        # The endpoint behind it wants a session and tells nothing to anyone else.
        assert httpx.get(f"{stack_url}/api/sessions/tables", timeout=10).status_code == 401
    finally:
        host.close()
        guest.close()


# Smart bots on a clock a hundred times quicker: they play a match to its end in seconds.
BOTS_PLAY_ON = {"seed": 11, "time_scale": 0.01, "bot_policy": "smart"}


def test_a_match_the_player_left_is_gone_from_the_list_once_over(
    browser: Any, stack_url: str
) -> None:
    words = catalog("ht")
    p = new_player(
        browser, "Wòdlin", locale="ht", scenario=BOTS_PLAY_ON, viewport=TALL_PHONE, touch=True
    )
    try:
        page = p.page
        code = create_table(p, stack_url, 4)
        # A newcomer's table starts at relaxed; the host picks the level the bots finish at.
        page.locator("input[data-level='normal']").check()
        page.locator("#fill-bots").tap()
        page.locator("#start-match").tap()
        expect(page.locator(".table-page")).to_be_visible()
        token = json.loads(page.evaluate("localStorage.getItem('quatro.session')"))["token"]
        auth = {"Authorization": f"Bearer {token}"}

        # She leaves while it is on: the home page leads back to it.
        page.goto(f"{stack_url}/")
        expect(page.locator(f"a[data-return='{code}']")).to_have_text(words["home.returnTo"])

        # The bots play it to its end without her.
        deadline = time.monotonic() + 90
        with httpx.Client(base_url=stack_url, timeout=30) as c:
            while c.get(f"/api/tables/{code}").json()["phase"] != "over":
                assert time.monotonic() < deadline, "the bots did not finish the match in 90 s"
                time.sleep(0.5)
        # Her next table, still in its lobby, is one to return to; the finished one is not.
        lobby = create_table(p, stack_url, 6)
        page.goto(f"{stack_url}/")
        expect(page.locator(f"a[data-return='{lobby}']")).to_be_visible()
        expect(page.locator("a[data-return]")).to_have_count(1)
        assert severe_violations(page) == []
        # The server forgot it, for good: not a filter of this page's.
        with httpx.Client(base_url=stack_url, timeout=30) as c:
            mine = c.get("/api/sessions/tables", headers=auth).json()["tables"]
        assert [t["code"] for t in mine] == [lobby]

        # Back at the finished table she is still its host: the next match's bots are hers to
        # choose, beside "Play again" (issue 46: the level is always the host's to change, in
        # the lobby and between matches; never during one, engine/lobby.py).
        page.goto(f"{stack_url}/t/{code}")
        pick = page.locator(".next-level")
        expect(pick).to_contain_text(words["level.nextMatch"])
        expect(pick.locator("[aria-pressed='true']")).to_have_attribute("data-level", "normal")
        pick.locator("[data-level='sharp']").tap()
        expect(pick.locator("[aria-pressed='true']")).to_have_attribute("data-level", "sharp")
        page.locator("#play-again").tap()
        expect(page.locator(".next-level")).to_have_count(0)
        with httpx.Client(base_url=stack_url, timeout=30) as c:
            table = c.get(f"/api/tables/{code}").json()
        assert table["settings"]["bot_level"] == "sharp"
    finally:
        p.close()
