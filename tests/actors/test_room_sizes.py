"""Each module of actors/ and gateway/ reads in one sitting (issue 34): none past 400 lines.
A module that grows past it is split by concern (as actors/table_core.py, actors/store.py and
actors/protocol.py were), not trimmed of its comments; loadtests/ has the same limit
(tests/loadtests/test_kit_layout.py)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 400


def test_no_module_of_actors_or_the_gateway_is_past_400_lines() -> None:
    modules = sorted(p for room in ("actors", "gateway") for p in (REPO / room).rglob("*.py"))
    assert len(modules) > 50  # the rooms were found
    lines = {str(p.relative_to(REPO)): len(p.read_text().splitlines()) for p in modules}
    assert {m: n for m, n in lines.items() if n > MAX_LINES} == {}
