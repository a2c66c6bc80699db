"""A whole round in four real browsers against the real stack (Ray, Redis, gateway): create and
join through the page, sign, swap by tap and by drag, reload mid-round, and score a Quatro!."""

from __future__ import annotations

from typing import Any

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from tests.browser.players import (
    RIGGED_4,
    call,
    create_table,
    hand_ranks,
    join_by_code,
    join_by_link,
    new_player,
    swap_by_drag,
    swap_by_taps,
    wait_hand,
    wait_swap_ready,
)

SEVERE = {"serious", "critical"}


def severe_violations(page: Page) -> list[str]:
    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v.get("impact") in SEVERE
    ]


def test_four_players_sign_swap_reload_and_score_quatro(browser: Any, stack_url: str) -> None:
    host = new_player(browser, "Ana", scenario=RIGGED_4)
    west = new_player(browser, "Jean-Baptiste", locale="fr-FR")
    partner = new_player(browser, "Marie")
    east = new_player(browser, "فاطمة", locale="ar")
    players = [host, west, partner, east]
    try:
        code = create_table(host, stack_url, 4)
        join_by_code(west, stack_url, code, 1)
        join_by_link(partner, stack_url, code, 2)
        join_by_link(east, stack_url, code, 3)

        # The lobby: everyone seated, the host sees the start button enabled.
        expect(host.page.locator("#start-match")).to_be_enabled()
        assert severe_violations(host.page) == []
        assert east.page.evaluate("document.documentElement.dir") == "rtl"
        host.page.click("#start-match")

        # Signing: the host fixes the team's sign; the partner sees it, the other team does not.
        for p in players:
            expect(p.page.locator("#signing-title")).to_be_visible()
        host.page.click(".signing [data-emoji='🍍']")
        expect(partner.page.locator(".sign-fixed [data-sign='🍍']")).to_be_visible()
        expect(west.page.locator(".sign-fixed")).to_have_count(0)
        expect(partner.page.locator(".signing [data-emoji='🐢']")).to_be_disabled()
        assert severe_violations(partner.page) == []
        for p in players:
            p.page.click("#ready-btn")

        # Play: the rigged hands arrive.
        for p in players:
            expect(p.page.locator(".hand-card")).to_have_count(4)
        assert hand_ranks(partner.page) == ["A", "A", "K", "Q"]
        assert hand_ranks(host.page) == ["K", "K", "Q", "Q"]
        # Faces follow the language: French valets are "V", rois "R"; Arabic keeps the letters.
        expect(west.page.locator(".hand-card[data-rank='J'] .rank").first).to_have_text("V")
        expect(east.page.locator(".hand-card[data-rank='K'] .rank").first).to_have_text("K")
        assert severe_violations(host.page) == []
        assert east.page.evaluate("getComputedStyle(document.body).direction") == "rtl"

        # The partner swaps K for the centre ace in slot 0 by tapping, then Q by dragging.
        swap_by_taps(partner.page, "K", 0)
        wait_hand(partner.page, ["A", "A", "A", "Q"])
        expect(host.page.locator(".slot[data-slot='0'] .card")).to_have_attribute("data-rank", "K")
        expect(west.page.locator(".slot[data-slot='0'] .card .rank")).to_have_text("R")
        wait_swap_ready(partner.page)
        swap_by_drag(partner.page, "Q", 1)
        wait_hand(partner.page, ["A", "A", "A", "A"])
        expect(west.page.locator(".slot[data-slot='1'] .card")).to_have_attribute("data-rank", "Q")

        # A reload mid-round finds the same hand (the session token stays in the browser).
        partner.page.reload()
        wait_hand(partner.page, ["A", "A", "A", "A"])
        expect(partner.page.locator(".our-sign[data-sign='🍍']")).to_be_visible()

        # R16: holding the carré yourself, Quatro! asks first; cancelling sends nothing.
        partner.page.click("#call-quatro")
        expect(partner.page.locator("[role=dialog]")).to_be_visible()
        partner.page.click("[role=dialog] button:not(#confirm-quatro)")
        expect(partner.page.locator("[role=dialog]")).to_have_count(0)
        expect(partner.page.locator("#call-quatro")).to_be_enabled()

        # The host calls: the partner's carré scores for team 0, seen by everyone. The partner's
        # floor shows nothing, so the call takes a second tap (js/guard.js).
        call(host.page, "#call-quatro")
        for p in players:
            expect(p.page.locator(".reveal")).to_be_visible()
            expect(p.page.locator(".score[data-team='0'] .points")).to_have_text("1")
            expect(p.page.locator(".score[data-team='1'] .points")).to_have_text("0")
            expect(p.page.locator(".reveal-seat.carre[data-seat='2']")).to_be_visible()
        # The pause after a reveal is 7.5 s at this time_scale: what it shows is read first,
        # then scanned (two accessibility scans on a loaded machine can outlast the pause).
        expect(host.page.locator("#start-now")).to_be_visible()
        expect(west.page.locator("#start-now")).to_have_count(0)
        # The caller, the call and the point are written out in each player's language.
        expect(west.page.locator(".reveal-text")).to_contain_text("Quatro !")
        expect(west.page.locator(".reveal-text")).to_contain_text("Équipe 1")
        expect(east.page.locator(".reveal-text")).to_contain_text("الفريق 1")
        assert severe_violations(host.page) == []
        assert severe_violations(east.page) == []
    finally:
        for p in players:
            p.close()
