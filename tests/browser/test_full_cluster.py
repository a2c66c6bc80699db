"""A full cluster, seen from the home page (issue 20): "Table for 4" or "Play now" refused
`503 no_room` says so, shows when it tries again, tries again by itself as `Retry-After` says,
can be stopped, and lands the player at the table once a slot is free.

The cluster is really full for one gateway of the test's own: a Ray placement group holds enough
table slots that the free ones fall under that gateway's slot reserve (actors.slots: a new table
starts only while free slots > reserve); removing the group makes room. That gateway keeps its
keys in Redis database 1 and has no pool, so no actor started ahead (the shared pool of the
stack's gateways) lets a table open without asking for a slot."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
from playwright.sync_api import Page, Request, Response, expect

from actors import keys
from tests.browser.conftest import STATIC
from tests.browser.players import DESKTOP, PHONE, Player, new_player
from tests.browser.test_match import severe_violations
from tests.conftest import Gateway, Stack, own_database

RETRY_AFTER_S = 1  # the gateway's Retry-After, so the page's retries come every 1–1.2 s
MARGIN = 6  # slots between the free ones and the reserve, each way (other tables come and go)


@dataclass
class FullGateway:
    gateway: Gateway
    store: redis.Redis
    reserve: int
    ray: Any
    namespace: str
    held: list[Any] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.gateway.url

    def free(self) -> int:
        return int(self.ray.available_resources().get("table_slot", 0))

    def fill(self) -> None:
        """Hold slots in a placement group until MARGIN fewer than the reserve are free."""
        from ray.util.placement_group import placement_group

        hold = self.free() - self.reserve + MARGIN
        if hold > 0:
            pg = placement_group([{"table_slot": hold}])
            self.held.append(pg)
            self.ray.get(pg.ready(), timeout=30)
        # What the gateway reads is Ray's control store, which hears of the group a little later.
        deadline = time.monotonic() + 10
        while self.free() > self.reserve - MARGIN:
            assert time.monotonic() < deadline, f"{self.free()} slots still free"
            time.sleep(0.1)

    def make_room(self) -> None:
        from ray.util.placement_group import remove_placement_group

        while self.held:
            remove_placement_group(self.held.pop())

    def stop_tables(self) -> None:
        """The tables this gateway opened would hold their slots for the rest of the session."""
        for key in self.store.scan_iter(keys.table("*")):
            record = self.store.get(key)
            if record:
                name = json.loads(record)["actor"]
                with contextlib.suppress(ValueError):  # already stopped
                    self.ray.kill(self.ray.get_actor(name, namespace=self.namespace))


@pytest.fixture(scope="module")
def full(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FullGateway]:
    ray = stack.driver()
    free = int(ray.available_resources().get("table_slot", 0))
    reserve = free // 2
    assert reserve >= 2 * MARGIN, f"too few free slots on the test stack: {free}"
    own_db, store = own_database(stack, 1)
    gw = stack.gateway(
        tmp_path_factory.mktemp("full"),
        REDIS_URL=own_db,
        # No ready actor kept: the pool follows demand, so after the first test's table it would
        # hold one, started once there was room again, and a pooled actor already has its slot
        # (a "full" cluster then rightly opens one more table).
        QUATRO_POOL_SIZE="0",
        QUATRO_POOL_MAX="0",
        QUATRO_SLOT_RESERVE=str(reserve),
        QUATRO_RETRY_AFTER=str(RETRY_AFTER_S),
    )
    fg = FullGateway(gw, store, reserve, ray, stack.namespace)
    try:
        gw.wait_ready()
        yield fg
    finally:
        fg.make_room()
        fg.stop_tables()
        gw.stop()
        store.flushdb()
        store.close()


def catalog(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((STATIC / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


@dataclass
class Answers:
    """Every answer to the POSTs of `path` the page sends, in order, by status."""

    path: str
    statuses: list[int] = field(default_factory=list)
    sent: int = 0

    def watch(self, page: Page) -> None:
        def on_request(r: Request) -> None:
            if r.method == "POST" and r.url.endswith(self.path):
                self.sent += 1

        def on_response(r: Response) -> None:
            if r.request.method == "POST" and r.url.endswith(self.path):
                self.statuses.append(r.status)

        page.on("request", on_request)
        page.on("response", on_response)


def until(page: Page, check: Callable[[], bool], limit_s: float, what: str) -> None:
    """Let the page run (Playwright's events arrive meanwhile) until `check()`, within a limit."""
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, f"not within {limit_s} s: {what}"
        page.wait_for_timeout(100)


def refused_and_retried(page: Page, answers: Answers, lang: str) -> None:
    words = catalog(lang)
    status = page.locator("#room-wait [role='status']")
    expect(status).to_contain_text(words["err.no_room"])
    expect(status).to_contain_text(words["home.retryAuto"])
    expect(page.locator("#room-wait [role='timer']")).to_be_visible()
    expect(page.locator("#retry-stop")).to_have_text(words["home.retryStop"])
    # The page asks again by itself, after the server's Retry-After.
    until(page, lambda: len(answers.statuses) >= 2, 10, "a second request")
    assert answers.statuses[:2] == [503, 503], answers.statuses
    assert "/t/" not in page.url


@pytest.fixture
def player(browser: Any, request: pytest.FixtureRequest) -> Iterator[Player]:
    locale, view = request.param
    p = new_player(browser, "Nadia", locale=locale, viewport=view)
    yield p
    p.close()


@pytest.mark.parametrize("player", [("en-US", DESKTOP)], indirect=True)
def test_a_new_table_on_a_full_cluster_waits_can_stop_and_opens_once_there_is_room(
    full: FullGateway, player: Player
) -> None:
    page = player.page
    answers = Answers("/api/tables")
    answers.watch(page)
    full.fill()
    page.goto(f"{full.url}/")
    page.fill("#player-name", player.name)
    page.click("button[data-players='4']")
    refused_and_retried(page, answers, "en")
    expect(page.locator("button[data-players='4']")).to_be_disabled()
    assert severe_violations(page) == []

    # Stopped: the status goes, the buttons come back, and no request follows.
    page.click("#retry-stop")
    expect(page.locator("#room-wait")).to_have_count(0)
    expect(page.locator("button[data-players='4']")).to_be_enabled()
    stopped_at = answers.sent
    page.wait_for_timeout(3 * RETRY_AFTER_S * 1200)  # three of the page's longest waits
    assert answers.sent == stopped_at, answers.statuses

    # Again, and this time a slot frees while the page waits: it lands in the lobby, seated.
    page.click("button[data-players='4']")
    until(page, lambda: len(answers.statuses) >= stopped_at + 1, 10, "a refusal")
    expect(page.locator("#room-wait [role='status']")).to_be_visible()
    full.make_room()
    page.wait_for_url("**/t/*", timeout=30_000)
    expect(page.locator(".seat-row.mine[data-seat='0']")).to_be_visible()
    assert answers.statuses[-1] == 201, answers.statuses
    assert all(s == 503 for s in answers.statuses[:-1]), answers.statuses


@pytest.mark.parametrize("player", [("ar", PHONE)], indirect=True)
def test_play_now_on_a_full_cluster_retries_by_itself_until_it_seats_the_player(
    full: FullGateway, player: Player
) -> None:
    page = player.page
    answers = Answers("/api/quickplay")
    answers.watch(page)
    full.fill()
    page.goto(f"{full.url}/")
    expect(page.locator("html")).to_have_attribute("dir", "rtl")
    page.fill("#player-name", player.name)
    page.check("[data-quick-size='4']")
    page.click("#quick-play")
    refused_and_retried(page, answers, "ar")
    expect(page.locator("#quick-play")).to_be_disabled()
    full.make_room()
    page.wait_for_url("**/t/*", timeout=30_000)
    expect(page.locator(".seat-row.mine")).to_be_visible()
    assert answers.statuses[-1] in (200, 201), answers.statuses
    assert all(s == 503 for s in answers.statuses[:-1]), answers.statuses


def test_only_a_refusal_that_names_its_wait_is_tried_again(browser: Any, static_url: str) -> None:
    """The client's rule, in the browser's own JS: 503 no_room or unavailable with Retry-After
    (seconds or an HTTP date) is tried again; without it, or any other refusal, is not."""
    page = browser.new_page()
    try:
        page.goto(f"{static_url}/")
        got = page.evaluate(
            """async () => {
              const { retryable, waitMs } = await import("/static/js/retry.js");
              const { retryAfterSeconds } = await import("/static/js/api.js");
              const e = (status, code, retryAfter, extra = {}) =>
                retryable({ status, code, retryAfter, ...extra });
              const now = Date.parse("2026-01-01T00:00:00Z");
              const waits = Array.from({ length: 50 }, () => waitMs(5));
              return {
                noRoom: e(503, "no_room", 5),
                unavailable: e(503, "unavailable", 5),
                noHeader: e(503, "unavailable", null),
                rateLimited: e(429, "rate_limited", 5),
                created: e(503, "no_room", 5, { noRetry: true }),
                seconds: retryAfterSeconds("7", now),
                date: retryAfterSeconds("Thu, 01 Jan 2026 00:00:30 GMT", now),
                junk: retryAfterSeconds("soon", now),
                absent: retryAfterSeconds(null, now),
                waits: [Math.min(...waits), Math.max(...waits)],
                floor: waitMs(0),
                ceiling: waitMs(3600),
              };
            }"""
        )
    finally:
        page.close()
    assert got["noRoom"]
    assert got["unavailable"]
    assert not got["noHeader"]
    assert not got["rateLimited"]
    assert not got["created"]
    assert (got["seconds"], got["date"], got["junk"], got["absent"]) == (7, 30, None, None)
    assert 5000 <= got["waits"][0] <= got["waits"][1] <= 6000
    assert 1000 <= got["floor"] <= 1200
    assert 60_000 <= got["ceiling"] <= 72_000
