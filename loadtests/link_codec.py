"""JSON lines or msgpack for the data plane? Encode + decode cost of its typical messages.

    python -m loadtests.link_codec            # 20000 rounds of each message

Prints µs per message for each codec (both through the same `to_json`/`from_json` mapping, so
only the byte format differs) and the sizes on the wire.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import msgpack

from actors.codec import (
    decode,
    encode,
    from_json,
    to_json,
)
from actors.protocol import (
    Act,
    Answer,
    Batch,
    Call,
    Entry,
    Joined,
    Outcome,
)

HAND = [{"id": f"{r}{s}", "rank": r, "suit": s} for r, s in zip("AKQJ", "SHDC", strict=True)]
EVENT = Entry(41, "all", -1, {"type": "swapped", "seat": 3, "slot": 1, "card": HAND[0]}, 1, "gw")
SAMPLES: dict[str, Any] = {
    "command": Call(7, Act.of("gw-1/abc:12", "gw-1", "p-1", "swap", {"card": "AS", "slot": 1})),
    "reply": Answer(7, Outcome(True, None, 3, (EVENT,))),
    "batch of 3": Batch((EVENT, EVENT, EVENT)),
    "welcome": Answer(1, Joined(3, 1, {"hand": HAND, "center": HAND, "seats": [{}] * 6}, 40)),
}


def per_message(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m loadtests.link_codec", description=__doc__)
    p.add_argument("--rounds", type=int, default=20000)
    n = p.parse_args().rounds
    for name, msg in SAMPLES.items():

        def as_json(m: Any = msg) -> object:
            return decode(encode(m))

        def as_msgpack(m: Any = msg) -> object:
            return from_json(msgpack.unpackb(msgpack.packb(to_json(m), use_bin_type=True)))

        row = {
            "message": name,
            "json_us": round(per_message(as_json, n), 2),
            "msgpack_us": round(per_message(as_msgpack, n), 2),
            "json_bytes": len(encode(msg)),
            "msgpack_bytes": len(msgpack.packb(to_json(msg), use_bin_type=True)),
        }
        print(json.dumps(row))


if __name__ == "__main__":
    main()
