"""Profiles, passkeys, history and leaderboards in a real Chromium (issue 36), on a phone (390×844,
touch), in each of the four languages:

- a passkey made on one device signs in on another: register on one browser context with
  Chromium's virtual authenticator (CDP `WebAuthn`), carry the credential to a second
  context's authenticator (as a synced passkey would be), sign in there from the home page: the
  same profile, name and rating;
- the profile page: ratings per table size, the last matches with replay links, what others see,
  the public profile, and the leaderboard with the player's own row.

A finished match's records are written to Redis as the table actor leaves them
(actors.ratings): the match itself is played by tests/cluster/test_profiles.py.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

import httpx
import pytest
import redis
from playwright.sync_api import Page, expect

from actors import keys
from actors.match_records import match_record
from actors.protocol import Act, Outcome, Serve
from actors.ratings import Settled, Standing
from actors.ray_calls import send
from engine.ratings import MatchResult, Rating, SeatResult
from tests.browser.conftest import STATIC
from tests.browser.players import TALL_PHONE, new_player
from tests.conftest import Stack

LANGS = ("en", "fr", "ht", "ar")
SHOTS = "/tmp/quatro-profiles"


def catalog(lang: str) -> dict[str, Any]:
    data = json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def local(stack_url: str) -> str:
    """The gateway as `localhost`: WebAuthn takes a domain as its relying party, not an IP."""
    return stack_url.replace("127.0.0.1", "localhost")


def session(base: str, name: str) -> dict[str, Any]:
    r = httpx.post(f"{base}/api/sessions", json={"name": name}, timeout=30)
    assert r.status_code == 201, r.text
    return dict(r.json())


def phone(browser: Any, lang: str, who: dict[str, Any] | None = None) -> Any:
    p = new_player(browser, "x", viewport=TALL_PHONE, touch=True)
    script = f"localStorage.setItem('quatro.lang', {json.dumps(lang)});"
    if who is not None:
        script += f"localStorage.setItem('quatro.session', {json.dumps(json.dumps(who))});"
    p.context.add_init_script(script)
    return p


def authenticator(page: Page) -> tuple[Any, str]:
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    found = cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )
    return cdp, str(found["authenticatorId"])


def rated(
    stack: Stack, player_id: str, players: int, rating: Rating, played: int, won: int
) -> None:
    r = redis.Redis.from_url(stack.redis.url, decode_responses=True)
    try:
        s = Standing(rating, played, won, 1)
        r.hset(keys.ratings(players), player_id, json.dumps({**json.loads(s.to_json()), "v": 1}))
        r.zadd(keys.board(players), {player_id: rating.display})
    finally:
        r.close()


def finished_match(stack: Stack, me: dict[str, Any], partner: dict[str, Any]) -> str:
    """A 4-seat match me and my partner won 5-2 against two bots, as its table leaves it."""
    table_id = f"table-{uuid.uuid4().hex[:12]}"
    seats = (
        SeatResult(0, 0, me["player_id"], me["name"]),
        SeatResult(1, 1, None, "Bot 2"),
        SeatResult(2, 0, partner["player_id"], partner["name"]),
        SeatResult(3, 1, None, "Bot 4"),
    )
    ended = int(time.time() * 1000) - 60_000
    result = MatchResult(1, 4, (5, 2), seats, "normal", False, ended)
    mid = f"{table_id}.1"
    changes = {
        me["player_id"]: {"before": 1000, "after": 1112},
        partner["player_id"]: {"before": 1000, "after": 1112},
    }
    r = redis.Redis.from_url(stack.redis.url, decode_responses=True)
    try:
        record = match_record(mid, table_id, "ZZZZZZ", result, Settled(changes))
        r.set(keys.match(mid), json.dumps(record), ex=3600)
        for p in (me, partner):
            r.zadd(keys.history(p["player_id"]), {mid: ended})
    finally:
        r.close()
    return table_id


@pytest.mark.parametrize("lang", LANGS)
def test_a_passkey_made_on_one_device_signs_in_on_another_to_the_same_profile(
    browser: Any, stack: Stack, stack_url: str, lang: str
) -> None:
    base = local(stack_url)
    me = session(base, f"Ana {lang}")
    rated(stack, me["player_id"], 4, Rating(31.0, 3.0), 12, 8)
    first = phone(browser, lang, me)
    second = phone(browser, lang)
    try:
        page = first.page
        cdp, auth = authenticator(page)
        page.goto(f"{base}/profile")
        expect(page.locator("#profile-name-shown")).to_have_text(me["name"])
        page.click("#add-passkey")
        expect(page.locator(".passkey-list li")).to_have_count(1)
        (credential,) = cdp.send("WebAuthn.getCredentials", {"authenticatorId": auth})[
            "credentials"
        ]
        assert credential["isResidentCredential"]
        assert credential["rpId"] == "localhost"
        page.screenshot(path=f"{SHOTS}/passkey-added-{lang}.png", full_page=True)
        # Nothing the profile answers names the credential.
        mine = httpx.get(
            f"{base}/api/profiles/me", headers={"Authorization": f"Bearer {me['token']}"}
        ).text
        assert credential["credentialId"] not in mine
        assert credential["credentialId"].rstrip("=") not in mine

        # The other device: the same passkey (synced), no session.
        other = second.page
        cdp2, auth2 = authenticator(other)
        cdp2.send("WebAuthn.addCredential", {"authenticatorId": auth2, "credential": credential})
        other.goto(f"{base}/")
        expect(other.locator("html")).to_have_attribute("dir", "rtl" if lang == "ar" else "ltr")
        other.screenshot(path=f"{SHOTS}/home-signed-out-{lang}.png", full_page=True)
        # The way to the sign-in is on the first screen; the sign-in itself, at the page's foot.
        expect(other.locator("#to-sign-in")).to_be_in_viewport()
        other.click("#to-sign-in")
        expect(other.locator("#passkey-sign-in")).to_be_focused()
        expect(other.locator("#passkey-sign-in")).to_be_in_viewport()
        other.click("#passkey-sign-in")
        # Signed in where they stand: the name is theirs, and their profile a tap away, on the
        # first screen.
        expect(other.locator("#player-name")).to_have_value(me["name"])
        other.evaluate("window.scrollTo(0, 0)")
        expect(other.locator("#to-profile")).to_be_in_viewport()
        expect(other.locator("#to-sign-in")).to_have_count(0)
        other.click("#to-profile")
        expect(other).to_have_url(re.compile(r"/profile$"))
        expect(other.locator("#profile-name-shown")).to_have_text(me["name"])
        expect(other.locator("[data-player]")).to_have_attribute("data-player", me["player_id"])
        expect(other.locator("tr[data-size='4'] .rating")).to_have_text(
            str(Rating(31.0, 3.0).display)
        )
        moved = json.loads(other.evaluate("localStorage.getItem('quatro.session')"))
        assert moved["player_id"] == me["player_id"]
        assert moved["token"] != me["token"], "a session of its own for the new device"
        other.screenshot(path=f"{SHOTS}/signed-in-{lang}.png", full_page=True)
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_profile_history_and_leaderboard_pages(
    browser: Any, stack: Stack, stack_url: str, lang: str
) -> None:
    base = stack_url
    me = session(base, f"Zoé {lang}")
    partner = session(base, f"Jak {lang}")
    rated(stack, me["player_id"], 4, Rating(27.0, 4.0), 1, 1)
    rated(stack, partner["player_id"], 4, Rating(26.0, 5.0), 1, 1)
    table_id = finished_match(stack, me, partner)
    p = phone(browser, lang, me)
    try:
        page = p.page
        page.goto(f"{base}/profile")
        expect(page.locator("tr[data-size='4'] .rating")).to_have_text(
            str(Rating(27.0, 4.0).display)
        )
        expect(page.locator("tr[data-size='6'] td.muted")).to_be_visible()
        line = page.locator(".history-line")
        expect(line).to_have_count(1)
        expect(line.locator(".delta")).to_have_attribute("data-delta", "112")
        expect(line.locator(".match-scores")).to_have_text("5 – 2")
        expect(line.locator(".replay-link")).to_have_attribute("href", f"/replay/{table_id}")
        # The partner shows nothing: named, without a link.
        expect(line.locator(".who a")).to_have_count(0)
        expect(page.locator("#public-link")).to_have_count(0)
        page.screenshot(path=f"{SHOTS}/profile-{lang}.png", full_page=True)
        # Hidden from others, the own row on the leaderboard still names its player to them.
        page.click("tr[data-size='4'] th a")
        own = page.locator("tr.own-row .who")
        expect(own).to_contain_text(me["name"])
        expect(own.locator(".hidden-mine")).to_have_text(f"({catalog(lang)['board.hiddenMine']})")
        page.click("#to-profile")
        # Show the ratings: the public profile and the leaderboard name the player.
        page.check("#show-ratings")
        expect(page.locator("#public-link")).to_be_visible()
        page.click("#public-link")
        expect(page).to_have_url(re.compile(f"/p/{me['player_id']}$"))
        expect(page.locator("#profile-name-shown")).to_have_text(me["name"])
        expect(page.locator(".profile-history")).to_have_count(0)  # history still hidden
        page.screenshot(path=f"{SHOTS}/public-{lang}.png", full_page=True)
        page.click("#to-board")
        expect(page).to_have_url(re.compile(r"/leaderboard$"))
        expect(page.locator("#my-rank")).to_contain_text(str(Rating(27.0, 4.0).display))
        mine = page.locator("tr.own-row")
        expect(mine.first).to_be_visible()
        expect(mine.first.locator(".who")).to_contain_text(me["name"])
        page.screenshot(path=f"{SHOTS}/leaderboard-{lang}.png", full_page=True)
        # No page is wider than the phone.
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= TALL_PHONE["width"], width
    finally:
        p.close()


def lost_match(stack: Stack, base: str) -> tuple[dict[str, Any], str]:
    """A 4-seat match its host loses 0-5 to two idle bots: nobody is connected, so each round
    opens at once (R6), and the host's wrong Quatro! (its partner holds no carré) scores for
    the bots' team; the calls go to the table over Ray, as a gateway sends them. Seconds, where
    a match of smart bots takes a minute."""
    who = session(base, "Ana")
    auth = {"Authorization": f"Bearer {who['token']}"}
    with httpx.Client(base_url=base, timeout=30) as c:
        scenario = {"seed": 5, "time_scale": 1.0, "bot_policy": "idle"}
        r = c.post("/api/tables", json={"players": 4, "scenario": scenario}, headers=auth)
        assert r.status_code == 201, r.text
        code = r.json()["code"]
        assert c.post(f"/api/tables/{code}/fill", headers=auth).is_success
        assert c.post(f"/api/tables/{code}/start", headers=auth).is_success
    store = redis.Redis.from_url(stack.redis.url, decode_responses=True)
    try:
        record = json.loads(str(store.get(keys.table(code))))
    finally:
        store.close()
    ray = stack.driver()
    handle = ray.get_actor(record["actor"], namespace=stack.namespace)
    for n in range(9):
        kind = "next_round" if n % 2 else "quatro"
        act = Act.of(f"lose-{n}", "gw-test", who["player_id"], kind, {})
        answer = ray.get(send(handle, Serve(act, code)), timeout=30)
        assert isinstance(answer, Outcome)
        assert answer.ok, answer
    return who, code


def test_the_last_reveal_shows_each_rated_players_rating_change(
    browser: Any, stack: Stack, stack_url: str
) -> None:
    """Once a match is over, the reveal shows the host's rating change, as their profile has
    it, and leads to the profile; bots are not rated."""
    who, code = lost_match(stack, stack_url)
    p = phone(browser, "fr", who)
    try:
        page = p.page
        page.goto(f"{stack_url}/t/{code}")
        tag = page.locator(".rating-change[data-rating-seat='0'] .delta")
        expect(tag).to_be_visible(timeout=30_000)
        expect(page.locator(".rating-change")).to_have_count(1)
        me = httpx.get(
            f"{stack_url}/api/profiles/me", headers={"Authorization": f"Bearer {who['token']}"}
        ).json()
        (line,) = me["history"]
        assert line["delta"] < 0
        expect(tag).to_have_attribute("data-delta", str(line["delta"]))
        # Said to be a rating, in words a phone shows (a title is a tooltip no phone has).
        expect(page.locator(".rating-change")).to_contain_text(catalog("fr")["over.ratingTag"])
        page.locator(".reveal.panel").screenshot(path=f"{SHOTS}/reveal-fr.png")
        page.click("#my-profile")
        expect(page).to_have_url(re.compile(r"/profile$"))
        expect(page.locator(".history-line")).to_have_count(1)
        # The partner bot as the reveal names it, not the record's English "Bot 3".
        expect(page.locator(".history-line .who")).to_have_text("Ana et Robot 3")
    finally:
        p.close()
