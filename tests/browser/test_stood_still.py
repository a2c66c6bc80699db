"""A table that stood still gets its time back on the player's screen (issue 37; docs/rules.md,
R22's decision): on a phone in Haitian Creole and in Arabic (right to left), the table's
process is frozen 3 s mid-round;
when it runs again the round's countdown shows what it showed before the freeze (not 3 s less),
and the player is told, in their language, that the table stood still and got the time back,
in a toast that covers no seat."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.players import CALM, TALL_PHONE, new_player, start_with_bots
from tests.browser.test_languages import catalog
from tests.browser.test_rough_edges import OVERLAPS
from tests.cluster.test_resilience import actor_pid
from tests.conftest import Stack

FROZEN_S = 3.0


def seconds_left(page: Page) -> int:
    minutes, seconds = page.locator(".countdown[role='timer']").first.inner_text().split(":")
    return int(minutes) * 60 + int(seconds)


@pytest.mark.parametrize(
    ("lang", "name"), [("ht", "Woslò"), ("ar", "ليلى"), ("fr", "Élodie"), ("en", "Rosa")]
)
def test_the_countdown_keeps_the_time_a_frozen_table_stood_still(
    browser: Any, stack: Stack, stack_url: str, tmp_path: Path, lang: str, name: str
) -> None:
    words = catalog(lang)
    host = new_player(browser, name, locale=lang, scenario=CALM, viewport=TALL_PHONE, touch=True)
    try:
        code = start_with_bots(host, stack_url)
        page = host.page
        pid = actor_pid(stack, code)
        before = seconds_left(page)
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(FROZEN_S)  # the fault itself: the table's process does not run
        finally:
            os.kill(pid, signal.SIGCONT)
        # The stall given back is 3 s or a pulse more: the notice says so, in the player's words.
        told = [
            words["notice.resumed"]["few" if lang == "ar" else "other"].format(n=n) for n in (3, 4)
        ]
        toast = page.locator(".toast").filter(has_text=re.compile("|".join(map(re.escape, told))))
        expect(toast).to_be_visible(timeout=10_000)
        # The countdown took the new deadline: the freeze cost the round nothing (a second of
        # slack for the countdown's own ticking and for the pulse the stall may round up).
        assert seconds_left(page) >= before - 1, (before, seconds_left(page))
        # Mid-round, the toast shows inside the ring, over none of the seats (where the sign
        # shows), their bubbles, the centre's cards or the status bar.
        expect(page.locator(".toasts")).to_have_attribute("data-where", "ring")
        kept = ".seat, .bubble, .slot, .statusbar"
        assert page.evaluate(f"() => ({OVERLAPS})(['.toast', '{kept}'])") == []
        expect(toast).to_be_visible()  # still: it was measured, not gone
        page.screenshot(path=str(tmp_path / f"{lang}-stood-still.png"))  # to look at when it fails
    finally:
        host.close()
