"""What a player's name may hold: 1–24 visible characters, no invisible filler, no stack of
combining marks, no bidi or control character, and nothing that reads as a bot's name ("Bot 3"
is how the engine names bots). Emoji ZWJ sequences ("👩‍💻") and VS16 are allowed.

A passkey's label (what its owner calls the device) is held to the same rule of characters,
1–40 of them, and may read as anything: only its owner ever sees it."""

from __future__ import annotations

import unicodedata

MAX_LENGTH = 24
MAX_CODE_POINTS = 64  # what the joiners, selectors and tags of 24 emoji may add, bounded
LABEL_LENGTH = 40
LABEL_CODE_POINTS = 100
MAX_STACKED_MARKS = 2
ZWJ = "\u200d"
VS16 = "\ufe0f"  # emoji presentation
BLACK_FLAG = "\U0001f3f4"  # the base of the subdivision flags (England, Scotland, Wales)
TAG_CANCEL = "\U000e007f"

# Characters that render as nothing (or as blank) yet are not whitespace or a format character,
# so a category check alone lets them through: Hangul fillers, the blank Braille pattern, the
# Mongolian vowel separator, invisible operators, variation selectors other than VS16, the
# combining grapheme joiner, Khmer inherent vowels, musical symbol blanks.
INVISIBLE = frozenset(
    [
        *(0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x180E, 0x034F, 0x17B4, 0x17B5, 0x00AD),
        *(0x061C, 0x1D159, 0x2028, 0x2029, 0xFEFF),
        *range(0x2060, 0x2070),
        *range(0x200B, 0x2010),
        *range(0x180B, 0x1810),
        *range(0xFE00, 0xFE0F),
        *range(0xE0100, 0xE01F0),
        *range(0x1D173, 0x1D17B),
    ]
)

# What a regular expression can say of the rule, for the OpenAPI (the format `quatro-name` is the
# whole rule): none of the characters below, refused wherever they stand (controls, format and
# bidi characters, private use, the invisible fillers above: tests/gateway/test_openapi.py checks
# each is), and one character that is not whitespace (whitespace is collapsed, so it may stand
# anywhere). Characters past U+FFFF are left to the format.
_REFUSED = (
    r"\u0000-\u0008\u000e-\u001b\u007f-\u0084\u0086-\u009f\u00ad\u034f\u0600-\u0605\u061c"
    r"\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u200c\u200e"
    r"\u200f\u202a-\u202e\u2060-\u206f\u2800\u3164\ue000-\uf8ff\ufe00-\ufe0e\ufeff\uffa0"
    r"\ufff9-\ufffb"
)
_SPACE = r"\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
NAME_PATTERN = f"^[^{_REFUSED}]*[^{_REFUSED}{_SPACE}][^{_REFUSED}]*$"
NAME_FORMAT = "quatro-name"
LABEL_FORMAT = "quatro-label"  # the characters of a name, 1-40 of them, any reading

# Letters that look like the Latin ones of "bot" after NFKC (which leaves scripts alone).
LOOKALIKES = str.maketrans(
    {"0": "o", "о": "o", "ο": "o", "օ": "o", "в": "b", "β": "b", "ь": "b", "т": "t", "τ": "t"}
)


def _pictographic(ch: str) -> bool:
    cp = ord(ch)
    return (
        0x1F000 <= cp <= 0x1FAFF
        or 0x2190 <= cp <= 0x21FF  # arrows: "🙂‍↔️" (head shaking) joins one
        or 0x2600 <= cp <= 0x27BF
        or 0x2300 <= cp <= 0x23FF
        or 0x2B00 <= cp <= 0x2BFF
        or unicodedata.category(ch) == "So"
    )


def _emoji_before(text: str, i: int) -> bool:
    """An emoji ends just before index i (its VS16 or skin tone included)."""
    j = i - 1
    while j >= 0 and (text[j] == VS16 or 0x1F3FB <= ord(text[j]) <= 0x1F3FF):
        j -= 1
    return j >= 0 and _pictographic(text[j])


def _skin_tone(ch: str) -> bool:
    return 0x1F3FB <= ord(ch) <= 0x1F3FF


def _tag(ch: str) -> bool:
    return 0xE0020 <= ord(ch) <= 0xE007F


def _in_flag_tags(text: str, i: int) -> bool:
    """text[i] is a tag character of a flag: after 🏴 and its other tags, up to a cancel tag."""
    start = i
    while start > 0 and _tag(text[start - 1]):
        start -= 1
    end = i
    while end + 1 < len(text) and _tag(text[end + 1]):
        end += 1
    return (
        start > 0
        and text[start - 1] == BLACK_FLAG
        and text[end] == TAG_CANCEL
        and TAG_CANCEL not in text[start:end]
        and end > start
    )


def visible_length(name: str) -> int:
    """Characters as a reader counts them: joiners, VS16, skin tones, flag tags and combining
    marks ride on the character before them, an emoji joined to the one before is one, and so
    is a flag's pair of regional indicators (🇭🇹)."""
    count = 0
    pending_flag = False  # the previous character opened a pair of regional indicators
    for i, ch in enumerate(name):
        indicator = 0x1F1E6 <= ord(ch) <= 0x1F1FF
        if indicator and pending_flag:
            pending_flag = False
            continue
        pending_flag = indicator
        if (
            ch in (ZWJ, VS16)
            or (i > 0 and name[i - 1] == ZWJ)
            or _skin_tone(ch)
            or _tag(ch)
            or unicodedata.category(ch).startswith("M")
        ):
            continue
        count += 1
    return count


def _bot_like(name: str) -> bool:
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name).casefold())
    letters = "".join(ch for ch in folded if ch.isalnum())
    return letters.rstrip("0123456789").translate(LOOKALIKES) == "bot"


def check_name(raw: str) -> str:
    """The name, whitespace collapsed; ValueError saying what is refused."""
    name = _check_text(raw, MAX_LENGTH, MAX_CODE_POINTS, "name")
    if _bot_like(name):
        raise ValueError("bots are named so: choose another name")
    return name


def check_label(raw: str) -> str:
    """A passkey's label, whitespace collapsed; ValueError saying what is refused."""
    return _check_text(raw, LABEL_LENGTH, LABEL_CODE_POINTS, "label")


def _check_text(raw: str, most: int, most_code_points: int, what: str) -> str:
    name = " ".join(raw.split())
    if not 1 <= visible_length(name) <= most or len(name) > most_code_points:
        raise ValueError(f"a {what} has 1 to {most} visible characters")
    marks = 0
    for i, ch in enumerate(name):
        cat = unicodedata.category(ch)
        if ch == ZWJ:
            after = name[i + 1] if i + 1 < len(name) else ""
            if not (_emoji_before(name, i) and after and _pictographic(after)):
                raise ValueError("a zero-width joiner only joins two emoji")
            continue
        if _tag(ch):
            if not _in_flag_tags(name, i):
                raise ValueError("tag characters only spell a flag after 🏴")
            continue
        if ord(ch) in INVISIBLE or cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            raise ValueError(f"a {what} has only visible characters")
        if cat in ("Mn", "Me") and ch != VS16:
            marks += 1
            if marks > MAX_STACKED_MARKS:
                raise ValueError("too many combining marks on one character")
        else:
            marks = 0
    if not any(not unicodedata.category(ch).startswith(("M", "Z")) for ch in name):
        raise ValueError(f"a {what} has only visible characters")
    return name
