"""A Chromium that sees no emoji font, as on a device without one (Debian's Chromium as CI runs
it, many Linux desktops, older Android for the newer code points).

Chromium on Linux finds its fonts through fontconfig, so the environment it starts with decides
what it can draw: `FONTCONFIG_FILE` points at a configuration that takes the system's and rejects
every font file that has a glyph for one of the 24 signs, and every colour font. What remains is
checked twice: `fc-list` finds no font for any sign or emoji of the interface, and Chromium
itself draws each of them exactly as it draws a code point no font has (`MISSING_JS`).

`all_drawn` is what any page of the client must pass, with or without emoji fonts: every emoji
a picture that loaded, none left as text.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from html import escape
from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright

from engine.signs import EMOJIS
from tests.browser.conftest import CHROMIUM, CHROMIUM_FLAGS

# The interface's emoji that are emoji-presentation characters: no text font has them either.
# (⏸ ▶ 🎙 👁 are text-presentation characters that a symbol font may draw in black and white:
# the client draws them as pictures all the same, and the tests look for them as text.)
ICONS = ("💡", "🔊", "🔇", "🤖", "🏆")
MUST_BE_MISSING = (*EMOJIS, *ICONS)
# Written as text on purpose, by the text font: the suits on the cards, the marks ★ ✓ ⊘.
TEXT_SYMBOLS = "♠♥♦♣★✓⊘"

# True for each character that Chromium draws pixel for pixel like U+10FFFD (a private-use code
# point no font draws): it found no font for it.
MISSING_JS = """(chars) => {
  const draw = (s) => {
    const c = document.createElement("canvas");
    c.width = 64;
    c.height = 64;
    const g = c.getContext("2d");
    g.font = "40px sans-serif";
    g.textBaseline = "top";
    g.fillText(s, 4, 4);
    return Array.from(g.getImageData(0, 0, 64, 64).data).join(",");
  };
  const none = draw("\\u{10FFFD}");
  return Object.fromEntries(chars.map((ch) => [ch, draw(ch) === none]));
}"""


def font_files(pattern: str, env: dict[str, str]) -> set[str]:
    try:
        out = subprocess.run(
            ["fc-list", "--format", "%{file}\n", pattern],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
    except FileNotFoundError as e:
        raise RuntimeError("fc-list is missing: Debian's fontconfig package provides it") from e
    return {line for line in out.splitlines() if line}


def covering(chars: Iterable[str], env: dict[str, str]) -> set[str]:
    """The font files that have a glyph for any of `chars`."""
    files: set[str] = set()
    for ch in chars:
        files |= font_files(f":charset={ord(ch):x}", env)
    return files


def _write(path: Path, body: str) -> dict[str, str]:
    path.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n'
        f"<fontconfig>\n{body}</fontconfig>\n",
        encoding="utf-8",
    )
    return {**os.environ, "FONTCONFIG_FILE": str(path)}


def system_fonts(work: Path, extra_dirs: Iterable[Path] = ()) -> dict[str, str]:
    """An environment whose fontconfig is the system's (plus `extra_dirs`), with a cache of its
    own so the system's is never written."""
    work.mkdir(parents=True, exist_ok=True)
    body = f"  <cachedir>{escape(str(work / 'cache'))}</cachedir>\n"
    body += '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
    body += "".join(f"  <dir>{escape(str(d))}</dir>\n" for d in extra_dirs)
    return _write(work / "system.conf", body)


def without_emoji_fonts(work: Path, extra_dirs: Iterable[Path] = ()) -> dict[str, str]:
    """An environment for Chromium (and fc-list) in which no font can draw a sign or an
    interface emoji. Raises AssertionError if one still can."""
    seen = system_fonts(work, extra_dirs)
    rejected = covering(MUST_BE_MISSING, seen) | font_files(":color=True", seen)
    body = (work / "system.conf").read_text(encoding="utf-8").split("<fontconfig>\n", 1)[1]
    body = body.rsplit("</fontconfig>", 1)[0]
    body += "  <selectfont><rejectfont>\n"
    body += "".join(f"    <glob>{escape(f)}</glob>\n" for f in sorted(rejected))
    body += '    <pattern><patelt name="color"><bool>true</bool></patelt></pattern>\n'
    body += "  </rejectfont></selectfont>\n"
    env = _write(work / "no-emoji.conf", body)
    left = covering(MUST_BE_MISSING, env) | font_files(":color=True", env)
    assert not left, f"fonts still able to draw an emoji: {sorted(left)}"
    assert font_files(":", env), "no font at all is left"
    return env


def launch(p: Playwright, env: dict[str, str]) -> Browser:
    """Debian's Chromium with the fonts `env` gives it."""
    browser_env: dict[str, str | float | bool] = dict(env)
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, env=browser_env)


def fake_emoji_font(path: Path, chars: Iterable[str]) -> Path:
    """A font that draws a square for each of `chars`, as an emoji font would draw them: the
    check's own proof that it notices such a font, and that the rejection hides it."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen

    pen = TTGlyphPen(None)
    pen.moveTo((100, 0))
    pen.lineTo((100, 800))
    pen.lineTo((900, 800))
    pen.lineTo((900, 0))
    pen.closePath()
    box = pen.glyph()
    fb = FontBuilder(1000, isTTF=True)
    fb.setupGlyphOrder([".notdef", "box"])
    fb.setupCharacterMap({ord(ch): "box" for ch in chars})
    fb.setupGlyf({".notdef": TTGlyphPen(None).glyph(), "box": box})
    fb.setupHorizontalMetrics({".notdef": (1000, 0), "box": (1000, 100)})
    fb.setupHorizontalHeader(ascent=800, descent=-200)
    fb.setupNameTable({"familyName": "Quatro Test Emoji", "styleName": "Regular"})
    fb.setupOS2(sTypoAscender=800, sTypoDescender=-200, usWinAscent=800, usWinDescent=200)
    fb.setupPost()
    path.parent.mkdir(parents=True, exist_ok=True)
    fb.save(str(path))
    return path


# Every text node of the page whose characters include an emoji (an extended pictographic
# character that is not one of the text symbols the client writes on purpose). Text in
# attributes (alt, aria-label) is no text node: an accessible name may hold anything.
EMOJI_TEXT_JS = """(allowed) => {
  const found = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const hits = [...n.nodeValue.matchAll(/\\p{Extended_Pictographic}|\\p{Emoji_Presentation}/gu)]
      .map((m) => m[0])
      .filter((ch) => !allowed.includes(ch));
    if (hits.length) found.push(`${hits.join("")} in <${n.parentElement.tagName.toLowerCase()}
      class="${n.parentElement.className}">: ${n.nodeValue.trim().slice(0, 60)}`);
  }
  return found;
}"""

# Every picture of the page loaded (an <img> that failed has no natural width).
PICTURES_LOADED_JS = """() => {
  const pics = [...document.querySelectorAll("img.pic")];
  return pics.length > 0 && pics.every((p) => p.complete && p.naturalWidth > 0);
}"""


def all_drawn(page: Page) -> None:
    """Every picture loaded and no emoji written as text."""
    page.wait_for_function(PICTURES_LOADED_JS)
    assert page.evaluate(EMOJI_TEXT_JS, TEXT_SYMBOLS) == []
