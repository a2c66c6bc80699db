"""The four message catalogs: same keys, complete plural forms, same placeholders, and every key
the client asks for exists. Plain Python: no browser needed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.errors import ErrorCode

STATIC = Path(__file__).resolve().parents[2] / "gateway" / "static"
LANGS = ("en", "fr", "ht", "ar")
# Kept equal to PLURAL_FORMS in gateway/static/js/i18n.js (checked below).
PLURAL_FORMS = {
    "en": ["one", "other"],
    "fr": ["one", "other"],
    "ht": ["one", "other"],
    "ar": ["zero", "one", "two", "few", "many", "other"],
}
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def load(lang: str) -> dict[str, Any]:
    data = json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def catalogs() -> dict[str, dict[str, Any]]:
    return {lang: load(lang) for lang in LANGS}


def placeholders(value: str | dict[str, str]) -> set[str]:
    texts = value.values() if isinstance(value, dict) else [value]
    found: set[str] = set()
    for text in texts:
        found |= set(PLACEHOLDER.findall(text))
    # A plural form may leave the number out ("yon sèl plas", "مقعدان"): `n` is optional.
    return found - {"n"}


def test_every_key_exists_in_all_four_catalogs(catalogs: dict[str, dict[str, Any]]) -> None:
    keys = set(catalogs["en"])
    for lang in LANGS:
        assert set(catalogs[lang]) == keys, (
            lang,
            sorted(keys - set(catalogs[lang])),
            sorted(set(catalogs[lang]) - keys),
        )


def test_plural_entries_have_every_form_of_each_language(
    catalogs: dict[str, dict[str, Any]],
) -> None:
    plural_keys = {k for k, v in catalogs["en"].items() if isinstance(v, dict)}
    assert plural_keys, "the catalogs should have plural entries"
    for lang in LANGS:
        for key in plural_keys:
            value = catalogs[lang][key]
            assert isinstance(value, dict), (lang, key)
            assert sorted(value) == sorted(PLURAL_FORMS[lang]), (lang, key, sorted(value))
            assert all(isinstance(v, str) and v for v in value.values()), (lang, key)
        singular = {k for k, v in catalogs[lang].items() if not isinstance(v, dict)}
        assert singular == set(catalogs["en"]) - plural_keys, lang


def test_translations_use_the_same_placeholders(catalogs: dict[str, dict[str, Any]]) -> None:
    for key, value in catalogs["en"].items():
        want = placeholders(value)
        for lang in LANGS[1:]:
            assert placeholders(catalogs[lang][key]) == want, (lang, key)


def test_plural_forms_match_the_client_module() -> None:
    source = (STATIC / "js" / "i18n.js").read_text(encoding="utf-8")
    for lang, forms in PLURAL_FORMS.items():
        listed = ", ".join(f'"{f}"' for f in forms)
        assert f"{lang}: [{listed}]" in source, lang


def test_every_key_the_client_uses_is_in_the_catalog(catalogs: dict[str, dict[str, Any]]) -> None:
    # Any string literal "ns.name" whose namespace is a catalog namespace is a key: this also
    # catches keys chosen by a ternary (t(ok ? "vote.passed" : "vote.failed")).
    namespaces = {key.split(".", 1)[0] for key in catalogs["en"]}
    used: set[str] = set()
    for path in (STATIC / "js").glob("*.js"):
        text = path.read_text(encoding="utf-8")
        for literal in re.findall(r"""["']([a-z0-9]+\.[a-zA-Z0-9_.]+)["']""", text):
            if literal.split(".", 1)[0] in namespaces:
                used.add(literal)
    assert len(used) > 100
    assert sorted(used - set(catalogs["en"])) == []


def test_error_codes_of_the_protocol_have_messages(catalogs: dict[str, dict[str, Any]]) -> None:
    codes = [
        "bad_message",
        "unknown_type",
        "wrong_phase",
        "not_your_card",
        "bad_slot",
        "cooldown",
        "stale",
        "floor_cooldown",
        "no_floor",
        "bad_emoji",
        "sign_taken",
        "bad_team",
        "vote_refused",
        "not_voter",
        "not_host",
        "rate_limited",
        "seat_taken",
        "already_seated",
        "table_not_full",
        "not_a_bot",
        "not_allowed",
        "bad_seat",
        "bad_token",
        "unknown_table",
        "no_seat",
        "watching_off",
        *(code.value for code in ErrorCode),  # every code of the wire (engine/errors.py)
    ]
    for code in codes:
        assert f"err.{code}" in catalogs["en"], code


# A value may read as the English one where the words are the same in that language too; every
# other value of fr, ht and ar is its own (issue 46: the Kreyòl replay still said "Match").
SAME_AS_ENGLISH = {
    "home.title": "the game's name",
    "seat.short": "a seat's number, '#3'",
    "rank.10": "digits stay Latin in every language (js/i18n.js)",
    "rank.9": "digits",
    "rank.8": "digits",
    "rank.7": "digits",
    "rank.6": "digits",
    "reveal.timeoutTag": "empty: a void round tags nobody",
    "replay.times": "a speed, '2×'",
}
SAME_IN = {
    "fr": {
        "face.A": "the ace is 'A' on French cards too",
        "status.scores": "'scores' is French",
        "emoji.1f335": "'cactus' is French",
        "emoji.23f8": "'pause' is French",
        "emoji.1f916": "'robot' is French",
        "replay.pause": "'Pause' is French",
        "board.pages": "'Pages' is French",
        "nav.pages": "'Pages' is French",
    },
    "ht": {"call.quatro": "the game's own call, its name"},
    "ar": {
        "face.A": "Arabic cards keep the Latin letters",
        "face.K": "Latin letters",
        "face.Q": "Latin letters",
        "face.J": "Latin letters",
    },
}


def test_every_string_is_translated(catalogs: dict[str, dict[str, Any]]) -> None:
    for lang in LANGS[1:]:
        same = {
            key
            for key, value in catalogs["en"].items()
            if catalogs[lang][key] == value
            and key not in SAME_AS_ENGLISH
            and key not in SAME_IN[lang]
        }
        assert sorted(same) == [], lang
        # An exception that no longer applies is dropped, so that the lists stay true.
        stale = {k for k in SAME_IN[lang] if catalogs[lang][k] != catalogs["en"][k]}
        assert sorted(stale) == [], lang
