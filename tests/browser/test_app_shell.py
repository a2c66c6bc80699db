"""The web client as an app (issue 33, point 5), in Debian's chromium: no console error and no
missing file on any page; a manifest Chrome accepts, with icons that load at the sizes they
claim; modules fetched at once from the preload list, which is exactly what the browser loads;
a service worker that opens the page without network and says the seat is kept, that never
keeps an answer of the API, and that moves an open page to a new deploy on its next load."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import ConsoleMessage, Page, Request, Response, expect

from tests.browser.bot_match import FinishedMatch
from tests.browser.conftest import STATIC, serving_client
from tests.browser.players import PHONE, create_table, new_player

EN = json.loads((STATIC / "i18n" / "en.json").read_text("utf-8"))
LANGS = ("en", "fr", "ht", "ar")
# A fresh context's first page: 45 modules, each a request to a gateway that shares two cores
# with the suite (9 s at a load average of 70, measured; 1.8 s once cached).
FIRST_LOAD_MS = 30_000


@contextmanager
def problems(page: Page) -> Iterator[list[str]]:
    """Everything a player's console would show as wrong while the block runs: console errors,
    uncaught exceptions, answers of 400 and above, requests that failed."""
    found: list[str] = []

    def console(m: ConsoleMessage) -> None:
        if m.type == "error":
            found.append(f"console: {m.text}")

    def response(r: Response) -> None:
        if r.status >= 400:
            found.append(f"{r.status} {r.url}")

    def failed(r: Request) -> None:
        # ERR_ABORTED: the page was left while the request ran (its pictures are fetched
        # ahead when it is idle, so a test that moves on quickly leaves some mid-way), or the
        # page itself gave up on it. Nothing went wrong for a player; a missing file is a 404
        # and a server that failed a request is another error, both still counted.
        if r.failure != "net::ERR_ABORTED":
            found.append(f"failed: {r.url} {r.failure}")

    page.on("console", console)
    page.on("response", response)
    page.on("pageerror", lambda e: found.append(f"exception: {e}"))
    page.on("requestfailed", failed)
    yield found


def until(page: Page, predicate: str, arg: Any = None, timeout_s: float = 30) -> None:
    """Until the page's async `predicate(arg)` holds (wait_for_function takes no promise)."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(predicate, arg):
        assert time.monotonic() < deadline, predicate
        page.wait_for_timeout(200)


def wait_controlled(page: Page) -> None:
    """Until the service worker has filled its cache and controls the page."""
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=30_000)


def cached_urls(page: Page) -> list[str]:
    urls: list[str] = page.evaluate(
        """async () => {
            const all = [];
            for (const name of await caches.keys()) {
                const cache = await caches.open(name);
                for (const r of await cache.keys()) {
                    const url = new URL(r.url);
                    all.push(url.pathname + url.search);
                }
            }
            return all;
        }"""
    )
    return urls


def test_no_console_error_nor_missing_file_on_any_page(
    browser: Any, stack_url: str, finished_match: FinishedMatch
) -> None:
    session, code, table_id = finished_match.session, finished_match.code, finished_match.table_id
    host = new_player(browser, "Ana", viewport=PHONE, service_worker=True)
    guest = new_player(browser, "Marie", viewport=PHONE, service_worker=True)
    finished = new_player(browser, "Ana", viewport=PHONE, service_worker=True)
    finished.context.add_init_script(
        f"localStorage.setItem('quatro.session', {json.dumps(json.dumps(session))});"
    )
    try:
        # The session's finished match (its table stays an hour once over: conftest).
        with problems(finished.page) as seen:
            finished.page.goto(f"{stack_url}/t/{code}")  # the end of a match
            expect(finished.page.locator("#watch-replay")).to_be_visible(timeout=FIRST_LOAD_MS)
            finished.page.goto(f"{stack_url}/replay/{table_id}")
            expect(finished.page.locator(".replay")).to_have_attribute("data-view", "public")
        assert seen == []
        with problems(host.page) as seen:
            lobby = create_table(host, stack_url, 4)  # home, then a table page, seated
            wait_controlled(host.page)
            host.page.reload()  # a table page again, now through the service worker
            expect(host.page.locator(".seat-row.mine[data-seat='0']")).to_be_visible()
            for lang in LANGS:
                host.page.goto(f"{stack_url}/static/help/{lang}.html")
                expect(host.page.locator("h1")).to_be_visible()
        assert seen == []
        with problems(guest.page) as seen:
            guest.page.goto(f"{stack_url}/t/{lobby}")  # the invite link, no seat yet
            # A fresh browser's first load fetches every module: seconds on a loaded machine.
            expect(guest.page.locator("[data-take='1']")).to_be_visible(timeout=FIRST_LOAD_MS)
        assert seen == []
    finally:
        for p in (host, guest, finished):
            p.close()


def test_the_manifest_is_valid_and_its_icons_load_at_their_sizes(
    browser: Any, static_url: str
) -> None:
    player = new_player(browser, "Ana", viewport=PHONE, service_worker=True)
    try:
        page = player.page
        with problems(page) as seen:
            page.goto(f"{static_url}/")
            expect(page.locator("#home-title")).to_be_visible()
        assert seen == []
        cdp = page.context.new_cdp_session(page)
        manifest = cdp.send("Page.getAppManifest")
        assert manifest["url"].endswith("/static/manifest.webmanifest")
        assert manifest["errors"] == []
        data = json.loads(manifest["data"])
        assert data["start_url"] == data["scope"] == "/"
        assert data["display"] == "standalone"
        assert data["name"] == data["short_name"] == "Quatro"
        # The colours are the page's own: the header's green and the page's background.
        colours = page.evaluate(
            """() => ({
                theme: document.querySelector('meta[name="theme-color"]').content,
                header: getComputedStyle(document.querySelector('.topbar')).backgroundColor,
                body: getComputedStyle(document.body).backgroundColor,
            })"""
        )
        assert data["theme_color"] == colours["theme"]
        assert rgb(data["theme_color"]) == colours["header"]
        assert rgb(data["background_color"]) == colours["body"]
        purposes = {(i["sizes"], i["purpose"]) for i in data["icons"]}
        assert {("192x192", "any"), ("512x512", "any")} <= purposes
        assert {("192x192", "maskable"), ("512x512", "maskable")} <= purposes
        for icon in data["icons"]:
            size = page.evaluate(
                """(src) => new Promise((ok, fail) => {
                    const img = new Image();
                    img.onload = () => ok([img.naturalWidth, img.naturalHeight]);
                    img.onerror = () => fail(new Error(src));
                    img.src = src;
                })""",
                icon["src"],
            )
            if icon["sizes"] != "any":
                assert f"{size[0]}x{size[1]}" == icon["sizes"], icon
        # A maskable icon is full-bleed: its corners are the felt, not transparent.
        corner_alpha = page.evaluate(
            """async () => {
                const img = new Image();
                img.src = "/static/icons/maskable-192.png";
                await img.decode();
                const c = new OffscreenCanvas(192, 192);
                const g = c.getContext("2d");
                g.drawImage(img, 0, 0);
                return g.getImageData(0, 0, 1, 1).data[3];
            }"""
        )
        assert corner_alpha == 255
        for href in ("/favicon.ico", "/static/icons/apple-touch-icon.png"):
            status = page.evaluate("(u) => fetch(u).then((r) => r.status)", href)
            assert status == 200, href
    finally:
        player.close()


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_the_browser_loads_exactly_the_modules_the_page_preloads(
    browser: Any, static_url: str
) -> None:
    """The preload list is read from the modules by the gateway (gateway/client_page.py); here
    Chromium says which modules the page really needs. A module imported in a way the gateway
    missed would be fetched without a preload (and without its version)."""
    player = new_player(browser, "Ana", service_worker=True)
    try:
        page = player.page
        scripts: list[str] = []

        def request(r: Request) -> None:
            if r.resource_type == "script":
                scripts.append(r.url)

        page.on("request", request)
        page.goto(f"{static_url}/")
        expect(page.locator("#home-title")).to_be_visible()
        preloaded = page.locator("link[rel=modulepreload]").evaluate_all(
            "els => els.map((e) => e.href)"
        )
        entry = page.locator("script[type=module]").get_attribute("src")
        assert entry is not None
        assert len(scripts) == len(set(scripts))  # no module twice (under two URLs)
        assert set(scripts) == {*preloaded, f"{static_url}{entry}"}
        assert all("?v=" in url for url in scripts)
        loaded = page.evaluate(
            "performance.getEntriesByType('resource')"
            ".filter((e) => e.name.endsWith('.js') || e.name.includes('.js?'))"
            ".map((e) => e.name)"
        )
        assert set(loaded) == set(scripts)
    finally:
        player.close()


def test_offline_the_page_opens_says_the_seat_is_kept_and_comes_back(
    browser: Any, stack_url: str
) -> None:
    host = new_player(browser, "Ana", viewport=PHONE, service_worker=True)
    try:
        page = host.page
        code = create_table(host, stack_url, 4)
        wait_controlled(page)
        host.context.set_offline(True)
        with problems(page) as seen:
            page.reload()
            expect(page.locator(".topbar")).to_be_visible()  # the shell, not an error page
            # The link's own banner, with what a lost network does not cost.
            banner = page.locator(".banner[data-conn='offline']")
            expect(banner).to_contain_text(EN["conn.lost"])
            expect(banner).to_contain_text(EN["offline.seatKept"])
            expect(banner).to_have_attribute("role", "status")
        # Offline, the socket and the API fail, as they must; the page itself does not.
        assert not [p for p in seen if p.startswith("exception")]
        assert not [p for p in seen if "/static/" in p or p.endswith(f"/t/{code}")]
        host.context.set_offline(False)
        expect(page.locator(".seat-row.mine[data-seat='0']")).to_be_visible()
        expect(page.locator(".banner[data-conn='offline']")).to_have_count(0)

        # Any page of the app opens offline, and says it is offline.
        host.context.set_offline(True)
        page.goto(f"{stack_url}/")
        expect(page.locator("#home-title")).to_be_visible()
        expect(page.locator(".banner[data-conn='offline']")).to_have_text(EN["offline.waiting"])
        page.goto(f"{stack_url}/static/help/ar.html")
        expect(page.locator("html")).to_have_attribute("dir", "rtl")
    finally:
        host.close()


def test_api_answers_are_never_kept(browser: Any, stack_url: str) -> None:
    host = new_player(browser, "Ana", viewport=PHONE, service_worker=True)
    try:
        page = host.page
        create_table(host, stack_url, 4)  # sessions, tables, the table's summary: all /api
        wait_controlled(page)
        page.evaluate("fetch('/api/emojis').then((r) => r.json())")
        kept = cached_urls(page)
        assert "/" in kept
        assert [u for u in kept if u.startswith(("/api", "/ws", "/t/", "/replay"))] == []
        host.context.set_offline(True)
        offline = page.evaluate("fetch('/api/emojis').then(() => 'answered', (e) => e.name)")
        assert offline == "TypeError"  # the network's failure, not a kept answer
    finally:
        host.close()


def test_a_deploy_reaches_an_open_page_on_its_next_load(browser: Any, tmp_path: Path) -> None:
    """A player keeps the page open while a new version is deployed: the page goes on with the
    modules it loaded; its next load is the new version, online (the page comes from the
    network first) and then offline too (the new worker has replaced the old cache)."""
    root = tmp_path / "static"
    shutil.copytree(STATIC, root)
    with serving_client(root) as base:
        player = new_player(browser, "Ana", service_worker=True)
        try:
            page = player.page
            page.goto(f"{base}/")
            expect(page.locator("#home-title")).to_be_visible()
            wait_controlled(page)
            (old_cache,) = page.evaluate("caches.keys()")
            old_table = table_module(page)

            table = root / "js" / "table.js"
            table.write_text(table.read_text() + "\n// the next version\n")
            # The gateway reads a changed file within a second (gateway/client_files.py).
            until(
                page,
                """old => fetch("/sw.js", {cache: "no-store"})
                    .then((r) => r.text())
                    .then((text) => !text.includes(old))""",
                old_cache.removeprefix("quatro-shell-"),
            )

            page.reload()
            expect(page.locator("#home-title")).to_be_visible()
            assert table_module(page) != old_table
            until(
                page, "old => caches.keys().then((k) => k.length === 1 && k[0] !== old)", old_cache
            )
            player.context.set_offline(True)
            page.reload()
            expect(page.locator("#home-title")).to_be_visible()
            assert table_module(page) not in (None, old_table)
        finally:
            player.close()


def table_module(page: Page) -> str | None:
    href: str | None = page.locator("link[rel=modulepreload][href*='/js/table.js']").get_attribute(
        "href"
    )
    return href
