"""During the swap cooldown (R10) the hand looks and behaves unavailable: its cards are disabled
while the ring runs, so a tap does nothing instead of earning a red `cooldown` toast, and they
come back by themselves. At rest the table's page renders only what changes: the clock's
seconds, not the hand and the floor on a beat (which starved a slow phone's frames)."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

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
        renders = renders_while_the_clock_ticks(bruno.page, 3)
        assert renders.get("Countdown", 0) >= 3, renders
        assert renders.get("Hand", 0) <= 1, renders
        assert renders.get("FloorControls", 0) <= 1, renders
    finally:
        for p in players:
            p.close()


COUNT_RENDERS = """async () => {
  const { options } = await import("preact");
  const seen = (window.__renders = {});
  const before = options.diffed;
  options.diffed = (vnode) => {
    if (typeof vnode.type === "function") seen[vnode.type.name] = (seen[vnode.type.name] || 0) + 1;
    before?.(vnode);
  };
}"""


def renders_while_the_clock_ticks(page: Page, seconds: int) -> dict[str, int]:
    """How many times each component rendered while the round's clock showed `seconds` more
    seconds and nothing else happened (Preact's public `diffed` hook counts them)."""
    clock = page.locator(".statusbar [role='timer']")
    page.evaluate(COUNT_RENDERS)
    shown = clock.text_content()
    for _ in range(seconds):
        expect(clock).not_to_have_text(shown or "", timeout=5_000)
        shown = clock.text_content()
    found = page.evaluate("window.__renders")
    assert isinstance(found, dict)
    return {str(k): int(v) for k, v in found.items()}
