"""The finer points of play in real browsers against the real stack: a stale swap shown at once
and rolled back with a cue, the floor and its lock, emissions seen and announced, the reshuffle
vote, Contre!, and a whole match to its winners and "Play again"."""

from __future__ import annotations

import json
import threading
from typing import Any

from playwright.sync_api import Page, WebSocketRoute, expect

from tests.browser.players import (
    RIGGED_4,
    Player,
    call,
    create_table,
    hand_ranks,
    join_by_link,
    new_player,
    swap_by_taps,
    wait_hand,
)
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations

EN = catalog("en")


class SlowLink:
    """A real connection to the real gateway whose server-to-page direction can be held back:
    what a slow mobile network does. Nothing is invented; frames are only delayed."""

    def __init__(self, page: Page) -> None:
        self.holding = False
        self.drop_next_event = False
        self.hellos = 0
        self.queue: list[str | bytes] = []
        self.lock = threading.Lock()
        self.page_side: WebSocketRoute | None = None
        self.page = page
        page.route_web_socket("**/ws", self._route)

    def _route(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        self.page_side = ws
        ws.on_message(lambda message: self._from_page(server, message))
        server.on_message(self._from_server)

    def _from_page(self, server: WebSocketRoute, message: str | bytes) -> None:
        if json.loads(message).get("type") == "hello":
            self.hellos += 1
        server.send(message)

    def _from_server(self, message: str | bytes) -> None:
        with self.lock:
            if self.drop_next_event and "seq" in json.loads(message):
                self.drop_next_event = False
                return
            if self.holding:
                self.queue.append(message)
                return
        assert self.page_side is not None
        self.page_side.send(message)

    def hold(self) -> None:
        with self.lock:
            self.holding = True

    def release_after(self, frame_type: str, timeout_ms: int = 15_000) -> list[dict[str, Any]]:
        """Release once the server's frame of `frame_type` is among the held ones."""
        waited = 0
        while True:
            with self.lock:
                if any(json.loads(m).get("type") == frame_type for m in self.queue):
                    break
            assert waited < timeout_ms, f"no {frame_type} frame from the server in {timeout_ms} ms"
            # Playwright's sync API runs route callbacks only while the page is waited on.
            self.page.wait_for_timeout(20)
            waited += 20
        return self.release()

    def release(self) -> list[dict[str, Any]]:
        with self.lock:
            self.holding = False
            held, self.queue = self.queue, []
        assert self.page_side is not None
        for message in held:
            self.page_side.send(message)
        return [json.loads(m) for m in held]


def seat_four(browser: Any, base: str, scenario: dict[str, Any]) -> tuple[list[Player], SlowLink]:
    host = new_player(browser, "Ana", scenario=scenario)
    others = [new_player(browser, name) for name in ("Bruno", "Chloé", "Dieudonné")]
    slow = SlowLink(others[0].page)  # seat 1 gets the slow network
    code = create_table(host, base, 4)
    for seat, p in enumerate(others, start=1):
        join_by_link(p, base, code, seat)
    return [host, *others], slow


def open_round(players: list[Player]) -> None:
    players[0].page.click("#start-match")
    for p in players:
        p.page.click("#ready-btn")
    for p in players:
        expect(p.page.locator(".hand-card")).to_have_count(4)


def test_stale_swap_floor_emission_vote_and_contre(browser: Any, stack_url: str) -> None:
    # Half-speed clocks: the 20 s vote lasts 10 s, room enough for three clicks on a busy CI.
    players, slow = seat_four(browser, stack_url, {**RIGGED_4, "time_scale": 0.5})
    host, bruno, chloe, dieu = players
    try:
        open_round(players)
        assert hand_ranks(bruno.page) == ["10", "10", "J", "J"]

        # Stale swap: Bruno's view lags; Chloé takes the ace of slot 0 first.
        slow.hold()
        swap_by_taps(chloe.page, "K", 0)
        wait_hand(chloe.page, ["A", "A", "A", "Q"])
        swap_by_taps(bruno.page, "J", 0)
        # Shown at once (optimistic): the ace Bruno expects is already in his hand.
        wait_hand(bruno.page, ["10", "10", "A", "J"])
        held = slow.release_after("error")
        answer = next(f for f in held if f.get("type") == "error")
        assert answer["code"] == "stale"
        # Rolled back, with a visible and a spoken cue; the centre shows Chloé's king.
        wait_hand(bruno.page, ["10", "10", "J", "J"])
        expect(bruno.page.locator(".slot.stale[data-slot='0']")).to_be_visible()
        expect(bruno.page.locator(".toast")).to_contain_text(EN["err.stale"])
        expect(bruno.page.locator("#live-urgent")).to_contain_text(EN["err.stale"])
        expect(bruno.page.locator(".slot[data-slot='0'] .card")).to_have_attribute("data-rank", "K")
        # A stale swap costs nothing (no cooldown): Bruno swaps again at once.
        swap_by_taps(bruno.page, "J", 3)
        wait_hand(bruno.page, ["10", "10", "10", "J"])
        expect(host.page.locator(".slot[data-slot='3'] .card")).to_have_attribute("data-rank", "J")

        # The floor: taken, locked for a moment (visible), seen by the others.
        dieu.page.click("#floor-toggle")
        expect(dieu.page.locator("#floor-toggle[aria-pressed='true']")).to_be_visible()
        expect(host.page.locator(".seat.has-floor[data-seat='3']")).to_be_visible()
        expect(dieu.page.locator("#floor-toggle")).to_be_enabled()  # the lock runs out
        dieu.page.click(".emit-btn")
        dieu.page.click("#emit-picker [data-emoji='🦉']")
        owl = ".seat[data-seat='3'] .bubble[data-emoji='🦉'] img"
        expect(host.page.locator(owl)).to_be_visible()
        expect(host.page.locator(".history li [data-emoji='🦉'] img")).to_be_visible()
        expect(host.page.locator("#live-polite")).to_contain_text("Dieudonné")
        # A reload keeps the list: the snapshot carries the round's latest emissions. Its length
        # depends on the time the reload took (R13: one emission every 2.5 s at this table's
        # half-speed clocks), what it holds does not: Dieudonné's owls and nothing else.
        host.page.reload()
        expect(host.page.locator(".hand-card")).to_have_count(4)
        expect(host.page.locator(".history li [data-emoji='🦉'] img").first).to_be_visible()
        expect(host.page.locator(".history li:not(:has([data-emoji='🦉']))")).to_have_count(0)
        expect(host.page.locator(".history li:not(:has-text('Dieudonné'))")).to_have_count(0)

        # The reshuffle vote: asked by the host, answered by the three others.
        host.page.click(".vote-btn")
        for p in (bruno, chloe, dieu):
            expect(p.page.locator("[data-vote='yes']")).to_be_visible()
        expect(host.page.locator("[data-vote='yes']")).to_have_count(0)
        for p in (bruno, chloe, dieu):
            p.page.click("[data-vote='yes']")
        for p in players:
            expect(p.page.locator("#live-polite")).to_contain_text(EN["vote.passed"])
            expect(p.page.locator(".vote-btn")).to_be_disabled()  # once per round (R20)

        # Contre! at four players needs no team: it ends the round. Nobody swapped since the
        # reshuffle, so it can only lose: a second tap sends it (js/guard.js).
        call(dieu.page, "#call-contre")
        for p in players:
            expect(p.page.locator(".reveal[data-reason='contre']")).to_be_visible()
    finally:
        for p in players:
            p.close()


def test_a_match_runs_to_its_winners_and_plays_again(browser: Any, stack_url: str) -> None:
    # Fast clocks (9 s rounds; signing and the pause after each reveal 1.5 s, five of each
    # waited out): each round the host calls a wrong Quatro! (nobody swaps, and no hand is
    # dealt a carré), so team 1 wins 5-0.
    fast = {"seed": 3, "time_scale": 0.05, "deals": []}
    players, _ = seat_four(browser, stack_url, fast)
    host = players[0]
    try:
        host.page.click("#start-match")
        for round_no in range(1, 6):
            expect(host.page.locator("#call-quatro")).to_be_enabled(timeout=20_000)
            call(host.page, "#call-quatro")
            expect(host.page.locator(".score[data-team='1'] .points")).to_have_text(str(round_no))
        for p in players:
            expect(p.page.locator(".winners[data-winners='1']")).to_be_visible()
        expect(players[1].page.locator("#play-again")).to_have_count(0)
        assert severe_violations(host.page) == []
        host.page.click("#play-again")
        for p in players:
            expect(p.page.locator(".score[data-team='1'] .points")).to_have_text("0")
            expect(p.page.locator(".round-no")).to_have_text("Round 1")
    finally:
        for p in players:
            p.close()


def test_lost_connection_and_missed_events_come_back_to_the_same_table(
    browser: Any, stack_url: str
) -> None:
    players, slow = seat_four(browser, stack_url, RIGGED_4)
    host, bruno, chloe, _ = players
    try:
        open_round(players)
        hand = hand_ranks(bruno.page)
        assert slow.hellos == 1

        # The network drops: a banner says so, the client reconnects by itself.
        assert slow.page_side is not None
        slow.page_side.close(code=4000, reason="network went away")
        expect(bruno.page.locator(".banner[data-conn]")).to_be_visible()
        expect(bruno.page.locator(".banner[data-conn]")).to_have_count(0, timeout=15_000)
        assert slow.hellos == 2
        assert hand_ranks(bruno.page) == hand
        expect(host.page.locator(".seat.offline[data-seat='1']")).to_have_count(0)

        # One event goes missing: the next one shows a gap in seq, and the client asks for a
        # fresh snapshot (a new hello), which has what it missed.
        slow.drop_next_event = True
        chloe.page.click("#floor-toggle")
        expect(host.page.locator(".seat.has-floor[data-seat='2']")).to_be_visible()
        chloe.page.click(".emit-btn")
        chloe.page.click("#emit-picker [data-emoji='🌵']")
        expect(bruno.page.locator(".seat.has-floor[data-seat='2']")).to_be_visible()
        cactus = ".seat[data-seat='2'] .bubble[data-emoji='🌵'] img"
        expect(bruno.page.locator(cactus)).to_be_visible()
        assert slow.hellos == 3

        # Keyboard only: focus a card, Enter picks it and takes focus to the centre's first
        # slot, the left arrow wraps round to the last slot, Enter swaps.
        page = bruno.page
        page.locator(".hand-card").first.focus()
        picked = page.evaluate("document.activeElement.dataset.rank")
        page.keyboard.press("Enter")
        expect(page.locator(".hand-card[aria-pressed='true']")).to_have_count(1)
        expect(page.locator(".slot[data-slot='0']")).to_be_focused()
        page.keyboard.press("ArrowLeft")
        assert page.evaluate("document.activeElement.dataset.slot") == "3"
        taken = page.locator(".slot[data-slot='3'] .card").get_attribute("data-rank")
        page.keyboard.press("Enter")
        want = sorted([*hand, str(taken)])
        want.remove(picked)
        wait_hand(page, want)
    finally:
        for p in players:
            p.close()


def test_contre_at_six_players_asks_which_team(browser: Any, stack_url: str) -> None:
    names = ["Ana", "Bruno", "Chloé", "Dieudonné", "Élodie", "Fritz"]
    host = new_player(browser, names[0], scenario={"seed": 5, "time_scale": 0.5, "deals": []})
    others = [new_player(browser, name) for name in names[1:]]
    players = [host, *others]
    try:
        code = create_table(host, stack_url, 6)
        for seat, p in enumerate(others, start=1):
            join_by_link(p, stack_url, code, seat)
        open_round(players)
        # Seat 4 is on team 1 (seats 1 and 4); the other teams are 0 and 2.
        caller = players[4].page
        caller.click("#call-contre")
        dialog = caller.locator("[role=dialog]")
        expect(dialog).to_be_visible()
        expect(dialog.locator("button[data-team]")).to_have_count(2)
        expect(dialog.locator("button[data-team='1']")).to_have_count(0)
        expect(dialog.locator("button[data-team='2']")).to_contain_text("Chloé")
        expect(dialog.locator("button[data-team='2']")).to_contain_text("Fritz")
        call(caller, "[role=dialog] button[data-team='2']")
        for p in players:
            expect(p.page.locator(".reveal[data-reason='contre']")).to_be_visible()
        # Nobody swapped and no hand is dealt a carré: the accused team 2 scores (R17).
        expect(host.page.locator(".score[data-team='2'] .points")).to_have_text("1")
        expect(host.page.locator(".reveal-text")).to_contain_text("Team 3")
    finally:
        for p in players:
            p.close()
