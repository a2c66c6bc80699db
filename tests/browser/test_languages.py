"""Languages in the browser: plural rules (Arabic's six forms, our own rule for Haitian Creole),
the page's language and direction, the remembered switcher, and axe on the home page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

STATIC = Path(__file__).resolve().parents[2] / "gateway" / "static"


def catalog(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((STATIC / "i18n" / f"{lang}.json").read_text("utf-8"))
    return data


def home_en(browser: Any, static_url: str) -> Iterator[Page]:
    context = browser.new_context(locale="en-US")
    page = context.new_page()
    page.goto(f"{static_url}/")
    expect(page.locator("#home-title")).to_be_visible()
    yield page
    context.close()


@pytest.fixture
def page_en(browser: Any, static_url: str) -> Iterator[Page]:
    """A fresh English home page, for a test that looks at the page itself or leaves it."""
    yield from home_en(browser, static_url)


@pytest.fixture(scope="module")
def i18n_en(browser: Any, static_url: str) -> Iterator[Page]:
    """One English home page for the module's tests of the client's i18n functions (plural
    rules, messages, lists): each sets the language it reads in, and none looks at the page, so
    they share it. A context and a page load for each of its 18 tests took 27 s of set-up in
    the clean-clone CI of bdddfb7."""
    yield from home_en(browser, static_url)


def run_i18n(page: Page, script: str, arg: Any = None) -> Any:
    """Evaluate `script` (a function of (i18n, arg)) with the client's own i18n module."""
    return page.evaluate(
        f"async (arg) => {{ const i18n = await import('/static/js/i18n.js'); "
        f"return ({script})(i18n, arg); }}",
        arg,
    )


def test_arabic_plural_rule_has_six_forms_and_agrees_with_cldr(i18n_en: Page) -> None:
    got = run_i18n(
        i18n_en,
        "(i18n) => { const cldr = new Intl.PluralRules('ar'); const out = [];"
        " for (let n = 0; n <= 1200; n++) out.push([n, i18n.pluralAr(n), cldr.select(n)]);"
        " return out; }",
    )
    mismatches = [row for row in got if row[1] != row[2]]
    assert mismatches == []
    expected = {0: "zero", 1: "one", 2: "two", 3: "few", 10: "few", 11: "many", 99: "many"}
    expected |= {100: "other", 102: "other", 103: "few", 111: "many", 1000: "other"}
    by_n = {n: form for n, form, _ in got}
    for n, form in expected.items():
        assert by_n[n] == form, n
    assert {form for _, form, _ in got} == {"zero", "one", "two", "few", "many", "other"}


def test_haitian_plural_rule_is_ours_since_browsers_have_none(i18n_en: Page) -> None:
    supported = i18n_en.evaluate("Intl.PluralRules.supportedLocalesOf(['ht'])")
    assert supported == []  # why the client carries its own rule
    forms = run_i18n(i18n_en, "(i18n) => [0, 1, 2, 3, 11, 100].map((n) => i18n.pluralHt(n))")
    assert forms == ["other", "one", "other", "other", "other", "other"]


@pytest.mark.parametrize(
    ("lang", "n", "form"),
    [
        ("ar", 0, "zero"),
        ("ar", 1, "one"),
        ("ar", 2, "two"),
        ("ar", 3, "few"),
        ("ar", 11, "many"),
        ("ar", 100, "other"),
        ("ht", 1, "one"),
        ("ht", 5, "other"),
        ("fr", 0, "one"),  # French counts zero as singular
        ("fr", 2, "other"),
        ("en", 0, "other"),
        ("en", 1, "one"),
    ],
)
def test_plural_messages_pick_the_right_form(i18n_en: Page, lang: str, n: int, form: str) -> None:
    text = run_i18n(
        i18n_en,
        "async (i18n, [lang, n]) => { await i18n.setLanguage(lang);"
        " return i18n.t('lobby.seatsFree', { n }); }",
        [lang, n],
    )
    assert text == catalog(lang)["lobby.seatsFree"][form].replace("{n}", str(n))


def test_arabic_browser_gets_a_right_to_left_arabic_page(browser: Any, static_url: str) -> None:
    context = browser.new_context(locale="ar-MA")
    try:
        page = context.new_page()
        page.goto(f"{static_url}/")
        ar = catalog("ar")
        expect(page.locator("#home-title")).to_be_visible()
        assert page.evaluate("document.documentElement.lang") == "ar"
        assert page.evaluate("document.documentElement.dir") == "rtl"
        assert page.evaluate("getComputedStyle(document.body).direction") == "rtl"
        expect(page.locator("label[for=player-name]")).to_have_text(ar["lobby.nameLabel"])
        # Right to left for real: the name field's label starts at the right edge.
        label = page.locator("label[for=player-name]").bounding_box()
        field = page.locator("#player-name").bounding_box()
        assert label is not None
        assert field is not None
        assert abs((label["x"] + label["width"]) - (field["x"] + field["width"])) < 2
        assert page.title() == ar["app.title"]
    finally:
        context.close()


def visible_texts(page: Page) -> list[str]:
    return list(
        page.evaluate(
            """() => {
            const out = [];
            const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            while (walk.nextNode()) {
              const el = walk.currentNode.parentElement;
              const text = walk.currentNode.textContent.trim();
              if (!text || !el || el.closest('.visually-hidden, option, noscript')) continue;
              if (el.offsetParent === null) continue;
              out.push(text);
            }
            for (const el of document.querySelectorAll('[placeholder]')) out.push(el.placeholder);
            return out;
        }"""
        )
    )


def test_haitian_creole_is_whole_in_an_english_browser(browser: Any, static_url: str) -> None:
    context = browser.new_context(locale="en-US")
    try:
        page = context.new_page()
        page.goto(f"{static_url}/")
        expect(page.locator("#home-title")).to_be_visible()
        assert page.evaluate("document.documentElement.lang") == "en"
        page.select_option("header select", "ht")
        ht, en = catalog("ht"), catalog("en")
        expect(page.locator("label[for=player-name]")).to_have_text(ht["lobby.nameLabel"])
        assert page.evaluate("document.documentElement.lang") == "ht"
        assert page.evaluate("document.documentElement.dir") == "ltr"
        # No English left over: no visible text is an English message that Creole words
        # differently.
        english_only = {
            v for k, v in en.items() if isinstance(v, str) and v != ht[k] and len(v) > 2
        }
        leftovers = [text for text in visible_texts(page) if text in english_only]
        assert leftovers == []
        for key in ("home.newTable", "home.joinTitle", "home.lead"):
            expect(page.locator("main")).to_contain_text(ht[key])
        expect(page.locator("button[data-players='6']")).to_have_text(
            ht["home.createFor"]["other"].replace("{n}", "6")
        )
        # The choice is remembered over the browser's preference.
        page.reload()
        expect(page.locator("label[for=player-name]")).to_have_text(ht["lobby.nameLabel"])
        assert page.evaluate("document.documentElement.lang") == "ht"
        help_href = page.locator("header a[href*='/help/']").get_attribute("href")
        assert help_href == "/static/help/ht.html"
    finally:
        context.close()


def test_how_to_play_pages_exist_in_each_language(page_en: Page, static_url: str) -> None:
    for lang, direction in (("en", "ltr"), ("fr", "ltr"), ("ht", "ltr"), ("ar", "rtl")):
        page_en.goto(f"{static_url}/static/help/{lang}.html")
        assert page_en.evaluate("document.documentElement.lang") == lang
        assert page_en.evaluate("document.documentElement.dir") == direction
        assert len(page_en.locator("main").inner_text()) > 1500
        assert page_en.locator("h2").count() >= 5


def test_home_page_has_no_serious_accessibility_violation(page_en: Page) -> None:
    results = Axe().run(page_en)
    severe = [
        (v["id"], v["impact"])
        for v in results.response["violations"]
        if v.get("impact") in {"serious", "critical"}
    ]
    assert severe == []


def test_home_page_fits_a_360_pixel_phone(browser: Any, static_url: str) -> None:
    context = browser.new_context(locale="fr-FR", viewport={"width": 360, "height": 740})
    try:
        page = context.new_page()
        page.goto(f"{static_url}/")
        expect(page.locator("#home-title")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
    finally:
        context.close()


@pytest.mark.parametrize(
    ("lang", "latin_comma", "and_word"),
    [("en", True, " and "), ("fr", True, " et "), ("ht", True, " ak "), ("ar", False, "و")],
)
def test_lists_use_each_languages_own_words_and_separators(
    i18n_en: Page, lang: str, latin_comma: bool, and_word: str
) -> None:
    """Team lists ("Team 1, Team 3") follow the language: Arabic has its own comma and "و"."""
    text, teams = run_i18n(
        i18n_en,
        "async (i18n, lang) => { await i18n.setLanguage(lang);"
        " const names = await import('/static/js/names.js');"
        " return [i18n.listText(['A', 'B', 'C']), names.listTeams([0, 2])]; }",
        lang,
    )
    assert and_word in text
    assert ("," in text) == latin_comma
    assert text.startswith("A")
    assert text.endswith("C")
    label = catalog(lang)["team.name"]
    assert label.replace("{n}", "1") in teams
    assert label.replace("{n}", "3") in teams
    assert ("," in teams) is False  # two items: only the language's "and"
    assert and_word.strip() in teams
