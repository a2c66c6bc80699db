"""Driving the real web client the way a player does: through the page, never the API.

Shared by the browser tests and by `screenshots.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import BrowserContext, Page, ViewportSize, expect

# Seat 2 (partner of the host, seat 0) is dealt two aces and the centre holds the other two:
# two swaps give it a carré, and the host's Quatro! scores for team 0. R4 holds: no hand has
# three of a rank.
RIGGED_4 = {
    "seed": 7,
    "time_scale": 0.25,
    "deals": [
        {
            "hands": [
                ["K", "K", "Q", "Q"],
                ["J", "J", "10", "10"],
                ["A", "A", "K", "Q"],
                ["K", "Q", "J", "10"],
            ],
            "center": ["A", "A", "J", "10"],
        }
    ],
}

# The two screens most tests are shown on: a phone, and a desktop.
PHONE: ViewportSize = {"width": 390, "height": 664}
# The whole screen of the phone issue 33 was found on, and a small one.
TALL_PHONE: ViewportSize = {"width": 390, "height": 844}
SMALL_PHONE: ViewportSize = {"width": 320, "height": 568}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
# RIGGED_4 with bots that never act and a real-time clock: nothing moves unless a test does it.
CALM = {**RIGGED_4, "bot_policy": "idle", "time_scale": 1.0}


@dataclass
class Player:
    name: str
    context: BrowserContext
    page: Page

    def close(self) -> None:
        self.context.close()


def new_player(
    browser: Any,
    name: str,
    *,
    locale: str = "en-US",
    scenario: dict[str, Any] | None = None,
    viewport: ViewportSize | None = None,
    reduced_motion: bool = True,
    touch: bool = False,
    service_worker: bool = False,
) -> Player:
    """`touch`: a phone's browser (a touch screen, no mouse, a mobile viewport).
    `service_worker`: the client's worker installs (the offline shell, tests/browser/
    test_app_shell.py). Elsewhere it is blocked: every context is a first visit, whose worker
    fetches and stores the ~100 files of the shell in the background (the page's own files come
    from the network, as they do before a worker installs). Four of the busiest browser modules
    took 221 CPU-s with it and 196 without (`python -m lab.cpu_by_process`, tests/README.md)."""
    context = browser.new_context(
        locale=locale,
        viewport=viewport or {"width": 1100, "height": 900},
        reduced_motion="reduce" if reduced_motion else "no-preference",
        has_touch=touch,
        is_mobile=touch,
        service_workers="allow" if service_worker else "block",
    )
    if scenario is not None:
        # The client adds this to POST /api/tables; the server accepts it only with test hooks.
        context.add_init_script(
            f"sessionStorage.setItem('quatro.scenario', {json.dumps(json.dumps(scenario))});"
        )
    page = context.new_page()
    page.set_default_timeout(15_000)
    return Player(name, context, page)


def create_table(p: Player, base: str, players: int) -> str:
    p.page.goto(f"{base}/")
    p.page.fill("#player-name", p.name)
    p.page.click(f"button[data-players='{players}']")
    p.page.wait_for_url("**/t/*")
    code = p.page.locator("[data-code]").get_attribute("data-code")
    assert code
    expect(p.page.locator(".seat-row.mine[data-seat='0']")).to_be_visible()
    return code


def join_by_code(p: Player, base: str, code: str, seat: int) -> None:
    p.page.goto(f"{base}/")
    p.page.fill("#player-name", p.name)
    p.page.fill("#join-code", code.lower())
    p.page.click("form button[type=submit]")
    take_seat(p, seat)


def join_by_link(p: Player, base: str, code: str, seat: int) -> None:
    p.page.goto(f"{base}/t/{code}")
    p.page.fill("#player-name", p.name)
    take_seat(p, seat)


def take_seat(p: Player, seat: int) -> None:
    p.page.click(f"[data-take='{seat}']")
    expect(p.page.locator(f".seat-row.mine[data-seat='{seat}']")).to_be_visible()


def hand_ranks(page: Page) -> list[str]:
    ranks = page.locator(".hand-card").evaluate_all("els => els.map(e => e.dataset.rank)")
    return sorted(ranks)


def wait_hand(page: Page, ranks: list[str]) -> None:
    page.wait_for_function(
        "want => JSON.stringify([...document.querySelectorAll('.hand-card')]"
        ".map(e => e.dataset.rank).sort()) === want",
        arg=json.dumps(sorted(ranks), separators=(",", ":")),
    )


def swap_by_taps(page: Page, rank: str, slot: int) -> None:
    page.locator(f".hand-card[data-rank='{rank}']").first.click()
    page.click(f".slot[data-slot='{slot}']")


def swap_by_drag(page: Page, rank: str, slot: int) -> None:
    card = page.locator(f".hand-card[data-rank='{rank}']").first.bounding_box()
    target = page.locator(f".slot[data-slot='{slot}']").bounding_box()
    assert card is not None
    assert target is not None
    page.mouse.move(card["x"] + card["width"] / 2, card["y"] + card["height"] / 2)
    page.mouse.down()
    tx, ty = target["x"] + target["width"] / 2, target["y"] + target["height"] / 2
    page.mouse.move(tx, ty, steps=8)
    page.mouse.up()


def wait_swap_ready(page: Page, timeout: float = 5_000) -> None:
    """Until the hand takes a swap: the cooldown over (R10) *and* the last swap acknowledged (the
    client holds the next one while a command is pending, and under load the ack can come after
    the cooldown's end)."""
    expect(page.locator(".hand-wrap.cooling")).to_have_count(0, timeout=timeout)
    expect(page.locator(".hand-card").first).to_be_enabled(timeout=timeout)


def call(page: Page, selector: str = "#call-quatro") -> None:
    """Press a call (or a team of the Contre! picker) as a player who means it: a call that can
    only lose turns its button into "Tap again to call" (js/guard.js), and a second tap, once it
    counts, sends it. The button says so by the time the click returns (its render is a
    microtask of the click's handler); a call that went on the first tap says nothing."""
    button = page.locator(selector)
    button.click()
    # Read without waiting: a team's button leaves with its picker once the call is sent.
    guard = page.evaluate("s => document.querySelector(s)?.dataset.guard ?? ''", selector)
    if guard in ("settling", "armed"):
        expect(button).to_have_attribute("data-guard", "armed")
        button.click()


def start_with_bots(host: Player, base: str, before_start: Any = None) -> str:
    """A CALM 4-seat table of `host` and three bots, started: the host signs, is ready and
    holds RIGGED_4's first hand. `before_start(page)` looks at the lobby first. Returns the code."""
    code = create_table(host, base, 4)
    for n in (1, 2, 3):
        host.page.locator("[data-addbot]").first.click()
        expect(host.page.locator(".seat-row[data-kind='bot']")).to_have_count(n)
    if before_start is not None:
        before_start(host.page)
    host.page.click("#start-match")
    host.page.locator(".signing .emoji").first.click()
    expect(host.page.locator(".sign-fixed [data-sign]")).to_be_visible()
    host.page.click("#ready-btn")
    wait_hand(host.page, ["K", "K", "Q", "Q"])
    return code
