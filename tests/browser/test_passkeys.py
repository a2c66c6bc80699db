"""Passkeys where the browser can use them, and labels that tell devices apart (issue 46,
point 4), by touch on a phone (390×844, in Arabic) and by keyboard on a desktop (1280×800, in
French):

- on 127.0.0.1 (an IP address can be no passkey's site: Chromium refuses the ceremony, which the
  client told as "No passkey was used.") neither the home page nor the profile offers a passkey,
  and both say why, in the page's language; on `localhost` both offer them;
- two passkeys added from one browser read apart (its browser and platform, then a number);
  one is renamed in place (a label that breaks the rule is refused, Escape leaves it as it was),
  and Remove asks first, in the page: kept once, removed once confirmed;
- the rename route refuses a label of control characters (422) and another player's passkey
  (404, as one that never was), and changes nothing then.

The ceremonies run against Chromium's virtual authenticator (CDP `WebAuthn`), as in
tests/browser/test_profiles.py.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, ViewportSize, expect

from tests.browser.players import DESKTOP, TALL_PHONE, new_player
from tests.browser.test_profiles import authenticator, catalog, local, session
from tests.browser.walker import Walker


def labels(page: Page) -> list[str]:
    found: list[str] = page.locator(".passkey-list .passkey-label").all_inner_texts()
    return found


def mine(base: str, who: dict[str, Any]) -> list[dict[str, Any]]:
    auth = {"Authorization": f"Bearer {who['token']}"}
    got = httpx.get(f"{base}/api/profiles/me", headers=auth, timeout=30)
    assert got.status_code == 200, got.text
    keys: list[dict[str, Any]] = got.json()["passkeys"]
    return keys


def sign_in_as(page: Page, who: dict[str, Any] | None) -> None:
    """The page's session (as a first game or a passkey leaves it), or none."""
    page.evaluate(
        "v => v === null ? localStorage.removeItem('quatro.session')"
        " : localStorage.setItem('quatro.session', v)",
        None if who is None else json.dumps(who),
    )


@pytest.mark.parametrize(
    ("view", "touch", "lang"), [(TALL_PHONE, True, "ar"), (DESKTOP, False, "fr")]
)
def test_passkeys_are_offered_only_where_they_work_and_each_reads_apart(
    browser: Any, stack_url: str, view: ViewportSize, touch: bool, lang: str
) -> None:
    words = catalog(lang)
    me = session(stack_url, "Kay")
    player = new_player(browser, "Kay", viewport=view, touch=touch)
    player.context.add_init_script(f"localStorage.setItem('quatro.lang', {json.dumps(lang)});")
    walker = Walker.of(player, touch)
    page = walker.page
    try:
        # 127.0.0.1: the home page offers no passkey sign-in, and says why.
        page.goto(f"{stack_url}/")
        expect(page.locator("#home-title")).to_be_visible()
        expect(page.locator("#to-sign-in")).to_have_count(0)
        expect(page.locator("#passkey-sign-in")).to_have_count(0)
        why = words["passkey.needsName"].replace("{host}", "\u2068127.0.0.1\u2069")
        expect(page.locator(".passkey-sign-in .passkey-problem")).to_have_text(why)
        # Nor does the profile offer to add one.
        sign_in_as(page, me)
        page.goto(f"{stack_url}/profile")
        expect(page.locator("#profile-name-shown")).to_have_text(me["name"])
        expect(page.locator("#add-passkey")).to_have_count(0)
        expect(page.locator(".passkeys .passkey-problem")).to_have_text(why)

        # localhost: offered on both.
        base = local(stack_url)
        sign_in_as(page, None)
        page.goto(f"{base}/")
        expect(page.locator("#to-sign-in")).to_be_visible()
        expect(page.locator("#passkey-sign-in")).to_have_count(1)
        expect(page.locator(".passkey-problem")).to_have_count(0)
        authenticator(page)
        sign_in_as(page, me)
        page.goto(f"{base}/profile")
        expect(page.locator(".passkey-problem")).to_have_count(0)
        # Two passkeys from one browser: its browser and platform, then numbered apart.
        for n in (1, 2):
            walker.go("#add-passkey")
            expect(page.locator(".passkey-list li")).to_have_count(n)
        first, second = labels(page)
        assert " · " in first, first
        assert second == f"{first} (2)", (first, second)
        assert [k["label"] for k in mine(base, me)] == [first, second]
        lines = page.locator(".passkey-list li")

        # Rename the second in place: a label past 40 characters is refused, said so, and
        # nothing changes; Escape leaves it as it was; then a new label is kept.
        walker.go(f"[data-passkey='{mine(base, me)[1]['id']}'] [data-open='rename']")
        field = lines.nth(1).locator(".passkey-label-field")
        expect(field).to_be_focused()
        expect(field).to_have_value(second)
        field.fill("")
        page.keyboard.type("x" * 41)
        page.keyboard.press("Enter")
        expect(lines.nth(1).locator(".error")).to_have_text(words["passkey.labelProblem"])
        page.keyboard.press("Escape")
        expect(lines.nth(1).locator("[data-open='rename']")).to_be_focused()
        assert labels(page) == [first, second]
        walker.go(f"[data-passkey='{mine(base, me)[1]['id']}'] [data-open='rename']")
        field.fill("")
        page.keyboard.type("  Téléphone   de Kay ")
        if touch:
            lines.nth(1).locator("[data-rename='save']").tap()
        else:
            walker.keys.press("Enter")
        expect(lines.nth(1).locator(".passkey-label")).to_have_text("Téléphone de Kay")
        expect(lines.nth(1).locator("[data-open='rename']")).to_be_focused()
        assert [k["label"] for k in mine(base, me)] == [first, "Téléphone de Kay"]

        # Remove asks first, in the page: kept, then removed once confirmed.
        ask = lines.nth(0).locator(".passkey-remove")
        walker.go(f"[data-passkey='{mine(base, me)[0]['id']}'] [data-open='remove']")
        expect(ask).to_contain_text(first)
        expect(ask.locator("[data-remove='keep']")).to_be_focused()
        if touch:
            ask.locator("[data-remove='keep']").tap()
        else:
            page.keyboard.press("Escape")
        expect(ask).to_have_count(0)
        expect(lines.nth(0).locator("[data-open='remove']")).to_be_focused()
        assert len(mine(base, me)) == 2
        walker.go(f"[data-passkey='{mine(base, me)[0]['id']}'] [data-open='remove']")
        if touch:
            ask.locator("[data-remove='confirm']").tap()
        else:
            # The question takes focus once it is drawn: a Shift+Tab before that would start
            # from the button that opened it.
            expect(ask.locator("[data-remove='keep']")).to_be_focused()
            walker.keys.press("Shift+Tab")
            expect(ask.locator("[data-remove='confirm']")).to_be_focused()
            walker.keys.press("Enter")
        expect(lines).to_have_count(1)
        assert labels(page) == ["Téléphone de Kay"]
        assert [k["label"] for k in mine(base, me)] == ["Téléphone de Kay"]
        expect(page.locator("#passkeys-title")).to_be_focused()

        # The route: a label of control characters, another's passkey; nothing changes.
        key_id = mine(base, me)[0]["id"]
        auth = {"Authorization": f"Bearer {me['token']}"}
        bad = httpx.patch(
            f"{base}/api/passkeys/{key_id}", json={"label": "a\u202eb\x07"}, headers=auth
        )
        assert (bad.status_code, bad.json()["error"]["code"]) == (422, "bad_message")
        other = session(stack_url, "Lou")
        theirs = httpx.patch(
            f"{base}/api/passkeys/{key_id}",
            json={"label": "Mine now"},
            headers={"Authorization": f"Bearer {other['token']}"},
        )
        assert (theirs.status_code, theirs.json()["error"]["code"]) == (404, "unknown_passkey")
        assert [k["label"] for k in mine(base, me)] == ["Téléphone de Kay"]
    finally:
        player.close()
