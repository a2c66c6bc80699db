"""What the WebSocket fuzzer sends, drawn by hypothesis: valid commands with random fields,
wrong types, non-objects, unicode junk, binary frames, deep nesting, frames over 64 KiB,
floods, frames before `hello` on a fresh socket, and `hello` again.

A frame is drawn as a small `Spec` and only built when sent, so 100,000 of them (deep and huge
ones included) fit in memory. Generation is hypothesis's own (`@given` in the generate phase
only, seeded): no `.example()`."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from engine import EMOJIS

Kind = Literal["text", "bytes", "deep", "huge", "flood", "prehello", "hello"]
BATCH = 25  # frames drawn per hypothesis example


@dataclass(frozen=True, slots=True)
class Spec:
    kind: Kind
    category: str  # what the frame is meant to test, for the summary
    text: str = ""  # text frames; the junk sent before hello
    data: bytes = b""  # binary frames
    size: int = 0  # depth of `deep`, bytes of `huge`, frames of `flood`
    junk: tuple[str, ...] = ()  # frames sent before hello on a fresh socket

    def build(self) -> str | bytes:
        """The frame itself (floods and pre-hello sockets are played by the lane)."""
        if self.kind == "bytes":
            return self.data
        if self.kind == "deep":
            half = self.size
            open_, close = ("[", "]") if self.text != "{" else ('{"a":', "}")
            inner = open_ * half + "1" + close * half
            return '{"type": "ping", "id": "deep", "x": ' + inner + "}" if self.data else inner
        if self.kind == "huge":
            return json.dumps({"type": "ping", "id": "huge", "pad": "x" * self.size})
        return self.text


COMMANDS = [
    "ready",
    "sign",
    "swap",
    "floor",
    "emit",
    "quatro",
    "contre",
    "vote_request",
    "vote",
    "next_round",
    "rematch",
    "ping",
]
CARD_IDS = [f"c{i}" for i in range(40)]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=16),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
frame_ids = st.none() | st.text(max_size=12) | st.integers()
junk_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=120)
cards = st.sampled_from(CARD_IDS) | st.text(max_size=9)
emojis = st.sampled_from(EMOJIS) | st.text(max_size=3)

FIELDS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "sign": {"emoji": emojis},
    "emit": {"emoji": emojis},
    "swap": {"card": cards, "slot": st.integers(-2, 5), "expect": cards},
    "floor": {"open": st.booleans()},
    "contre": {"team": st.none() | st.integers(-1, 4)},
    "vote": {"accept": st.booleans()},
}


@st.composite
def valid_command(draw: st.DrawFn) -> Spec:
    """Well-typed commands in whatever phase the table is in: legal, refused or out of phase."""
    kind = draw(st.sampled_from(COMMANDS))
    frame: dict[str, Any] = {"type": kind, "id": draw(st.text(max_size=12))}
    for name, values in FIELDS.get(kind, {}).items():
        frame[name] = draw(values)
    return Spec("text", "valid", text=json.dumps(frame, ensure_ascii=draw(st.booleans())))


@st.composite
def wrong_types(draw: st.DrawFn) -> Spec:
    kind = draw(st.sampled_from([*COMMANDS, "hello"]) | st.text(max_size=10) | json_values)
    names = st.sampled_from(["emoji", "card", "slot", "expect", "open", "team", "accept", "token"])
    fields = draw(st.dictionaries(names | st.text(max_size=6), json_values, max_size=5))
    frame = {**fields, "type": kind, "id": draw(frame_ids)}
    return Spec("text", "wrong_types", text=json.dumps(frame))


@st.composite
def not_an_object(draw: st.DrawFn) -> Spec:
    value = draw(json_values.filter(lambda v: not isinstance(v, dict)))
    return Spec("text", "not_object", text=json.dumps(value))


@st.composite
def unicode_junk(draw: st.DrawFn) -> Spec:
    return Spec("text", "unicode_junk", text=draw(junk_text))


@st.composite
def binary(draw: st.DrawFn) -> Spec:
    return Spec("bytes", "binary", data=draw(st.binary(min_size=1, max_size=200)))


@st.composite
def deep(draw: st.DrawFn) -> Spec:
    depth = draw(st.sampled_from([500, 999, 1_000, 5_000, 30_000]))
    opener = draw(st.sampled_from(["[", "{"]))
    depth = min(depth, 12_000) if opener == "{" else depth  # stay under 64 KiB
    return Spec("deep", "deep", text=opener, size=depth, data=b"1" if draw(st.booleans()) else b"")


@st.composite
def huge(draw: st.DrawFn) -> Spec:
    size = draw(st.sampled_from([16_000, 60_000, 65_400, 70_000, 200_000]))
    return Spec("huge", "huge", size=size)


@st.composite
def flood(draw: st.DrawFn) -> Spec:
    junk = draw(st.sampled_from(["{}", "x", '{"type":"ping"}', "[[[]]]"]))
    return Spec("flood", "flood", text=junk, size=draw(st.integers(80, 400)))


@st.composite
def before_hello(draw: st.DrawFn) -> Spec:
    frames = draw(st.lists(junk_text | st.just('{"type":"ready","id":"r"}'), max_size=4))
    return Spec("prehello", "before_hello", junk=tuple(frames))


@st.composite
def hello_again(draw: st.DrawFn) -> Spec:
    return Spec("hello", "hello_again", text=draw(st.sampled_from(["own", "forged", "table"])))


# (weight in thousandths, strategy)
MIX: list[tuple[int, st.SearchStrategy[Spec]]] = [
    (200, wrong_types()),
    (80, not_an_object()),
    (100, unicode_junk()),
    (60, binary()),
    (25, deep()),
    (8, huge()),
    (2, flood()),
    (25, before_hello()),
    (20, hello_again()),
    (480, valid_command()),  # last: hypothesis leans towards the first choices
]


# One slot per two thousandths: sampled_from draws slots evenly (integers would lean small).
SLOTS = [strategy for weight, strategy in MIX for _ in range(max(1, weight // 2))]


@st.composite
def spec(draw: st.DrawFn) -> Spec:
    return draw(draw(st.sampled_from(SLOTS)))


def generate(count: int, seed: int) -> list[Spec]:
    """`count` specs, drawn from `seed` (hypothesis's own choices may still differ a little
    from one run to the next)."""
    out: list[Spec] = []
    round_ = 0
    while len(out) < count:
        wanted = math.ceil((count - len(out)) / BATCH)

        @settings(
            max_examples=wanted,
            phases=[Phase.generate],
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @hypothesis_seed(seed + round_)
        @given(st.lists(spec(), min_size=BATCH, max_size=BATCH))
        def collect(batch: list[Spec]) -> None:
            out.extend(batch)

        collect()
        round_ += 1
        if round_ > 1000:  # pragma: no cover - hypothesis stopped drawing
            raise RuntimeError(f"hypothesis drew only {len(out)} frames")
    return out[:count]
