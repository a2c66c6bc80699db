"""The table's pop-ups never cover a seat, and close on Escape and on a press outside (issue 46,
point 4: the desktop watchers pop-up closed on neither, and covered the partner's seat, where a
player watches for the sign).

Every pop-up of the table, at 8 seats (the most seats around the ring), by touch on a phone
(390×844) and by keyboard on a desktop (1280×800): the host's watchers switch, the emoji picker,
the question before showing the team's own sign, Contre!'s choice of team and Quatro!'s reminder
on one's own carré (R16). Each, once open, is measured: its box overlaps no seat's box (nor a
seat's emoji bubble). Each then closes on Escape (focus back on what opened it) and, opened
again, on a press outside it — and the press that closes a call's dialog calls nothing.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, ViewportSize, expect

from tests.browser.players import (
    DESKTOP,
    TALL_PHONE,
    new_player,
    swap_by_taps,
    wait_hand,
    wait_swap_ready,
)
from tests.browser.test_profiles import session
from tests.browser.walker import Walker

# Seat 0 holds A A K Q and the centre A A J 10: two swaps make its own carré (R16's reminder).
# Idle bots keep the centre still; a real-time clock leaves the round its 3 minutes.
RIGGED_8 = {
    "seed": 5,
    "time_scale": 1.0,
    "bot_policy": "idle",
    "deals": [
        {
            "hands": [
                ["A", "A", "K", "Q"],
                ["K", "K", "Q", "Q"],
                ["K", "J", "J", "10"],
                ["Q", "J", "10", "10"],
                ["9", "9", "8", "8"],
                ["9", "9", "8", "8"],
                ["7", "7", "6", "6"],
                ["7", "7", "6", "6"],
            ],
            "center": ["A", "A", "J", "10"],
        }
    ],
}

# Every pop-up shown now, each with the seats (and their emoji bubbles) its box overlaps.
OVERLAPS = """() => {
  const shown = (sel) => [...document.querySelectorAll(sel)].filter((e) => e.checkVisibility());
  const seats = shown(".ring .seat, .ring .seat .bubble");
  const over = (a, b) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  return shown(".popover, [role=dialog]").map((pop) => {
    const box = pop.getBoundingClientRect();
    return {
      pop: pop.id || pop.className,
      seats: seats.length,
      covers: seats
        .filter((s) => over(box, s.getBoundingClientRect()))
        .map((s) => s.closest(".seat").dataset.seat),
    };
  });
}"""

# A point of the felt where a press reaches no control: outside every pop-up.
FELT_POINT = """() => {
  const ring = document.querySelector(".ring").getBoundingClientRect();
  for (let fy = 0.45; fy < 0.95; fy += 0.05) {
    for (let fx = 0.3; fx < 0.7; fx += 0.05) {
      const x = ring.left + ring.width * fx;
      const y = ring.top + ring.height * fy;
      // Under a dialog's catcher (which takes the press: that is the point) or bare.
      const hit = document.elementsFromPoint(x, y).find((e) => !e.matches(".backdrop"));
      if (hit?.matches(".felt, .middle, .ring")) return [x, y];
    }
  }
  return null;
}"""


def table(base: str, host: dict[str, Any]) -> str:
    """A started 8-seat table of `host` and idle bots, closed to watchers (so that the host's
    switch shows on a phone too)."""
    auth = {"Authorization": f"Bearer {host['token']}"}
    with httpx.Client(base_url=base, timeout=30, headers=auth) as c:
        made = c.post("/api/tables", json={"players": 8, "scenario": RIGGED_8})
        assert made.status_code == 201, made.text
        code = str(made.json()["code"])
        assert c.post(f"/api/tables/{code}/fill").is_success
        assert c.patch(f"/api/tables/{code}/settings", json={"watchers": False}).is_success
        assert c.post(f"/api/tables/{code}/start").is_success
    return code


def covers_no_seat(page: Page) -> None:
    found = page.evaluate(OVERLAPS)
    assert found, "no pop-up is shown"
    for pop in found:
        assert pop["seats"] == 7, pop  # every other seat of the ring, drawn
        assert pop["covers"] == [], pop


def press_outside(walker: Walker) -> None:
    point = walker.page.evaluate(FELT_POINT)
    assert point is not None, "no bare felt to press"
    if walker.touch:
        walker.page.touchscreen.tap(*point)
    else:
        walker.page.mouse.click(*point)


def closes_both_ways(
    walker: Walker, opener: str, shown: Locator, then: str | None = None, back: str | None = None
) -> None:
    """The pop-up `opener` opens (through `then`, a second step, for a dialog a pick opens):
    measured, closed by Escape with focus back on its opener (or on `back`), opened again,
    closed by a press outside."""
    page = walker.page
    for close in ("Escape", "press"):
        walker.go(opener)
        if then is not None:
            walker.go(then)
        expect(shown).to_be_visible()
        expect(shown).to_be_in_viewport()
        covers_no_seat(page)
        if close == "Escape":
            walker.keys.press("Escape")
            expect(shown).to_be_hidden()
            expect(page.locator(back or opener)).to_be_focused()
        else:
            press_outside(walker)
            expect(shown).to_be_hidden()


@pytest.mark.parametrize(("view", "touch"), [(TALL_PHONE, True), (DESKTOP, False)])
def test_no_pop_up_covers_a_seat_and_each_closes_on_escape_and_a_press_outside(
    browser: Any, stack_url: str, view: ViewportSize, touch: bool
) -> None:
    host = session(stack_url, "Ana")
    code = table(stack_url, host)
    player = new_player(browser, "Ana", viewport=view, touch=touch)
    player.context.add_init_script(
        f"localStorage.setItem('quatro.session', {json.dumps(json.dumps(host))});"
    )
    walker = Walker.of(player, touch)
    page = walker.page
    try:
        page.goto(f"{stack_url}/t/{code}")
        wait_hand(page, ["A", "A", "K", "Q"])
        expect(page.locator(".ring .seat")).to_have_count(7)
        sign = page.locator(".our-sign").get_attribute("data-sign")
        assert sign

        # The host's switch of watchers, in the status bar.
        menu = page.locator(".watch-menu .popover")
        closes_both_ways(walker, ".watch-menu summary", menu)

        # The emoji picker.
        walker.go("#floor-toggle")
        expect(page.locator("#emit-toggle")).to_be_visible()
        closes_both_ways(walker, "#emit-toggle", page.locator("#emit-picker"))

        # Showing the team's own sign without a carré is asked about first.
        asked = page.locator("[role=dialog]:has(#confirm-sign)")
        pick = f"#emit-picker [data-emoji='{sign}']"
        closes_both_ways(walker, "#emit-toggle", asked, then=pick, back="#emit-toggle")
        expect(page.locator(".me")).to_have_attribute("data-shows", "")  # nothing was shown

        # Contre! names a team at 8 seats; closing the choice calls nothing.
        closes_both_ways(walker, "#call-contre", page.locator("[role=dialog]:has(.team-choice)"))

        # Quatro! on one's own carré is reminded first (R16); closing the reminder calls nothing.
        swap_by_taps(page, "K", 0)
        wait_swap_ready(page)
        swap_by_taps(page, "Q", 1)
        wait_hand(page, ["A", "A", "A", "A"])
        closes_both_ways(walker, "#call-quatro", page.locator("[role=dialog]:has(#confirm-quatro)"))
        expect(page.locator(".table-page")).to_have_attribute("data-phase", "playing")
    finally:
        player.close()
