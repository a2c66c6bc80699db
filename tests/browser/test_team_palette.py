"""The team colours of css/base.css tell every pair of teams apart, for normal vision and under
simulated deuteranopia and protanopia (the two most common dichromacies). Plain Python: no browser.

Measure: CIEDE2000 (ΔE00) between the colours as a dichromat would see them, simulated with
Machado et al. (2009) at full severity (see colour_vision.py). Thresholds, and why:

- ΔE00 ≈ 1–2 is a just-noticeable difference between large patches side by side; team colours
  are small marks (a 0.75rem dot, a 5 px border) seen apart on a busy table, so they need a wide
  margin. Normal vision: every pair at least 25 ΔE00 (the old orange/amber pair was 16.3).
- Under simulation: at least 15 ΔE00 — plainly different hues or lightness, not shades of one
  colour (the old orange/amber pair fell to 0.9 under deuteranopia and 5.0 under protanopia).
- Each colour keeps at least 4.7:1 contrast on the paper background (#fbfaf6), as before, so a
  team colour stays legible even as thin lines or text.

Colour is never the only cue: seats and scores also write the team's number (test_one_screen.py).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

from tests.browser.colour_vision import ciede2000, contrast_ratio, delta_e, parse_hex

APP_CSS = Path(__file__).resolve().parents[2] / "gateway" / "static" / "css" / "base.css"
PAPER = "#fbfaf6"
MIN_NORMAL = 25.0
MIN_SIMULATED = 15.0
VISIONS: tuple[str | None, ...] = (None, "deuteranopia", "protanopia")


def team_colours() -> list[str]:
    css = APP_CSS.read_text("utf-8")
    root = re.search(r":root\s*\{(.*?)\}", css, re.S)
    assert root, "css/base.css has no :root block"
    found = dict(re.findall(r"--team-(\d+):\s*(#[0-9a-fA-F]{6})\s*;", root.group(1)))
    assert sorted(found) == ["0", "1", "2", "3"], found
    return [found[str(k)] for k in range(4)]


def delta_table() -> dict[str | None, dict[tuple[int, int], float]]:
    colours = team_colours()
    return {
        vision: {
            (i, j): delta_e(colours[i], colours[j], vision)
            for i, j in itertools.combinations(range(4), 2)
        }
        for vision in VISIONS
    }


@pytest.mark.parametrize(
    ("lab1", "lab2", "want"),
    [
        # Pairs 1, 7, 17 and 24 of Sharma, Wu & Dalal's test data.
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ],
)
def test_ciede2000_matches_the_published_test_pairs(
    lab1: tuple[float, float, float], lab2: tuple[float, float, float], want: float
) -> None:
    assert ciede2000(np.array(lab1), np.array(lab2)) == pytest.approx(want, abs=1e-4)


def test_every_pair_of_team_colours_differs_for_normal_and_dichromat_vision() -> None:
    table = delta_table()
    for vision, pairs in table.items():
        print(vision or "normal", {f"{i + 1}-{j + 1}": round(d, 1) for (i, j), d in pairs.items()})
    too_close = [
        f"Team {i + 1} / Team {j + 1} ({vision or 'normal'}): ΔE00 {d:.1f}"
        for vision, pairs in table.items()
        for (i, j), d in pairs.items()
        if d < (MIN_NORMAL if vision is None else MIN_SIMULATED)
    ]
    assert too_close == []


def test_team_colours_keep_their_contrast_on_paper() -> None:
    ratios = [contrast_ratio(parse_hex(c), parse_hex(PAPER)) for c in team_colours()]
    assert min(ratios) >= 4.7, ratios
