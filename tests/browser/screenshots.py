"""Make the screenshots in docs/screenshots/ from the real stack, in English and Arabic:
the lobby, a 4-seat table, an 8-seat table and a reveal.

    .venv/bin/python -m tests.browser.screenshots            # starts its own stack
    QUATRO_STACK_URL=http://127.0.0.1:8000 .venv/bin/python -m tests.browser.screenshots

Every player is a real browser context driving the page; the deals are rigged through the
test hooks so the pictures show something worth seeing (the stack it starts has them on).
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import ViewportSize, expect, sync_playwright

from tests.browser.conftest import CHROMIUM, CHROMIUM_FLAGS, ROOT
from tests.browser.own_stack import own_stack
from tests.browser.players import (
    RIGGED_4,
    Player,
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
        players[0].page.click("#call-quatro")
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


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with own_stack() as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        for lang, locale in (("en", "en-US"), ("ar", "ar")):
            scenes(browser, base, lang, locale)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
