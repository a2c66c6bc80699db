"""A replay lays its table out like the live one (issue 33, point 4): its ring takes the height
the page leaves, as at a live table, instead of its smallest height with the seats squashed onto
the centre's cards; and at a moment when a floor is open its emissions are shown, on the seat
that showed each one and in the list of emissions — at every width, phones to desktop, in
Arabic, Haitian Creole and English. A replay is read-only in every view, its own seat's view
too, whose ring keeps its height; and it keeps its speed and its moment across a change of view
(issue 46, point 4)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import ViewportSize, expect

from gateway.emoji_vendor import emoji_code
from tests.browser.bot_match import FinishedMatch
from tests.browser.players import DESKTOP, TALL_PHONE, new_player
from tests.browser.test_match import severe_violations
from tests.browser.test_one_screen import seats_over_centre
from tests.browser.test_replay import scrub
from tests.browser.walker import Walker

SIZES: list[tuple[str, ViewportSize, bool]] = [
    ("ar", {"width": 390, "height": 844}, True),
    ("ht", {"width": 360, "height": 640}, True),
    ("en-US", {"width": 768, "height": 1024}, False),
    ("en-US", {"width": 1280, "height": 800}, False),
]


@pytest.fixture(scope="module")
def replay(stack_url: str, finished_match: FinishedMatch) -> tuple[str, list[dict[str, Any]]]:
    """The session's finished bot match: its table id and its public events."""
    table_id = finished_match.table_id
    with httpx.Client(base_url=stack_url, timeout=30) as c:
        events = c.get(f"/api/replays/{table_id}").json()["events"]
    return table_id, events


def a_moment_with_emissions(events: list[dict[str, Any]]) -> tuple[int, list[tuple[int, str]]]:
    """The first position where an emission was just shown from an open floor, and the round's
    emissions up to there, newest first (seat, emoji)."""
    shown: list[tuple[int, str]] = []
    floors: set[int] = set()
    for i, ev in enumerate(events):
        if ev["type"] == "signing":
            shown, floors = [], set()
        elif ev["type"] == "floor":
            (floors.add if ev["open"] else floors.discard)(ev["seat"])
        elif ev["type"] == "emission":
            shown.insert(0, (ev["seat"], ev["emoji"]))
            if ev["seat"] in floors and len(shown) >= 2:
                return i + 1, shown[:8]
    raise AssertionError("no two emissions in one round of the match")


@pytest.mark.parametrize(("locale", "view", "touch"), SIZES)
def test_the_replay_table_is_laid_out_like_the_live_one_with_its_emissions(
    browser: Any,
    replay: tuple[str, list[dict[str, Any]]],
    stack_url: str,
    locale: str,
    view: ViewportSize,
    touch: bool,
) -> None:
    table_id, events = replay
    pos, emissions = a_moment_with_emissions(events)
    p = new_player(browser, "Lou", locale=locale, viewport=view, touch=touch)
    try:
        page = p.page
        page.goto(f"{stack_url}/replay/{table_id}")
        expect(page.locator("#replay-scrubber")).to_be_visible()
        scrub(page, pos)

        # The ring takes the height the page leaves it (a third of the screen at least, as the
        # live table's does), and no seat lies over a centre card.
        ring = page.locator(".ring").bounding_box()
        assert ring is not None
        assert ring["height"] >= view["height"] / 3, ring
        expect(page.locator(".ring .seat")).to_have_count(4)
        assert seats_over_centre(page) == []
        assert page.evaluate("document.documentElement.scrollWidth") <= view["width"]

        # The emissions of the moment: on the seats that showed them, and listed newest first.
        latest: dict[int, str] = {}
        for seat, emoji in reversed(emissions):
            latest[seat] = emoji
        for seat, emoji in latest.items():
            bubble = page.locator(f".ring .seat[data-seat='{seat}'] .bubble")
            # The sign drawn as its shipped picture (no device font needed), named for its emoji.
            expect(bubble).to_have_attribute("data-emoji", emoji)
            expect(bubble.locator("img.pic")).to_have_attribute("data-pic", emoji_code(emoji))
            expect(bubble).to_be_in_viewport(ratio=1)
        items = page.locator(".history li")
        expect(items).to_have_count(len(emissions))
        for k, (_, emoji) in enumerate(emissions):
            sign = items.nth(k).locator(".big-emoji")
            expect(sign).to_have_attribute("data-emoji", emoji)
            expect(sign.locator("img.pic")).to_have_attribute("data-pic", emoji_code(emoji))
        assert severe_violations(page) == []
    finally:
        p.close()


# Every control of the table page outside the replay's own, that a player could use now; and
# what only a live seat shows (the signing grid, "I'm ready", the tips): at each of `positions`,
# moved to as a drag of the scrubber moves it.
READ_ONLY = """async (positions) => {
  const scrubber = document.querySelector("#replay-scrubber");
  const replay = document.querySelector(".replay");
  // Controls; a seat is focusable too, to be read, and does nothing.
  const usable = "button, input, select, textarea, a[href], summary, [role=button]";
  const live = ".signing, #ready-btn, .emoji-grid, .tip, [data-vote]";
  const found = [];
  for (const pos of positions) {
    scrubber.value = String(pos);
    scrubber.dispatchEvent(new Event("input", { bubbles: true }));
    // Preact renders in a microtask: wait for it, then for a task if need be.
    for (let i = 0; replay.dataset.pos !== String(pos); i += 1) {
      await (i < 5 ? Promise.resolve() : new Promise((r) => setTimeout(r, 0)));
    }
    const controls = replay.querySelector(".replay-controls");
    for (const el of replay.querySelectorAll(usable)) {
      if (controls.contains(el) || el.disabled || el.tabIndex < 0) continue;
      if (el.getAttribute("aria-disabled") === "true" || !el.checkVisibility()) continue;
      found.push(`${pos}: ${el.outerHTML.slice(0, 80)}`);
    }
    for (const el of replay.querySelectorAll(live)) found.push(`${pos}: ${el.className || el.id}`);
  }
  return found;
}"""


def replay_of(base: str, table_id: str, token: str | None = None) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    got = httpx.get(
        f"{base}/api/replays/{table_id}{'?view=own' if token else ''}", headers=auth, timeout=30
    )
    assert got.status_code == 200, got.text
    data: dict[str, Any] = got.json()
    return data


# The events after which what a seat may do changes: each phase, a vote and its end.
TURNS = {"signing", "round", "reshuffled", "vote", "vote_result", "reveal", "pause", "over"}


def span_of(data: dict[str, Any]) -> tuple[int, int]:
    """The scrubber's range over the last match (js/replay.js, spanOf)."""
    first, last = data["matches"][-1]["first"], data["matches"][-1]["last"]
    while first < last and data["events"][first]["type"] != "signing":
        first += 1
    return first + 1, last + 1


@pytest.mark.parametrize(("view", "touch"), [(TALL_PHONE, True), (DESKTOP, False)])
def test_a_replay_is_read_only_in_every_view_and_keeps_its_speed(
    browser: Any,
    stack_url: str,
    finished_match: FinishedMatch,
    view: ViewportSize,
    touch: bool,
) -> None:
    """Issue 46, point 4: a replay's "my seat's view" on a phone showed the signing grid, "I'm
    ready" and live tips, squashed the ring onto the centre, and reset the speed to 1×. At
    every position of the match, in both views, nothing outside the replay's controls can be
    used; the own view's ring keeps its height; the speed and the moment shown survive a
    change of view (by touch on a phone, by keyboard on a desktop)."""
    me, table_id = finished_match.session, finished_match.table_id
    public, own = replay_of(stack_url, table_id), replay_of(stack_url, table_id, me["token"])
    p = new_player(browser, "Ana", viewport=view, touch=touch)
    p.context.add_init_script(
        f"localStorage.setItem('quatro.session', {json.dumps(json.dumps(me))});"
    )
    walker = Walker.of(p, touch)
    page = p.page
    try:
        page.goto(f"{stack_url}/replay/{table_id}")
        replay = page.locator(".replay")
        expect(replay).to_have_attribute("data-view", "public")
        # A moment of play (a swap, which both views show), at 4×.
        swap = next(i for i, e in enumerate(public["events"]) if e["type"] == "swapped")
        scrub(page, swap + 1)
        if touch:
            page.select_option("#replay-speed", "4")
        else:
            walker.keys.tab_to("#replay-speed")
            walker.keys.press("ArrowDown")
            walker.keys.press("ArrowDown")
        expect(page.locator("#replay-speed")).to_have_value("4")

        # My seat's view: the same speed, the same moment.
        walker.go("#replay-view")
        expect(replay).to_have_attribute("data-view", "own")
        expect(page.locator("#replay-speed")).to_have_value("4")
        at = public["events"][swap]["at"]
        pos = int(replay.get_attribute("data-pos") or 0)
        assert own["events"][pos - 1]["at"] == at, (pos, at)
        assert pos == span_of(own)[1] or own["events"][pos]["at"] > at, (pos, at)
        expect(page.locator(".hand-card")).to_have_count(4)

        # Its ring takes the height a live table's does, a moment of signing and of play.
        signing = next(i for i, e in enumerate(own["events"]) if e["type"] == "signing")
        for moment in (signing + 1, pos):
            scrub(page, moment)
            ring = page.locator(".ring").bounding_box()
            assert ring is not None
            assert ring["height"] >= view["height"] / 3, (moment, ring)
            assert seats_over_centre(page) == [], moment
        scrub(page, signing + 1)
        expect(page.locator(".replay [role=status]").first).to_be_visible()

        # Read-only at every position of the match in my seat's view; in everyone's, where
        # what a seat may do changes (it never held a seat, and never offered more).
        first, last = span_of(own)
        assert page.evaluate(READ_ONLY, list(range(first, last + 1))) == []
        walker.go("#replay-view")
        expect(replay).to_have_attribute("data-view", "public")
        expect(page.locator("#replay-speed")).to_have_value("4")
        first, last = span_of(public)
        turns = [i + 1 for i, e in enumerate(public["events"]) if e["type"] in TURNS]
        assert page.evaluate(READ_ONLY, [i for i in turns if first <= i <= last]) == []
    finally:
        p.close()
