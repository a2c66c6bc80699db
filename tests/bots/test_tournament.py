"""The tournament command: its last line is the JSON summary, and smart beats random."""

from __future__ import annotations

import json

import pytest

from engine.tournament import ENDINGS, main, run

KEYS = {
    "players",
    "matches",
    "win_rate",
    "points_per_match",
    "rounds_per_match",
    "round_endings",
    "mean_round_seconds",
}


def test_last_line_is_the_json_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--players", "6", "--matches", "3", "--a", "smart", "--b", "random"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert "team 1 (seats 1 and 4) = b:random" in lines[0]
    summary = json.loads(lines[-1])
    assert set(summary) == KEYS
    assert summary["players"] == 6
    assert summary["matches"] == 3
    assert set(summary["round_endings"]) == set(ENDINGS)
    rounds = sum(summary["round_endings"].values())
    assert rounds == pytest.approx(summary["rounds_per_match"] * 3)
    assert 0 <= summary["win_rate"]["b"] <= summary["win_rate"]["a"] <= 1
    assert summary["mean_round_seconds"] > 0


@pytest.mark.parametrize("players", [4, 6, 8])
def test_smart_beats_random(players: int) -> None:
    # At the sharp level, whose rounds are short: the others win as surely, in more rounds.
    summary = run(players, 10, "smart", "random", seed=3, speed=1.0, bot_level="sharp").summary()
    assert summary["win_rate"]["a"] >= 0.9
    assert summary["points_per_match"]["a"] > summary["points_per_match"]["b"]


def test_smart_against_itself_rarely_lets_a_round_run_out() -> None:
    summary = run(4, 10, "smart", "smart", seed=4, speed=1.0).summary()
    endings = summary["round_endings"]
    assert endings["void"] < 0.25 * sum(endings.values())
