"""Profiles, passkeys, history and leaderboards in a real Chromium (issue 36), on a phone (390×844,
touch), in each of the four languages:

- a passkey made on one device signs in on another: register on one browser context with
  Chromium's virtual authenticator (CDP `WebAuthn`), carry the credential to a second
  context's authenticator (as a synced passkey would be), sign in there from the home page: the
  same profile, name and rating;
- the profile page: a guest's profile says until when it is kept and keeps it at a press
  (issue 47), ratings per table size (a provisional one marked "1032?"), the last matches
  with replay links (one against bots alone, not rated, saying why), what others see, the
  public profile, and the leaderboard with the player's own row (not listed yet: how many rated
  matches remain);
- the reveal of a match of people on two teams (each change, marked provisional) and of one
  against bots alone (not rated, and why).

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
from engine.ratings import MatchResult, Rating, SeatResult, provisional
from tests.browser.bot_match import FinishedMatch
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
        if not provisional(played):  # a leaderboard lists the established only
            r.zadd(keys.board(players), {player_id: rating.display})
    finally:
        r.close()


def finished_matches(stack: Stack, me: dict[str, Any], other: dict[str, Any]) -> str:
    """Two 4-seat matches as their tables leave them: me against `other` (a bot partner each),
    won 5-2 and rated (my first rated match), then me against bots alone, not rated. The
    first's table id."""
    table_id = f"table-{uuid.uuid4().hex[:12]}"
    ended = int(time.time() * 1000) - 120_000
    people = (
        SeatResult(0, 0, me["player_id"], me["name"]),
        SeatResult(1, 1, other["player_id"], other["name"]),
        SeatResult(2, 0, None, "Bot 3"),
        SeatResult(3, 1, None, "Bot 4"),
    )
    alone = (people[0], SeatResult(1, 1, None, "Bot 2"), *people[2:])
    changes = {
        me["player_id"]: {"before": 1000, "after": 1112, "played": 1},
        other["player_id"]: {"before": 1000, "after": 951, "played": 1},
    }
    r = redis.Redis.from_url(stack.redis.url, decode_responses=True)
    try:
        for n, seats, settled in (
            (1, people, Settled(changes)),
            (2, alone, Settled({}, "bots")),
        ):
            mid = f"{table_id}.{n}"
            result = MatchResult(n, 4, (5, 2), seats, "normal", False, ended + n)
            record = match_record(mid, table_id, "ZZZZZZ", result, settled)
            r.set(keys.match(mid), json.dumps(record), ex=3600)
            r.zadd(keys.history(me["player_id"]), {mid: ended + n})
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
    other = session(base, f"Jak {lang}")
    rated(stack, me["player_id"], 4, Rating(27.0, 4.0), 1, 1)
    # Someone listed at 4 seats, so that the board has rows below which the own row stands,
    # whatever ran before this test.
    rated(stack, other["player_id"], 4, Rating(26.0, 3.0), 12, 6)
    table_id = finished_matches(stack, me, other)
    words = catalog(lang)
    nine = words["board.notListed"]["few" if lang == "ar" else "other"].replace("{n}", "9")
    p = phone(browser, lang, me)
    try:
        page = p.page
        page.goto(f"{base}/profile")
        # A new session's profile is a guest's (issue 47): the page says until when it is
        # kept, and keeps it for good at a press.
        guest = page.locator("section.guest")
        lead = words["profile.guestLead"].split("{date}")[0].strip()
        expect(guest).to_contain_text(lead)
        expect(guest.locator("#guest-title")).to_have_text(words["profile.guestTitle"])
        page.click("#keep-profile")
        expect(guest).to_have_count(0)
        kept = httpx.get(
            f"{base}/api/profiles/me", headers={"Authorization": f"Bearer {me['token']}"}
        ).json()
        assert (kept["lasting"], kept["expires"]) == (True, None)
        # One rated match: the rating is provisional, marked, explained, not ranked yet.
        display = Rating(27.0, 4.0).display
        expect(page.locator("tr[data-size='4'] .rating")).to_have_text(f"{display}?")
        expect(page.locator(".profile-ratings .provisional-note")).to_contain_text(
            words["profile.provisional"]
        )
        expect(page.locator("[data-to-list='4']")).to_contain_text("9")
        expect(page.locator("tr[data-size='6'] td.muted")).to_be_visible()
        lines = page.locator(".history-line")
        expect(lines).to_have_count(2)
        rated_line, bots_line = lines.nth(1), lines.nth(0)  # newest first
        expect(rated_line.locator(".delta")).to_have_attribute("data-delta", "112")
        expect(rated_line.locator(".delta")).to_have_text("+112?")
        expect(rated_line.locator(".match-scores")).to_have_text("5 – 2")
        expect(rated_line.locator(".replay-link")).to_have_attribute("href", f"/replay/{table_id}")
        # The match against bots alone says it was not rated, and why.
        expect(bots_line.locator(".delta")).to_have_count(0)
        expect(bots_line.locator(".unrated[data-unrated='bots']")).to_have_text(
            words["profile.unratedBots"]
        )
        # The partner is a bot: named as the page's language names bots, without a link.
        expect(rated_line.locator(".who a")).to_have_count(0)
        expect(page.locator("#public-link")).to_have_count(0)
        page.screenshot(path=f"{SHOTS}/profile-{lang}.png", full_page=True)
        # Not listed yet: the own row, below the board, names its player to them and says how
        # many rated matches remain; hidden from others, it says that too.
        page.click("tr[data-size='4'] th a")
        expect(page.locator("#my-rank")).to_have_text(nine)
        own = page.locator("tr.own-row")
        expect(own.locator(".rank")).to_have_text("\u2013")
        expect(own.locator(".rating")).to_have_text(f"{display}?")
        expect(own.locator(".who")).to_contain_text(me["name"])
        expect(own.locator(".hidden-mine")).to_have_text(f"({words['board.hiddenMine']})")
        page.click("#to-profile")
        # Show the ratings: the public profile shows them, still marked.
        page.check("#show-ratings")
        expect(page.locator("#public-link")).to_be_visible()
        page.click("#public-link")
        expect(page).to_have_url(re.compile(f"/p/{me['player_id']}$"))
        expect(page.locator("#profile-name-shown")).to_have_text(me["name"])
        expect(page.locator("tr[data-size='4'] .rating")).to_have_text(f"{display}?")
        expect(page.locator(".profile-history")).to_have_count(0)  # history still hidden
        page.screenshot(path=f"{SHOTS}/public-{lang}.png", full_page=True)
        page.click("#to-board")
        expect(page).to_have_url(re.compile(r"/leaderboard$"))
        expect(page.locator("#my-rank")).to_have_text(nine)
        mine = page.locator("tr.own-row")
        expect(mine.first).to_be_visible()
        expect(mine.first.locator(".who")).to_contain_text(me["name"])
        page.screenshot(path=f"{SHOTS}/leaderboard-{lang}.png", full_page=True)
        # No page is wider than the phone.
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= TALL_PHONE["width"], width
    finally:
        p.close()


def people_match(stack: Stack, base: str) -> tuple[dict[str, Any], str]:
    """A 4-seat match of Ana (host, seat 0) against Bea (seat 1), idle bots as their partners,
    that Ana loses 0-5: nobody is connected, so each round opens at once (R6), and Ana's wrong
    Quatro! (her partner holds no carré) scores for Bea's team; the calls go to the table over
    Ray, as a gateway sends them. Seconds, where a match of smart bots takes a minute."""
    who, bea = session(base, "Ana"), session(base, "Bea")
    auth = {"Authorization": f"Bearer {who['token']}"}
    with httpx.Client(base_url=base, timeout=30) as c:
        scenario = {"seed": 5, "time_scale": 1.0, "bot_policy": "idle"}
        r = c.post("/api/tables", json={"players": 4, "scenario": scenario}, headers=auth)
        assert r.status_code == 201, r.text
        code = r.json()["code"]
        seat = c.post(
            f"/api/tables/{code}/seats/1", headers={"Authorization": f"Bearer {bea['token']}"}
        )
        assert seat.is_success, seat.text
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


def test_the_last_reveal_shows_each_rated_players_change_or_why_nobody_was_rated(
    browser: Any, stack: Stack, stack_url: str, finished_match: FinishedMatch
) -> None:
    """Once a match of people on two teams is over, the reveal shows each one's rating change,
    as their profile has it, marked provisional for a first rated match, and leads to the
    profile; bots are not rated. A match of one person against bots alone (the session's
    shared bot match) says, at its reveal, that it was not rated and why."""
    who, code = people_match(stack, stack_url)
    fr, ar = catalog("fr"), catalog("ar")
    p = phone(browser, "fr", who)
    alone = phone(browser, "ar", finished_match.session)
    try:
        page = p.page
        page.goto(f"{stack_url}/t/{code}")
        tag = page.locator(".rating-change[data-rating-seat='0'] .delta")
        expect(tag).to_be_visible(timeout=30_000)
        expect(page.locator(".rating-change")).to_have_count(2)
        me = httpx.get(
            f"{stack_url}/api/profiles/me", headers={"Authorization": f"Bearer {who['token']}"}
        ).json()
        (line,) = me["history"]
        assert line["delta"] < 0
        expect(tag).to_have_attribute("data-delta", str(line["delta"]))
        expect(tag).to_have_text(f"\u2212{-line['delta']}?")
        expect(page.locator(".reveal .provisional-note")).to_contain_text(fr["over.provisional"])
        expect(page.locator(".unrated-note")).to_have_count(0)
        # Said to be a rating, in words a phone shows (a title is a tooltip no phone has).
        expect(page.locator(".rating-change").first).to_contain_text(fr["over.ratingTag"])
        page.locator(".reveal.panel").screenshot(path=f"{SHOTS}/reveal-fr.png")
        page.click("#my-profile")
        expect(page).to_have_url(re.compile(r"/profile$"))
        expect(page.locator(".history-line")).to_have_count(1)
        # The partner bot as the reveal names it, not the record's English "Bot 3".
        expect(page.locator(".history-line .who")).to_have_text("Ana et Robot 3")

        # One person against bots alone: nobody rated, and the reveal says why.
        page = alone.page
        page.goto(f"{stack_url}/t/{finished_match.code}")
        note = page.locator(".reveal .unrated-note[data-unrated='bots']")
        expect(note).to_have_text(ar["over.unratedBots"], timeout=30_000)
        expect(page.locator(".rating-change")).to_have_count(0)
        expect(page.locator("#my-profile")).to_have_count(0)
        page.locator(".reveal.panel").screenshot(path=f"{SHOTS}/reveal-unrated-ar.png")
    finally:
        p.close()
        alone.close()
