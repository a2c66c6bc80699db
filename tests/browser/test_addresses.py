"""Every address the web client pushes loads by itself (issue 46, point 4: `/leaderboard`
reloaded, opened in a new tab or shared answered `{"detail":"Not Found"}`).

A player walks the client from page to page — the leaderboards and a size's, a player's public
profile, home, their own profile, a replay from its history, a table by its code — by touch on
a phone (390×844) and by keyboard on a desktop (1280×800). Every address the client pushed on
the way is reloaded and opened in a new tab: each answers 200 and shows what it showed. The
client's own router (js/router.js, ROUTES) says which pages exist: the walk must have pushed an
address of each, and nothing it pushed may be one the router does not know. An address of no
page answers 404 with a page that says so, and on sample addresses the router and the gateway
agree on which are pages (tests/gateway/test_pages.py holds the gateway's side).
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, ViewportSize, expect

from engine.ratings import Rating
from tests.browser.bot_match import FinishedMatch
from tests.browser.conftest import STATIC
from tests.browser.players import DESKTOP, TALL_PHONE, new_player
from tests.browser.test_profiles import rated, session
from tests.browser.walker import Walker
from tests.conftest import Stack
from tests.gateway.test_pages import NOWHERE, PAGES

EN = json.loads((STATIC / "i18n" / "en.json").read_text(encoding="utf-8"))

# Every pushState of the page, kept until the next document.
RECORD_PUSHES = """(() => {
  const push = history.pushState.bind(history);
  window.__pushed = [];
  history.pushState = (state, title, url) => {
    window.__pushed.push(String(url));
    return push(state, title, url);
  };
})();"""

# The client's router, as the page imported it (its import map names the versioned module).
ROUTE_NAMES = """async () => {
  const { ROUTES } = await import("/static/js/router.js");
  return [...new Set(ROUTES.map((r) => r.name))];
}"""
ROUTE_OF = """async (paths) => {
  const { route } = await import("/static/js/router.js");
  return paths.map((p) => route(p).name);
}"""
# Whether the gateway serves a page (200) at each address, as a browser asks for one.
STATUS_OF = """async (paths) => Promise.all(paths.map(async (p) =>
  (await fetch(p, { headers: { Accept: "text/html" }, redirect: "manual" })).status))"""


def shows(page: Page, path: str, marker: str) -> None:
    expect(page).to_have_url(re.compile(f"^https?://[^/]+{re.escape(path)}$"))
    expect(page.locator(marker).first).to_be_visible()


def loads_by_itself(walker: Walker, path: str, marker: str) -> None:
    """The address reloaded, then opened in a new tab: 200, and the same page."""
    page = walker.page
    reloaded = page.reload()
    assert reloaded is not None
    assert reloaded.status == 200, (path, reloaded.status)
    shows(page, path, marker)
    tab = page.context.new_page()
    try:
        opened = tab.goto(page.url)
        assert opened is not None
        assert opened.status == 200, (path, opened.status)
        shows(tab, path, marker)
    finally:
        tab.close()


@pytest.mark.parametrize(("view", "touch"), [(TALL_PHONE, True), (DESKTOP, False)])
def test_every_address_the_client_pushes_loads_on_reload_and_in_a_new_tab(
    browser: Any,
    stack: Stack,
    stack_url: str,
    finished_match: FinishedMatch,
    view: ViewportSize,
    touch: bool,
) -> None:
    me, code, table_id = finished_match.session, finished_match.code, finished_match.table_id
    # A player at the top of the 4-seat leaderboard who shows their ratings: a link to a
    # public profile.
    star = session(stack_url, "Étoile")
    rated(stack, star["player_id"], 4, Rating(60.0, 1.0), 40, 30)
    shown = httpx.patch(
        f"{stack_url}/api/profiles/me",
        json={"ratings": True},
        headers={"Authorization": f"Bearer {star['token']}"},
        timeout=30,
    )
    assert shown.status_code == 200, shown.text
    player = new_player(browser, "Ana", viewport=view, touch=touch)
    player.context.add_init_script(
        f"localStorage.setItem('quatro.session', {json.dumps(json.dumps(me))});"
    )
    player.context.add_init_script(RECORD_PUSHES)
    walker = Walker.of(player, touch)
    page = walker.page
    # (how to get there, the address it pushes, what the page there shows); an address met
    # again is not loaded again.
    walk: list[tuple[str, str, str]] = [
        ("#to-board", "/leaderboard", ".leaderboard[data-size='4'] tbody tr"),
        (
            f"a[href='/p/{star['player_id']}']",
            f"/p/{star['player_id']}",
            f"[data-player='{star['player_id']}'] #profile-name-shown",
        ),
        ("#to-home", "/", "#home-title"),
        ("#to-profile", "/profile", f"[data-player='{me['player_id']}'] .history-line"),
        ("a[href='/leaderboard/6']", "/leaderboard/6", ".leaderboard[data-size='6']"),
        ("#to-profile", "/profile", f"[data-player='{me['player_id']}'] .history-line"),
        (f".replay-link[href='/replay/{table_id}']", f"/replay/{table_id}", ".replay"),
        ("#replay-home", "/", "#home-title"),
    ]
    pushed: list[str] = []
    loaded: set[str] = set()
    try:
        home = page.goto(f"{stack_url}/")
        assert home is not None
        assert home.status == 200
        expect(page.locator("#home-title")).to_be_visible()
        for target, path, marker in walk:
            walker.go(target)
            shows(page, path, marker)
            pushed += page.evaluate("window.__pushed")
            if path not in loaded:
                loads_by_itself(walker, path, marker)
                loaded.add(path)
        # A table by its code, from the join form: the finished match's last screen.
        walker.type_into("#join-code", code.lower())
        walker.go("form:has(#join-code) button[type=submit]")
        shows(page, f"/t/{code}", "#watch-replay")
        pushed += page.evaluate("window.__pushed")
        loads_by_itself(walker, f"/t/{code}", "#watch-replay")

        # Every page of the router was reached, by addresses it knows.
        names = page.evaluate(ROUTE_OF, pushed)
        assert "missing" not in names, list(zip(pushed, names, strict=True))
        assert set(names) == set(page.evaluate(ROUTE_NAMES)), pushed
        assert {p.split("?")[0] for p in pushed} == {path for _, path, _ in walk} | {f"/t/{code}"}

        # Nowhere: 404, and a page that says so, with the way home.
        nowhere = page.goto(f"{stack_url}/nowhere/at/all")
        assert nowhere is not None
        assert nowhere.status == 404
        expect(page.locator("#missing-title")).to_have_text(EN["missing.title"])
        walker.go("#to-home")
        shows(page, "/", "#home-title")
        # The router and the gateway agree on which addresses are pages.
        samples = [*PAGES, *NOWHERE]
        pages = [name != "missing" for name in page.evaluate(ROUTE_OF, samples)]
        served = [status == 200 for status in page.evaluate(STATUS_OF, samples)]
        assert pages == served, [
            s for s, a, b in zip(samples, pages, served, strict=True) if a != b
        ]
    finally:
        player.close()
