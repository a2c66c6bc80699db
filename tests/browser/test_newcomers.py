"""A way in for newcomers, in real browsers against the real stack: the practice table from the
home page, the host's bot level and hints in the lobby, the carré hint and the team's sign
marked in the picker, and hints turned off — on a phone and a desktop, left to right and right
to left."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, ViewportSize, expect

from engine import ChangeSettings, ChooseSign, Emit, SetFloor, StartMatch
from engine.hints import HINTS, hint_for, partner_shows_sign, sign_needs_confirm
from tests.browser.players import (
    create_table,
    join_by_link,
    new_player,
    swap_by_taps,
    wait_hand,
    wait_swap_ready,
)
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations
from tests.engine.tables import Game, deal

PHONE: ViewportSize = {"width": 390, "height": 664}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PINEAPPLE = "🍍"

# The host (seat 0) is dealt two aces and the centre holds the other two: two swaps make a
# carré. Bots stay idle, so nothing moves but what the test does. R4 holds.
HOST_CARRE = {
    "seed": 11,
    "time_scale": 0.25,
    "bot_policy": "idle",
    "deals": [
        {
            "hands": [
                ["A", "A", "K", "Q"],
                ["J", "J", "10", "10"],
                ["K", "K", "Q", "Q"],
                ["K", "Q", "J", "10"],
            ],
            "center": ["A", "A", "J", "10"],
        }
    ],
}


def summary(page: Page, base: str, code: str) -> dict[str, Any]:
    r = page.request.get(f"{base}/api/tables/{code}")
    assert r.ok
    data: dict[str, Any] = r.json()
    return data


def table_code(page: Page) -> str:
    return page.url.rstrip("/").rsplit("/", 1)[-1]


@pytest.mark.parametrize(
    ("locale", "lang", "view"), [("en-US", "en", PHONE), ("ar", "ar", DESKTOP)]
)
def test_practice_button_starts_a_table_against_relaxed_bots(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    text = catalog(lang)
    p = new_player(browser, "Noor", locale=locale, viewport=view)
    try:
        p.page.goto(f"{stack_url}/")
        expect(p.page.locator(".practice")).to_contain_text(text["home.practiceTitle"])
        assert severe_violations(p.page) == []
        p.page.fill("#player-name", "Noor")
        p.page.click("#practice")
        p.page.wait_for_url("**/t/*")
        # Straight into the first round's signing, with the first tip.
        expect(p.page.locator("#signing-title")).to_be_visible()
        tip = p.page.locator(".tip[data-hint='tip_sign']")
        expect(tip).to_contain_text(text["hint.tip_sign"].split(".")[0].split(":")[0])
        sm = summary(p.page, stack_url, table_code(p.page))
        assert sm["settings"] == {
            "bot_level": "relaxed",
            "hints": True,
            "late_join": "ask",
            "watchers": True,
        }
        assert [s["kind"] for s in sm["seats"]] == ["human", "bot", "bot", "bot"]
        assert sm["phase"] == "signing"
        assert p.page.evaluate("document.documentElement.dir") == ("rtl" if lang == "ar" else "ltr")
        assert severe_violations(p.page) == []
    finally:
        p.close()


def test_the_host_chooses_the_bot_level_and_hints_and_a_guest_sees_them(
    browser: Any, stack_url: str
) -> None:
    host = new_player(browser, "Ana", viewport=DESKTOP)
    guest = new_player(browser, "فاطمة", locale="ar", viewport=PHONE)
    ar = catalog("ar")
    try:
        code = create_table(host, stack_url, 4)
        join_by_link(guest, stack_url, code, 1)
        # A newcomer's table starts relaxed (issue 46): the server chose it, the host sees it.
        expect(host.page.locator("input[data-level='relaxed']")).to_be_checked()
        expect(host.page.locator("#hints-toggle")).to_be_checked()
        now = guest.page.locator(".table-settings-now")
        expect(now).to_have_attribute("data-level", "relaxed")
        # The guest may not change them: no controls, only what the host chose.
        expect(guest.page.locator(".table-settings input")).to_have_count(0)

        host.page.locator("input[data-level='sharp']").check()
        expect(now).to_have_attribute("data-level", "sharp")
        expect(now).to_contain_text(ar["level.sharp"])
        host.page.locator("#hints-toggle").uncheck()
        expect(now).to_have_attribute("data-hints", "off")
        expect(host.page.locator("#hints-toggle")).not_to_be_checked()
        assert summary(host.page, stack_url, code)["settings"] == {
            "bot_level": "sharp",
            "hints": False,
            "late_join": "ask",
            "watchers": True,
        }
        assert severe_violations(host.page) == []
        assert severe_violations(guest.page) == []
    finally:
        host.close()
        guest.close()


def start_rigged_match(page: Page, base: str, hints: bool) -> None:
    page.goto(f"{base}/")
    page.fill("#player-name", "Rosa")
    page.click("button[data-players='4']")
    page.wait_for_url("**/t/*")
    for seat in (1, 2, 3):
        page.click(f"[data-addbot='{seat}']")
        expect(page.locator(f".seat-row[data-seat='{seat}'][data-kind='bot']")).to_be_visible()
    if not hints:
        page.locator("#hints-toggle").uncheck()
        expect(page.locator("#hints-toggle")).not_to_be_checked()
    page.click("#start-match")
    page.click(f".signing [data-emoji='{PINEAPPLE}']")
    expect(page.locator(f".sign-fixed [data-sign='{PINEAPPLE}']")).to_be_visible()
    page.click("#ready-btn")
    expect(page.locator(".hand-card")).to_have_count(4)


def make_host_carre(page: Page) -> None:
    swap_by_taps(page, "K", 0)
    wait_hand(page, ["A", "A", "A", "Q"])
    wait_swap_ready(page)
    swap_by_taps(page, "Q", 1)
    wait_hand(page, ["A", "A", "A", "A"])


@pytest.mark.parametrize(
    ("locale", "lang", "view"), [("en-US", "en", PHONE), ("ar", "ar", DESKTOP)]
)
def test_a_carre_in_hand_is_pointed_out_and_the_sign_is_marked_in_the_picker(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    text = catalog(lang)
    p = new_player(browser, "Rosa", locale=locale, scenario=HOST_CARRE, viewport=view)
    page = p.page
    try:
        start_rigged_match(page, stack_url, hints=True)
        expect(page.locator(".tip")).to_have_attribute("data-hint", "tip_play")
        make_host_carre(page)
        tip = page.locator(".tip")
        expect(tip).to_have_attribute("data-hint", "carre_floor")
        expect(tip.locator("img.pic[data-pic='1f34d']")).to_be_visible()  # the sign's picture
        expect(tip).to_contain_text(text["hint.carre_floor"].split("{sign}")[0].strip())
        assert severe_violations(page) == []

        page.click("#floor-toggle")
        expect(tip).to_have_attribute("data-hint", "carre_sign")
        page.click(".emit-btn")
        ours = page.locator("#emit-picker .emoji.ours")
        expect(ours).to_have_count(1)
        expect(ours).to_have_attribute("data-emoji", PINEAPPLE)
        assert severe_violations(page) == []
        ours.click()
        expect(tip).to_have_attribute("data-hint", "carre_wait")
        expect(page.locator("[role=dialog]")).to_have_count(0)  # a carré: no question
        expect(tip).to_contain_text(text["hint.carre_wait"].split(".")[0])
    finally:
        p.close()


# Both partners can make a carré: the host (seat 0) kings, the guest (seat 2) aces, each from
# the centre in two swaps. Idle bots in seats 1 and 3.
BOTH_CARRES = {
    "seed": 12,
    "time_scale": 0.5,
    "bot_policy": "idle",
    "deals": [
        {
            "hands": [
                ["K", "K", "Q", "J"],
                ["Q", "J", "10", "10"],
                ["A", "A", "Q", "J"],
                ["Q", "J", "10", "10"],
            ],
            "center": ["K", "K", "A", "A"],
        }
    ],
}


def collect(page: Page, rank: str, slots: tuple[int, int], gives: tuple[str, str]) -> None:
    swap_by_taps(page, gives[0], slots[0])
    wait_swap_ready(page)
    swap_by_taps(page, gives[1], slots[1])
    wait_hand(page, [rank] * 4)


@pytest.mark.parametrize(
    ("locale", "lang", "view"),
    [("en-US", "en", PHONE), ("fr-FR", "fr", DESKTOP), ("ht", "ht", PHONE), ("ar", "ar", PHONE)],
)
def test_r15_with_both_carres_the_partners_sign_says_call_and_the_reminder_agrees(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize
) -> None:
    """The both-carré round: the host holds a carré and sees the partner's sign. The hint says
    call Quatro! (not "wait"), the R16 reminder says the call judges the partner's hand and
    that the partner's sign is showing, and the confirmed call scores for the team."""
    text = catalog(lang)
    host = new_player(browser, "Rosa", locale=locale, scenario=BOTH_CARRES, viewport=view)
    guest = new_player(browser, "Wislande", locale="ht", viewport=PHONE)
    page = host.page
    try:
        code = create_table(host, stack_url, 4)
        for seat in (1, 3):
            page.click(f"[data-addbot='{seat}']")
            expect(page.locator(f".seat-row[data-seat='{seat}'][data-kind='bot']")).to_be_visible()
        join_by_link(guest, stack_url, code, 2)
        page.click("#start-match")
        page.click(f".signing [data-emoji='{PINEAPPLE}']")
        expect(guest.page.locator(f".sign-fixed [data-sign='{PINEAPPLE}']")).to_be_visible()
        for p in (host, guest):
            p.page.click("#ready-btn")
        for p in (host, guest):
            expect(p.page.locator(".hand-card")).to_have_count(4)
        collect(page, "K", (0, 1), ("Q", "J"))
        collect(guest.page, "A", (2, 3), ("Q", "J"))
        tip = page.locator(".tip")
        expect(tip).to_have_attribute("data-hint", "carre_floor")

        # Before the partner's sign, the reminder says whose hand the call judges.
        page.click("#call-quatro")
        dialog = page.locator("[role=dialog]")
        expect(dialog.locator("h2")).to_have_text(text["r16.title"])
        expect(dialog.locator(".r16-body")).to_have_attribute("data-partner-sign", "no")
        expect(dialog.locator(".r16-body")).to_have_text(text["r16.body"])
        expect(page.locator("#confirm-quatro")).to_have_text(text["r16.confirm"])
        page.click("[role=dialog] button:not(#confirm-quatro)")
        expect(dialog).to_have_count(0)

        # The partner, holding a carré, shows the sign: not asked, it is no bluff.
        guest.page.click("#floor-toggle")
        guest.page.click("#emit-toggle")
        guest.page.click(f"#emit-picker [data-emoji='{PINEAPPLE}']")
        expect(guest.page.locator(".floor-controls")).to_have_attribute("data-choice", PINEAPPLE)
        expect(guest.page.locator("[role=dialog]")).to_have_count(0)
        expect(guest.page.locator(".tip")).to_have_attribute("data-hint", "carre_wait")

        # The host, holding a carré too, is told to call; the reminder says the sign is up.
        expect(tip).to_have_attribute("data-hint", "partner_sign")
        expect(tip).to_contain_text(text["hint.partner_sign"].split("{sign}")[0].strip())
        page.click("#call-quatro")
        body = dialog.locator(".r16-body")
        expect(body).to_have_attribute("data-partner-sign", "yes")
        expect(body).to_contain_text(text["r16.partnerSign"].split("{sign}")[0].strip())
        expect(body).to_contain_text(text["r16.partnerSign"].split("{sign}")[1].strip())
        assert severe_violations(page) == []
        page.click("#confirm-quatro")
        for p in (host, guest):
            expect(p.page.locator(".reveal")).to_be_visible()
            expect(p.page.locator(".score[data-team='0'] .points")).to_have_text("1")
            expect(p.page.locator(".score[data-team='1'] .points")).to_have_text("0")
            for seat in (0, 2):
                expect(p.page.locator(f".reveal-seat.carre[data-seat='{seat}']")).to_be_visible()
    finally:
        host.close()
        guest.close()


@pytest.mark.parametrize(("locale", "view"), [("ar", PHONE), ("en-US", DESKTOP)])
def test_hints_off_hide_the_carre_hint_and_the_mark(
    browser: Any, stack_url: str, locale: str, view: ViewportSize
) -> None:
    p = new_player(browser, "Rosa", locale=locale, scenario=HOST_CARRE, viewport=view)
    page = p.page
    try:
        start_rigged_match(page, stack_url, hints=False)
        make_host_carre(page)
        # The R16 reminder stays (a rule), and so does the team-sign mark every picker shows;
        # the hint line and the hints' highlight are gone.
        page.click("#floor-toggle")
        page.click(".emit-btn")
        expect(page.locator("#emit-picker .emoji")).to_have_count(24)
        expect(page.locator("#emit-picker .emoji.ours")).to_have_count(0)
        expect(page.locator(".tip")).to_have_attribute("data-hint", "")
        expect(page.locator(".tip")).to_have_text("")
        assert severe_violations(page) == []
    finally:
        p.close()


def test_the_clients_hint_line_follows_engine_hints(browser: Any, static_url: str) -> None:
    """js/hints.js and engine/hints.py give the same hint for the same views: a carré made,
    the floor taken, the sign shown, seen by each seat, with hints on and off; then the
    both-carré round, where the partner's sign comes first. They agree, too, on whether the
    player's sign shown now would need confirming (`sign_needs_confirm`), and on whether the
    partner's sign is showing (what the R16 reminder says)."""
    views: list[tuple[dict[str, Any], int]] = []
    for hints in (True, False):
        g = Game(4, deals=[deal(4, {2: "A"})], start=False)
        g.do(ChangeSettings(seat=0, hints=hints))
        g.do(StartMatch(seat=0))
        g.do(ChooseSign(seat=0, emoji=PINEAPPLE))
        views += [(g.view(s), s) for s in range(4)]
        g.open_round()
        views += [(g.view(s), s) for s in range(4)]
        g.make_carre(2, "A")
        views += [(g.view(s), s) for s in range(4)]
        g.do(SetFloor(seat=2, open=True))
        views += [(g.view(s), s) for s in range(4)]
        g.do(Emit(seat=2, emoji=PINEAPPLE))
        views += [(g.view(s), s) for s in range(4)]
    both = Game(4, deals=[deal(4, {0: "K", 2: "A"})])
    both.do(ChooseSign(seat=0, emoji=PINEAPPLE))
    both.open_round()
    both.make_carre(0, "K")
    both.make_carre(2, "A")
    for seat in (0, 2):
        both.do(SetFloor(seat=seat, open=True))
        views += [(both.view(s), s) for s in range(4)]
        both.do(Emit(seat=seat, emoji=PINEAPPLE))
        views += [(both.view(s), s) for s in range(4)]
    want = [hint_for(v, s) for v, s in views]
    assert set(want) == {None, *HINTS}
    assert want[-4:] == ["partner_sign", "tip_play", "partner_sign", "tip_play"]
    asks = [
        (v, emoji, confirmed)
        for v, _ in views
        for emoji in (PINEAPPLE, "🐢")
        for confirmed in (None, 0, 1)
    ]
    want_asks = [sign_needs_confirm(v, e, c) for v, e, c in asks]
    assert set(want_asks) == {True, False}
    want_shows = [partner_shows_sign(v, s) for v, s in views]
    assert set(want_shows) == {True, False}
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{static_url}/")
        got = page.evaluate(
            """async ([cases, asks]) => {
                const h = await import("/static/js/hints.js");
                return [
                    cases.map(([view, seat]) => h.hintFor(view, seat, view.hand)),
                    asks.map(([view, e, c]) => h.signNeedsConfirm(view, view.hand, e, c)),
                    cases.map(([view, seat]) => h.partnerShowsSign(view, seat)),
                ];
            }""",
            [[[v, s] for v, s in views], [[v, e, c] for v, e, c in asks]],
        )
        assert got == [want, want_asks, want_shows]
    finally:
        context.close()
