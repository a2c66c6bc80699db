"""lab.rating_settle follows new players' first rated matches: the model grows surer with each
(σ falls) and a match moves the displayed rating less and less."""

from __future__ import annotations

import json

import pytest

from lab.rating_settle import main


def test_sigma_falls_and_the_swing_shrinks_match_by_match(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--careers", "300", "--matches", "12"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["match"] for r in rows] == list(range(1, 13))
    sigmas = [r["sigma"] for r in rows]
    assert sigmas == sorted(sigmas, reverse=True)
    assert rows[0]["share_of_first"] == 1.0
    assert rows[-1]["mean_abs_change"] < rows[0]["mean_abs_change"]
