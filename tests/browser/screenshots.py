"""Make the screenshots in docs/screenshots/ from the real stack, in English and Arabic:
the lobby, a 4-seat table, an 8-seat table and a reveal; a profile, a leaderboard and the last
reveal of a rated match with its rating change (issue 36); and in all four languages, the
guided round's steps on a phone (issue 46).

    .venv/bin/python -m tests.browser.screenshots            # starts its own stack
    .venv/bin/python -m tests.browser.screenshots tutorial   # the guided round's alone
    QUATRO_STACK_URL=http://127.0.0.1:8000 .venv/bin/python -m tests.browser.screenshots

Every player is a real browser context driving the page; the deals are rigged through the
test hooks so the pictures show something worth seeing (the stack it starts has them on). The
rated matches behind the profile and the leaderboard are played over the wire as the client plays
them, each by its human host against a rival on the other team (a match against bots alone is
not rated, issue 46), idle bots as their partners, so that they end in seconds; the first
player plays enough of them to be listed on the leaderboard.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import httpx
from playwright.sync_api import ViewportSize, expect, sync_playwright
from websockets.sync.client import connect

from engine.ratings import ESTABLISHED_AFTER
from tests.browser.conftest import CHROMIUM, CHROMIUM_FLAGS, ROOT
from tests.browser.guided import Learner, start
from tests.browser.own_stack import own_stack
from tests.browser.players import (
    RIGGED_4,
    Player,
    call,
    create_table,
    join_by_link,
    new_player,
    swap_by_taps,
    wait_hand,
    wait_swap_ready,
)

OUT = ROOT / "docs" / "screenshots"
PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 860}
NAMES = ["Ana", "Jean-Baptiste", "Marie", "فاطمة", "Youssef", "Nadia", "Luc", "Wilner"]

# The same rigged deal as the browser tests, at full speed so nothing moves mid-picture.
DEAL_4 = {**RIGGED_4, "seed": 11, "time_scale": 1.0}
DEAL_8 = {
    "seed": 12,
    "time_scale": 1.0,
    "deals": [
        {
            "hands": [
                ["A", "A", "K", "Q"],
                ["J", "J", "10", "9"],
                ["8", "8", "7", "6"],
                ["K", "K", "Q", "J"],
                ["10", "10", "9", "9"],
                ["7", "7", "6", "6"],
                ["Q", "Q", "J", "10"],
                ["9", "8", "7", "6"],
            ],
            "center": ["A", "A", "K", "8"],
        }
    ],
}


def shoot(p: Player, name: str) -> None:
    p.page.wait_for_timeout(400)  # let the last animation settle
    # A phone's picture is its screen, as a player sees it: a whole-page picture would draw the
    # lobby's sticky start bar in the middle of the page.
    size = p.page.viewport_size
    p.page.screenshot(path=str(OUT / name), full_page=size is None or size["width"] > 600)
    print("wrote", OUT / name)


def seat_everyone(
    browser: Any, base: str, n: int, deal: dict[str, Any], host_locale: str, host_view: ViewportSize
) -> list[Player]:
    host = new_player(browser, NAMES[0], locale=host_locale, scenario=deal, viewport=host_view)
    code = create_table(host, base, n)
    others = [new_player(browser, NAMES[s], viewport=PHONE) for s in range(1, n)]
    for s, p in enumerate(others, start=1):
        join_by_link(p, base, code, s)
    return [host, *others]


def start_round(players: list[Player], sign: str) -> None:
    host = players[0]
    host.page.click("#start-match")
    for p in players:
        expect(p.page.locator("#signing-title")).to_be_visible()
    host.page.click(f".signing [data-emoji='{sign}']")
    for p in players:
        p.page.click("#ready-btn")
    for p in players:
        expect(p.page.locator(".hand-card")).to_have_count(4)


def liven(players: list[Player], emitter: int, emoji: str) -> None:
    p = players[emitter].page
    p.click("#floor-toggle")
    expect(p.locator("#floor-toggle[aria-pressed='true']")).to_be_visible()
    p.click(".emit-btn")
    p.click(f"#emit-picker [data-emoji='{emoji}']")
    # The team's own sign without a carré is asked about first: say yes.
    asked = p.locator("#confirm-sign")
    expect(asked.or_(p.locator(f"section.me[data-shows='{emoji}']"))).to_be_visible()
    if asked.count():
        asked.click()
    expect(players[0].page.locator(f".seat[data-seat='{emitter}'] .bubble")).to_be_visible()


def scenes(browser: Any, base: str, lang: str, locale: str) -> None:
    # Lobby: two humans, a bot, one free seat, seen by the host on a phone.
    host = new_player(browser, NAMES[0], locale=locale, viewport=PHONE)
    guest = new_player(browser, NAMES[3], viewport=PHONE)
    try:
        code = create_table(host, base, 4)
        join_by_link(guest, base, code, 3)
        host.page.click("[data-addbot='1']")
        expect(host.page.locator(".seat-row[data-seat='1'][data-kind='bot']")).to_be_visible()
        shoot(host, f"{lang}-lobby.png")
    finally:
        host.close()
        guest.close()

    # Four seats on a phone: one swap done, an emission over a seat; then the reveal.
    players = seat_everyone(browser, base, 4, DEAL_4, locale, PHONE)
    try:
        start_round(players, "🍍")
        swap_by_taps(players[2].page, "K", 0)
        wait_hand(players[2].page, ["A", "A", "A", "Q"])
        liven(players, 2, "🍍")
        players[3].page.click("#floor-toggle")
        shoot(players[0], f"{lang}-table-4.png")
        wait_swap_ready(players[2].page)
        swap_by_taps(players[2].page, "Q", 1)
        wait_hand(players[2].page, ["A", "A", "A", "A"])
        players[0].page.set_viewport_size(DESKTOP)
        call(players[0].page, "#call-quatro")
        expect(players[0].page.locator(".reveal")).to_be_visible()
        shoot(players[0], f"{lang}-reveal.png")
    finally:
        for p in players:
            p.close()

    # Eight seats on a desktop.
    players = seat_everyone(browser, base, 8, DEAL_8, locale, DESKTOP)
    try:
        start_round(players, "🚀")
        liven(players, 4, "🐙")
        liven(players, 1, "🔥")
        swap_by_taps(players[0].page, "K", 0)
        wait_hand(players[0].page, ["A", "A", "A", "Q"])
        players[0].page.locator(".hand-card[data-rank='Q']").click()
        shoot(players[0], f"{lang}-table-8.png")
    finally:
        for p in players:
            p.close()


MATCH_S = 120.0  # one rated match over the wire, on a loaded 2-core machine


def lost_match(base: str, who: dict[str, Any], bot_level: str, rival: dict[str, Any]) -> str:
    """A 4-seat match its human host loses 0-5 to `rival` (seat 1), idle bots of `bot_level`
    as their partners (a stronger bot costs less rating): each round the host calls Quatro!
    while its bot partner holds no carré, which scores for the rival's team (R15), then starts
    the next. The rival is not connected, so nobody waits for them (R6). Returns the table's
    code."""
    auth = {"Authorization": f"Bearer {who['token']}"}
    with httpx.Client(base_url=base, timeout=30) as c:
        scenario = {"seed": 5, "time_scale": 1.0, "bot_policy": "idle"}
        body = {"players": 4, "scenario": scenario, "bot_level": bot_level}
        r = c.post("/api/tables", json=body, headers=auth)
        r.raise_for_status()
        code = str(r.json()["code"])
        seat = {"Authorization": f"Bearer {rival['token']}"}
        for call in (
            c.post(f"/api/tables/{code}/seats/1", headers=seat),
            c.post(f"/api/tables/{code}/fill", headers=auth),
            c.post(f"/api/tables/{code}/start", headers=auth),
        ):
            call.raise_for_status()
    deadline = time.monotonic() + MATCH_S
    with connect(base.replace("http", "ws", 1) + "/ws", open_timeout=30) as ws:

        def play_round() -> None:
            # Answers to frames out of phase (a sign already drawn, a Quatro! before the round
            # opens) change nothing; the next `round` event sends them again.
            for frame in ({"type": "sign", "emoji": "🍍"}, {"type": "ready"}, {"type": "quatro"}):
                ws.send(json.dumps(frame))

        ws.send(json.dumps({"type": "hello", "token": who["token"], "table": code}))
        play_round()
        while time.monotonic() < deadline:
            event = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            kind = event.get("type")
            if kind == "over":
                return code
            if kind == "pause":
                ws.send(json.dumps({"type": "next_round"}))
            elif kind in ("signing", "round"):
                play_round()
    raise TimeoutError(f"the match at {code} did not end in {MATCH_S} s")


def session(base: str, name: str) -> dict[str, Any]:
    r = httpx.post(f"{base}/api/sessions", json={"name": name}, timeout=30)
    r.raise_for_status()
    return dict(r.json())


def rated_players(base: str) -> tuple[dict[str, Any], str]:
    """A few players with rated matches against one rival: bots of different levels give
    different ratings, two of them keep theirs hidden; the first plays ten (established, so
    listed, as the rival is), the others fewer (provisional). Returns the first, who shows
    theirs, and their last table. The first's ten alternate between the rival and a second
    one: the same two opponents count five matches a day at most (issue 47)."""
    rivals = (session(base, NAMES[7]), session(base, NAMES[2]))
    mine: tuple[dict[str, Any], str] | None = None
    for name, levels, public in (
        (NAMES[0], ("normal", "sharp") * (ESTABLISHED_AFTER // 2), True),
        (NAMES[1], ("sharp",), True),
        (NAMES[3], ("relaxed", "relaxed"), True),
        (NAMES[4], ("normal",), False),
        (NAMES[5], ("sharp", "sharp"), True),
        (NAMES[6], ("relaxed",), False),
    ):
        who = session(base, name)
        code = ""
        for n, level in enumerate(levels):
            code = lost_match(base, who, level, rivals[n % 2 if mine is None else 0])
        if public:
            body = {"ratings": True, "history": True}
            auth = {"Authorization": f"Bearer {who['token']}"}
            httpx.patch(f"{base}/api/profiles/me", json=body, headers=auth, timeout=30)
        if mine is None:
            mine = (who, code)
    assert mine is not None
    return mine


def rated_scenes(browser: Any, base: str, lang: str, who: dict[str, Any], code: str) -> None:
    """The player's profile, the leaderboard of 4 seats, and their last match's reveal with the
    rating change, on a phone."""
    p = new_player(browser, who["name"], viewport=PHONE, touch=True)
    p.context.add_init_script(
        f"localStorage.setItem('quatro.lang', {json.dumps(lang)});"
        f"localStorage.setItem('quatro.session', {json.dumps(json.dumps(who))});"
    )
    try:
        page = p.page
        page.goto(f"{base}/profile")
        expect(page.locator(".history-line").first).to_be_visible()
        shoot(p, f"{lang}-profile.png")
        page.click("tr[data-size='4'] th a")
        expect(page.locator("tr.own-row").first).to_be_visible()
        expect(page.locator("#my-rank")).not_to_be_empty()
        shoot(p, f"{lang}-leaderboard.png")
        page.goto(f"{base}/t/{code}")
        expect(page.locator(".rating-change").first).to_be_visible(timeout=30_000)
        shoot(p, f"{lang}-reveal-rated.png")
    finally:
        p.close()


# The guided round's steps pictured, as `<lang>-tutorial-<n>-<step>.png`: the offer, the
# learner's carré, waiting for the partner's call, its point, the opponents' sign, the end.
TUTORIAL_SHOTS = ("swap", "wait", "done1", "call_contre", "finished")
TUTORIAL_LANGS = (
    ("en", "en-US", "🍍"),
    ("fr", "fr-FR", "🐙"),
    ("ht", "ht", "🦜"),
    ("ar", "ar", "🌙"),
)


def tutorial_scenes(browser: Any, base: str, lang: str, locale: str, sign: str) -> None:
    """A first visit on a phone (390×844, touch), the guided round played at its own pace."""
    p = new_player(browser, NAMES[0], locale=locale, viewport=PHONE, touch=True)
    try:
        p.page.goto(f"{base}/")
        expect(p.page.locator("#tutorial-offer")).to_be_visible()
        shoot(p, f"{lang}-tutorial-0-offer.png")
        start(p.page, base, NAMES[0])

        def each(step: str) -> None:
            if step in TUTORIAL_SHOTS:
                n = TUTORIAL_SHOTS.index(step) + 1
                shoot(p, f"{lang}-tutorial-{n}-{step.replace('_', '-')}.png")

        Learner(p.page, sign=sign).play(each)
    finally:
        p.close()


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    only_tutorial = sys.argv[1:] == ["tutorial"]
    with own_stack() as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        for lang, locale, sign in TUTORIAL_LANGS:
            tutorial_scenes(browser, base, lang, locale, sign)
        if only_tutorial:
            browser.close()
            return 0
        # First, while the last match's table is still open for its reveal.
        who, code = rated_players(base)
        for lang in ("en", "ar"):
            rated_scenes(browser, base, lang, who, code)
        for lang, locale in (("en", "en-US"), ("ar", "ar")):
            scenes(browser, base, lang, locale)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
