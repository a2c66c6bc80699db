"""Bringing friends: the invite offers the system share sheet where the browser has one (and
only there), a copy button that works with the async clipboard and without it, and a QR code
with a name a screen reader says — on a phone in Arabic and a desktop in English."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import ViewportSize, expect

from tests.browser.players import create_table, new_player
from tests.browser.test_languages import catalog
from tests.browser.test_match import severe_violations

PHONE: ViewportSize = {"width": 390, "height": 664}
DESKTOP: ViewportSize = {"width": 1280, "height": 800}

# A phone's share sheet, recorded instead of opened.
FAKE_SHARE = (
    "window.__shared = []; navigator.share = async (data) => { window.__shared.push(data); };"
)
# A browser without a share sheet, whose async clipboard refuses (plain http, say).
NO_SHARE_NO_CLIPBOARD = (
    "delete Navigator.prototype.share; delete navigator.share;"
    "Object.defineProperty(navigator, 'clipboard', { value: { writeText: () =>"
    " Promise.reject(new Error('denied')) } });"
)


@pytest.mark.parametrize(
    ("locale", "lang", "view", "script"),
    [("ar", "ar", PHONE, FAKE_SHARE), ("en-US", "en", DESKTOP, NO_SHARE_NO_CLIPBOARD)],
)
def test_the_invite_can_be_shared_copied_and_scanned(
    browser: Any, stack_url: str, locale: str, lang: str, view: ViewportSize, script: str
) -> None:
    words = catalog(lang)
    host = new_player(browser, "Rosa", locale=locale, viewport=view)
    try:
        host.context.add_init_script(script)
        if script == FAKE_SHARE:
            host.context.grant_permissions(["clipboard-read", "clipboard-write"])
        code = create_table(host, stack_url, 4)
        page = host.page
        link = f"{stack_url}/t/{code}"
        share = page.locator("#invite-share")
        status = page.locator(".invite [role=status]")

        page.click("#invite-copy")
        if script == FAKE_SHARE:
            expect(status).to_have_text(words["lobby.copied"])
            assert page.evaluate("navigator.clipboard.readText()") == link
            share.click()
            page.wait_for_function("window.__shared.length === 1")
            shared = page.evaluate("window.__shared[0]")
            assert shared["url"] == link
            assert code in shared["text"]
        else:
            expect(share).to_have_count(0)
            # The fallback copied the selected link, or says plainly to copy it by hand.
            said = f"^({re.escape(words['lobby.copied'])}|{re.escape(words['invite.copyFailed'])})$"
            expect(status).to_have_text(re.compile(said))
            selected = page.evaluate(
                "window.getSelection().toString() || document.activeElement.value"
            )
            assert selected == link

        page.locator(".invite-qr summary").click()
        # Substituted values sit in Unicode isolates (U+2068…U+2069).
        label = words["invite.qrLabel"].replace("{code}", f"\u2068{code}\u2069")
        qr = page.get_by_role("img", name=label, exact=True)
        expect(qr).to_be_visible()
        box = qr.bounding_box()
        assert box is not None
        assert box["width"] >= 120
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= view["width"]
        assert qr.locator("path").get_attribute("d")
        assert severe_violations(page) == []
    finally:
        host.close()
