"""During the swap cooldown (R10) the hand looks and behaves unavailable: its cards are disabled
while the ring runs, so a tap does nothing instead of earning a red `cooldown` toast, and they
come back by themselves."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.players import RIGGED_4, swap_by_taps, wait_hand
from tests.browser.test_play_details import open_round, seat_four


def test_cards_are_unavailable_while_the_swap_cooldown_runs(browser: Any, stack_url: str) -> None:
    players, _ = seat_four(browser, stack_url, {**RIGGED_4, "time_scale": 1.0})
    host, bruno, _, _ = players
    try:
        open_round(players)
        swap_by_taps(bruno.page, "J", 3)
        wait_hand(bruno.page, ["10", "10", "10", "J"])
        # Confirmed by the table (another player sees it), the 2 s cooldown now runs.
        expect(host.page.locator(".slot[data-slot='3'] .card")).to_have_attribute("data-rank", "J")
        cooling = bruno.page.locator(".hand-wrap.cooling .hand-card")
        expect(cooling.first).to_be_disabled()
        expect(cooling).to_have_count(4)
        for i in range(4):
            expect(cooling.nth(i)).to_be_disabled()
        expect(bruno.page.locator(".toast")).to_have_count(0)
        # Over by itself: the cards are playable again.
        expect(bruno.page.locator(".hand-wrap.cooling")).to_have_count(0, timeout=10_000)
        expect(bruno.page.locator(".hand-card").first).to_be_enabled()
    finally:
        for p in players:
            p.close()
