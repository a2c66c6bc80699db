"""Bot levels (engine.bots.levels): the host's setting reaches every bot of the table, and a
relaxed table is measurably gentler on a newcomer than a normal or a sharp one."""

from __future__ import annotations

import json

import pytest

from actors.bots import BotDriver
from engine import AddBot, ChangeSettings, Connect, StartMatch, Table, TableConfig, TakeSeat
from engine.bots import LEVELS
from engine.bots.smart import SmartBot
from engine.tournament import levels_report, main


def practice_table(level: str) -> Table:
    table = Table(TableConfig(players=4, seed=5))
    table.apply(TakeSeat(seat=0, player_id="ana", name="Ana"), 0)
    table.apply(Connect(seat=0), 0)
    for s in (1, 2, 3):
        table.apply(AddBot(seat=0, target=s), 0)
    table.apply(ChangeSettings(seat=0, bot_level=level), 0)
    table.apply(StartMatch(seat=0), 0)
    return table


@pytest.mark.parametrize("level", list(LEVELS))
def test_the_table_actors_bots_play_at_the_hosts_level(level: str) -> None:
    driver = BotDriver(practice_table(level))
    driver.next_due(0)
    bots = list(driver._bots.values())
    assert len(bots) == 3
    tuning = LEVELS[level]
    for bot in bots:
        assert isinstance(bot, SmartBot)
        assert bot.pace.speed == 1.0  # the table's own clock: no time_scale here
        assert bot.pace.tempo == tuning.pace
        assert (bot.pace.call, bot.pace.accuse, bot.pace.notice) == (
            tuning.call,
            tuning.accuse,
            tuning.notice,
        )
        assert bot.memory_ms == tuning.memory_ms
        assert bot.contre_threshold == tuning.contre_threshold


def test_a_newcomer_wins_more_and_is_accused_less_at_a_relaxed_table() -> None:
    report = levels_report(4, 12, seed=2)
    relaxed, normal, sharp = report["relaxed"], report["normal"], report["sharp"]
    assert relaxed["newcomer_wins"] > normal["newcomer_wins"] >= sharp["newcomer_wins"]
    assert relaxed["bots_points_per_match"] < normal["bots_points_per_match"]
    assert relaxed["contre_share"] < normal["contre_share"] < sharp["contre_share"]


def test_the_levels_report_ends_with_one_json_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--levels", "--matches", "2"]) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(last["levels"]) == set(LEVELS)
    assert (last["players"], last["matches"]) == (4, 2)
    for row in last["levels"].values():
        assert 0 <= row["newcomer_wins"] <= 1
        assert row["round_s_p50"] > 0
        assert row["reshuffles_per_round"] >= 0
        assert row["call_reaction_s_p10"] <= row["call_reaction_s_p50"]
