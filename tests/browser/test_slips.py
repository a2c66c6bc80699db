"""No point lost to a slip (issue 46, point 2), in real browsers against the real stack: a call
that can only lose — Quatro! while the partner's floor shows nothing, Contre! on a team none of
whose players took two cards of one rank from the centre — turns its button into "Tap again to
call" and goes only on a second tap (touch, or Enter twice), while the right call goes on one;
the device's switch on the profile page turns that off; the client decides as engine/hints.py
does; and the carré hint stays on screen through the swap's cooldown."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from engine import CastVote, ChooseSign, Emit, RequestVote, SetFloor, Swap
from engine.hints import carre_possible, contre_needs_confirm, quatro_needs_confirm
from tests.browser.players import (
    DESKTOP,
    RIGGED_4,
    TALL_PHONE,
    Player,
    create_table,
    join_by_link,
    new_player,
    swap_by_taps,
    wait_hand,
    wait_swap_ready,
)
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations
from tests.browser.test_newcomers import HOST_CARRE, PINEAPPLE, make_host_carre
from tests.engine.tables import Game, deal

EN = catalog("en")
AR = catalog("ar")
# RIGGED_4 (the host holds K K Q Q, the centre A A J 10) with idle bots, on a clock twice as
# fast: a first tap waits 2 s for its second, a swap's cooldown is 1 s.
SLIPS = {**RIGGED_4, "bot_policy": "idle", "time_scale": 0.5}


def guard(page: Page, selector: str) -> str:
    return str(page.evaluate("s => document.querySelector(s)?.dataset.guard ?? ''", selector))


def points(page: Page, team: int) -> Any:
    return page.locator(f".score[data-team='{team}'] .points")


def next_round(host: Player, guest: Player) -> None:
    """The host skips the pause (R23); both sign and say they are ready."""
    host.page.click("#start-now")
    for p in (host, guest):
        p.page.locator(".signing .emoji").first.click()
        p.page.click("#ready-btn")
    for p in (host, guest):
        expect(p.page.locator(".hand-card")).to_have_count(4)


def test_a_call_that_can_only_lose_takes_a_second_tap_and_the_right_one_goes_at_once(
    browser: Any, stack_url: str
) -> None:
    """The host on a touch phone (English), an opponent at a desktop's keyboard (Arabic), two
    idle bots. Four rounds, each ended by one call: a Contre! with evidence (one press), a
    Quatro! tapped twice, a Contre! by Enter twice, and one press with the switch off."""
    host = new_player(browser, "Ana", scenario=SLIPS, viewport=TALL_PHONE, touch=True)
    guest = new_player(browser, "فاطمة", locale="ar", viewport=DESKTOP)
    try:
        code = create_table(host, stack_url, 4)
        join_by_link(guest, stack_url, code, 1)
        for seat in (2, 3):
            host.page.click(f"[data-addbot='{seat}']")
            expect(
                host.page.locator(f".seat-row[data-seat='{seat}'][data-kind='bot']")
            ).to_be_visible()
        host.page.click("#start-match")
        for p in (host, guest):
            p.page.locator(".signing .emoji").first.click()
            p.page.click("#ready-btn")
        wait_hand(host.page, ["K", "K", "Q", "Q"])
        expect(guest.page.locator(".hand-card")).to_have_count(4)

        # Round 1. Nobody took anything yet: the opponent's Contre! can only lose. Enter once
        # turns the button into "Press again to call", says why, and sends nothing.
        contre = guest.page.locator("#call-contre")
        calls = guest.page.locator(".calls button")
        boxes = [b.bounding_box() for b in calls.all()]
        contre.focus()
        guest.page.keyboard.press("Enter")
        expect(contre).to_have_attribute("data-guard", "armed")
        expect(contre.locator(".again")).to_have_text(AR["guard.pressAgain"])
        # Nothing moves: the words wrap inside the button's own box.
        assert [b.bounding_box() for b in calls.all()] == boxes
        expect(contre).to_contain_text(AR["call.contre"])
        expect(guest.page.locator("#live-urgent")).to_contain_text(AR["guard.saidContre"])
        assert severe_violations(guest.page) == []
        # Left alone, it forgets the first press after a few seconds (4 s, halved here).
        expect(contre).to_have_attribute("data-guard", "", timeout=5_000)
        expect(contre.locator(".again")).to_have_count(0)
        assert guest.page.locator(".reveal").count() == 0

        # On the phone: Quatro! with nothing on the partner's floor asks the same, keeping its
        # place and size; a tap on Contre! then moves the question there.
        quatro = host.page.locator("#call-quatro")
        before = quatro.bounding_box()
        quatro.tap()
        expect(quatro).to_have_attribute("data-guard", "armed")
        expect(quatro.locator(".again")).to_have_text(EN["guard.tapAgain"])
        assert quatro.bounding_box() == before
        expect(host.page.locator("#live-urgent")).to_contain_text(EN["guard.saidQuatro"])
        host.page.locator("#call-contre").tap()
        expect(host.page.locator("#call-contre")).to_have_attribute("data-guard", "armed")
        assert guard(host.page, "#call-quatro") == ""
        assert severe_violations(host.page) == []

        # The host takes both aces of the centre in plain sight: evidence against team 0.
        swap_by_taps(host.page, "K", 0)
        wait_hand(host.page, ["A", "K", "Q", "Q"])
        wait_swap_ready(host.page)
        swap_by_taps(host.page, "K", 1)
        wait_hand(host.page, ["A", "A", "Q", "Q"])
        for slot in (0, 1):
            expect(guest.page.locator(f".slot[data-slot='{slot}'] .card")).to_have_attribute(
                "data-rank", "K"
            )
        # Now the opponent's Contre! could win: one press sends it (wrong: A A Q Q).
        contre.focus()
        guest.page.keyboard.press("Enter")
        for p in (host, guest):
            expect(p.page.locator(".reveal[data-reason='contre']")).to_be_visible()
        expect(points(host.page, 0)).to_have_text("1")

        # Round 2: the host's Quatro! tapped twice is sent (wrong: the idle partner swapped
        # nothing, and no hand is dealt a carré), the second tap once the first has settled.
        next_round(host, guest)
        quatro.tap()
        expect(quatro).to_have_attribute("data-guard", "armed")
        quatro.tap()
        expect(host.page.locator(".reveal[data-reason='quatro']")).to_be_visible()
        expect(points(host.page, 1)).to_have_text("1")

        # Round 3: a press repeated at once (a bounce, a held key: two clicks a task apart) is
        # the same slip and does not count; then the opponent's Contre! by Enter twice.
        next_round(host, guest)
        guest.page.evaluate(
            """async () => {
                const button = document.querySelector("#call-contre");
                button.click();
                await new Promise((resolve) => setTimeout(resolve, 0));
                button.click();
            }"""
        )
        expect(contre).to_have_attribute("data-guard", "armed")
        expect(contre).to_have_attribute("data-guard", "", timeout=5_000)
        assert guest.page.locator(".reveal").count() == 0
        contre.focus()
        guest.page.keyboard.press("Enter")
        expect(contre).to_have_attribute("data-guard", "armed")
        guest.page.keyboard.press("Enter")
        expect(guest.page.locator(".reveal[data-reason='contre']")).to_be_visible()
        expect(points(guest.page, 0)).to_have_text("2")

        # Round 4: the opponent turns the second tap off on the profile page (this device's
        # choice); back at the table, one press sends a Contre! that can only lose.
        profile = guest.context.new_page()
        profile.goto(f"{stack_url}/profile")
        toggle = profile.locator("#guard-toggle")
        expect(toggle).to_be_checked()
        expect(profile.locator(".device-settings")).to_contain_text(AR["device.guard"])
        assert severe_violations(profile) == []
        toggle.uncheck()
        profile.reload()
        expect(profile.locator("#guard-toggle")).not_to_be_checked()
        profile.close()
        next_round(host, guest)
        contre.focus()
        guest.page.keyboard.press("Enter")
        expect(guest.page.locator(".reveal[data-reason='contre']")).to_be_visible()
        expect(points(guest.page, 0)).to_have_text("3")
    finally:
        host.close()
        guest.close()


@pytest.mark.parametrize(
    ("locale", "lang", "view", "touch"),
    [("en-US", "en", TALL_PHONE, True), ("ar", "ar", DESKTOP, False)],
)
def test_the_carre_hint_stays_through_the_cooldown(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize, touch: bool
) -> None:
    """The swap that completes a carré starts the 2 s cooldown (R10): the hint to take the floor
    is on screen all through it, when it is needed most."""
    scenario = {**HOST_CARRE, "time_scale": 0.5}  # a 1 s cooldown
    p = new_player(browser, "Rosa", locale=locale, scenario=scenario, viewport=view, touch=touch)
    page = p.page
    try:
        page.goto(f"{stack_url}/")
        page.fill("#player-name", "Rosa")
        page.click("button[data-players='4']")
        page.wait_for_url("**/t/*")
        page.click("#fill-bots")
        page.click("#start-match")
        page.click(f".signing [data-emoji='{PINEAPPLE}']")
        page.click("#ready-btn")
        expect(page.locator(".hand-card")).to_have_count(4)
        make_host_carre(page)
        # Seen while the cooldown runs: the hint, visible, and the cooldown's ring beside it.
        page.wait_for_function(
            """() => {
              const tip = document.querySelector(".tip[data-hint='carre_floor']");
              return !!document.querySelector(".hand-wrap.cooling .cooldown-ring")
                && !!tip && tip.checkVisibility({ visibilityProperty: true });
            }""",
            timeout=5_000,
        )
        text = catalog(lang)["hint.carre_floor"].split("{sign}")[0].strip()
        expect(page.locator(".tip")).to_contain_text(text)
    finally:
        p.close()


def test_the_clients_guards_follow_engine_hints(browser: Any, static_url: str) -> None:
    """js/hints.js decides like engine/hints.py for the same views (floors taken, emojis shown,
    a carré made, a reshuffle), and js/state.js keeps the record of what each seat took from
    the centre as the engine's view does, from the events a seat is sent."""
    views: list[tuple[dict[str, Any], int]] = []
    records: list[tuple[list[Any], list[tuple[int, list[dict[str, int]]]]]] = []
    for n in (4, 6):
        g = Game(n, deals=[deal(n, {2: "A"})])
        g.do(ChooseSign(seat=0, emoji=PINEAPPLE))
        g.open_round()
        welcome = {"you": {"seat": 1, "team": 1, "player_id": "p1", "host": False}}
        welcome["table"] = g.view(1)
        start = len(g.log)
        marks: list[tuple[int, list[dict[str, int]]]] = []

        def look(g: Game = g, n: int = n, marks: list[Any] = marks) -> None:
            views.extend((g.view(s), s) for s in range(n))
            marks.append((len(g.log), g.view(1)["net_taken"]))

        look()
        for slot, card in enumerate(g.center()):
            if card["rank"] == "A":
                give = next(c for c in g.hand(2) if c["rank"] != "A")
                if g.view(2)["swap_ready_at"] > g.now:
                    g.wait_until(g.view(2)["swap_ready_at"])
                g.do(Swap(seat=2, card=give["id"], slot=slot, expect=card["id"]))
                look()
        g.do(SetFloor(seat=2, open=True))
        look()
        g.do(Emit(seat=2, emoji=PINEAPPLE))
        look()
        g.do(RequestVote(seat=1))
        for s in range(n):
            if s != 1:
                g.do(CastVote(seat=s, accept=True))
        look()

        def told(upto: int, g: Game = g, n: int = n, start: int = start) -> list[dict[str, Any]]:
            """What seat 1 was sent after the welcome, up to the log's `upto`th event."""
            return [
                {**o.event.to_wire(), "at": o.at} for o in g.log[start:upto] if o.to.includes(1, n)
            ]

        checks = [(len(told(k)), net) for k, net in marks]
        records.append(([welcome, told(len(g.log))], checks))
    teams = {len(v["seats"]) // 2 for v, _ in views}
    assert teams == {2, 3}
    want_q = [quatro_needs_confirm(v, s) for v, s in views]
    want_c = [[contre_needs_confirm(v, k) for k in range(len(v["seats"]) // 2)] for v, _ in views]
    want_p = [[carre_possible(v, k) for k in range(len(v["seats"]) // 2)] for v, _ in views]
    assert set(want_q) == {True, False}
    assert {x for row in want_c for x in row} == {True, False}
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{static_url}/")
        got = page.evaluate(
            """async ([cases, records]) => {
                const h = await import("/static/js/hints.js");
                const s = await import("/static/js/state.js");
                const teams = (v) => [...Array(v.players / 2).keys()];
                const nets = records.map(([[welcome, events], checks]) => {
                    let state = s.fromWelcome(welcome);
                    const seen = [];
                    let i = 0;
                    for (const [k] of checks) {
                        for (; i < k; i++) state = s.reduce(state, events[i]);
                        seen.push(state.table.net_taken);
                    }
                    return seen;
                });
                return [
                    cases.map(([v, seat]) => h.quatroNeedsConfirm(v, seat, v.hand)),
                    cases.map(([v]) => teams(v).map((k) => h.contreNeedsConfirm(v, k))),
                    cases.map(([v]) => teams(v).map((k) => h.carrePossible(v, k))),
                    nets,
                ];
            }""",
            [[[v, s] for v, s in views], records],
        )
        want_nets = [[net for _, net in checks] for _, checks in records]
        assert got == [want_q, want_c, want_p, want_nets]
    finally:
        context.close()
