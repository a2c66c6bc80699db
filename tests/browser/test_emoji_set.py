"""The emoji pictures shipped with the client (gateway/static/vendor/twemoji/): exactly one for
each sign of engine/signs.py and each emoji of js/emoji.js's ICON, a name for each in all four
catalogs, the licence beside them, and no emoji written as text anywhere in the client's
sources (it would depend on the device's emoji font). Plain Python: no browser needed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from engine.signs import EMOJIS
from gateway import emoji_vendor
from gateway.emoji_vendor import emoji_code, interface_emojis

STATIC = Path(__file__).resolve().parents[2] / "gateway" / "static"
LANGS = ("en", "fr", "ht", "ar")
# The pictographs' blocks (Misc Symbols and Pictographs to Symbols and Pictographs Extended-A):
# every character there is an emoji. The suits (♠ U+2660…) and 🂡 (U+1F0A1) lie outside: the
# client writes them as text on purpose, and text fonts have them.
PICTOGRAPHS = re.compile("[\U0001f300-\U0001faff]")


def test_the_client_lists_the_rules_signs_in_their_order() -> None:
    source = (STATIC / "js" / "emoji.js").read_text(encoding="utf-8")
    found = re.search(r'export const SIGNS = \[\.\.\."([^"]+)"\];', source)
    assert found is not None
    assert tuple(found.group(1)) == EMOJIS


def test_one_picture_for_each_sign_and_interface_emoji_and_nothing_else() -> None:
    icons = interface_emojis()
    assert len(icons) >= 9
    want = {emoji_code(e) for e in (*EMOJIS, *icons)}
    assert len(want) == len(EMOJIS) + len(icons)
    shipped = {p.stem for p in (STATIC / "vendor" / "twemoji").iterdir()}
    assert shipped == want
    for stem in shipped:
        svg = (STATIC / "vendor" / "twemoji" / f"{stem}.svg").read_text(encoding="utf-8")
        assert svg.startswith("<svg"), stem
        assert 'viewBox="0 0 36 36"' in svg, stem


def test_every_picture_has_a_name_in_every_language_and_no_two_signs_share_one() -> None:
    codes = [emoji_code(e) for e in (*EMOJIS, *interface_emojis())]
    for lang in LANGS:
        words = json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
        names = [words.get(f"emoji.{c}") for c in codes]
        assert all(isinstance(n, str) and n.strip() for n in names), lang
        signs = names[: len(EMOJIS)]
        assert len(set(signs)) == len(signs), (lang, signs)


def test_the_licence_and_the_readme_name_the_vendored_release() -> None:
    release = f"{emoji_vendor.PACKAGE}@{emoji_vendor.VERSION}"
    licence = (STATIC / "vendor" / "LICENSE-twemoji").read_text(encoding="utf-8")
    assert release in licence
    assert "Attribution 4.0 International" in licence
    assert release in (STATIC / "README.md").read_text(encoding="utf-8")


def test_no_emoji_is_written_as_text_in_the_clients_sources() -> None:
    raw = set(EMOJIS) | {ch for e in interface_emojis() for ch in e if ch != "\ufe0f"}
    sources = [
        *(STATIC / "js").glob("*.js"),
        *(STATIC / "i18n").glob("*.json"),
        *(STATIC / "help").glob("*.html"),
        STATIC / "index.html",
    ]
    found = []
    for path in sources:
        if path.name == "emoji.js":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.lstrip().startswith("//"):
                continue  # a comment is not shown
            hits = {ch for ch in line if ch in raw} | set(PICTOGRAPHS.findall(line))
            if hits:
                found.append(f"{path.relative_to(STATIC)}:{n}: {''.join(sorted(hits))}")
    assert found == []
