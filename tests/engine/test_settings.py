"""The host's table settings (an extension): the bot level and hints, chosen in the lobby,
judged by the engine, seen by everyone, kept in snapshots."""

from __future__ import annotations

import pytest

from engine import (
    CallQuatro,
    ChangeSettings,
    NextRound,
    Phase,
    Rematch,
    ScenarioError,
    StartMatch,
    Table,
    TableConfig,
    TakeSeat,
)
from engine.bots import LEVELS, make_bot
from engine.bots.smart import SmartBot
from engine.settings import BOT_LEVELS, NEWCOMER_WINS, TableSettings, start_level
from engine.wire import command_from_frame
from tests.engine.tables import Game, types


def test_a_new_table_plays_normal_bots_with_hints_on() -> None:
    g = Game(4, humans=[0], start=False)
    assert g.view(0)["settings"] == {
        "bot_level": "normal",
        "hints": True,
        "watchers": True,
        "late_join": "ask",
    }
    assert g.table.summary()["settings"] == g.view(0)["settings"]


def test_a_newcomers_table_starts_relaxed_until_they_have_won_three_matches() -> None:
    assert NEWCOMER_WINS == 3
    assert [start_level(w) for w in (0, 1, 2, 3, 50)] == ["relaxed"] * 3 + ["normal"] * 2


def test_a_table_starts_at_its_configured_level_which_the_host_changes_and_snapshots_keep() -> None:
    t = Table(TableConfig(players=4, seed=3, bot_level="relaxed"))
    t.apply(TakeSeat(seat=0, player_id="p0", name="Ana"), 0)
    assert t.view(0)["settings"] == {**TableSettings().to_wire(), "bot_level": "relaxed"}
    assert Table.from_snapshot(t.to_snapshot()).settings.bot_level == "relaxed"
    t.apply(ChangeSettings(seat=0, bot_level="sharp"), 0)
    back = Table.from_snapshot(t.to_snapshot())
    assert back.settings.bot_level == "sharp"
    assert back.config.bot_level == "relaxed"
    old = t.to_snapshot()
    del old["state"]["config"]["bot_level"]  # saved before a table could start elsewhere
    assert Table.from_snapshot(old).config.bot_level == "normal"
    with pytest.raises(ScenarioError, match="bot_level"):
        TableConfig(players=4, bot_level="brutal")


def test_the_host_chooses_a_level_and_turns_hints_off_and_everyone_is_told() -> None:
    g = Game(4, humans=[0, 1], start=False)
    out = g.do(ChangeSettings(seat=0, bot_level="relaxed"))
    assert [(o.to.scope, o.event.to_wire()) for o in out] == [
        (
            "all",
            {
                "type": "settings",
                "bot_level": "relaxed",
                "hints": True,
                "late_join": "ask",
                "watchers": True,
            },
        )
    ]
    out = g.do(ChangeSettings(seat=0, hints=False))
    assert out[0].event.to_wire() == {
        "type": "settings",
        "bot_level": "relaxed",
        "hints": False,
        "late_join": "ask",
        "watchers": True,
    }
    assert g.view(1)["settings"] == {
        "bot_level": "relaxed",
        "hints": False,
        "late_join": "ask",
        "watchers": True,
    }
    assert g.table.settings.bot_level == "relaxed"
    # Asking for what is already set is accepted and tells nobody.
    assert g.do(ChangeSettings(seat=0, bot_level="relaxed", hints=False)) == []


def test_only_the_host_in_the_lobby_and_only_known_values() -> None:
    g = Game(4, humans=[0, 1], start=False)
    assert g.refuse(ChangeSettings(seat=1, bot_level="sharp")).code == "not_host"
    assert g.refuse(ChangeSettings(seat=0, bot_level="brutal")).code == "bad_message"
    assert g.refuse(ChangeSettings(seat=0, bot_level=3)).code == "bad_message"  # type: ignore[arg-type]
    assert g.refuse(ChangeSettings(seat=0, hints="no")).code == "bad_message"  # type: ignore[arg-type]
    g.do(ChangeSettings(seat=0, bot_level="sharp"))
    g.do(StartMatch(seat=0))
    assert g.phase() is Phase.SIGNING
    assert g.refuse(ChangeSettings(seat=0, bot_level="relaxed")).code == "wrong_phase"
    assert g.table.settings.bot_level == "sharp"


def test_the_host_changes_the_level_between_matches_never_during_one() -> None:
    """Issue 46: the level is always changeable by the host — in the lobby, and once a match is
    over, for the next one; during a match its bots keep the level they started at."""
    g = Game(4, humans=[0, 1], connected=[])
    assert g.refuse(ChangeSettings(seat=0, bot_level="sharp")).code == "wrong_phase"
    for _ in range(5):
        if g.phase() is Phase.PAUSE:
            assert g.refuse(ChangeSettings(seat=0, bot_level="sharp")).code == "wrong_phase"
            g.do(NextRound(seat=0))
        g.do(CallQuatro(seat=1))  # wrong: team 0 scores
    assert g.phase() is Phase.OVER
    assert g.refuse(ChangeSettings(seat=1, bot_level="sharp")).code == "not_host"
    out = g.do(ChangeSettings(seat=0, bot_level="sharp", hints=False))
    assert [o.event.to_wire()["type"] for o in out] == ["settings"]
    g.do(Rematch(seat=0))
    assert g.phase() is Phase.PLAYING  # nobody connected: the round opens at once (R6)
    assert g.table.settings.bot_level == "sharp"
    assert g.refuse(ChangeSettings(seat=0, bot_level="relaxed")).code == "wrong_phase"


def test_settings_travel_as_a_lobby_call_with_either_field() -> None:
    assert command_from_frame("settings", 0, {"bot_level": "sharp"}) == ChangeSettings(
        seat=0, bot_level="sharp"
    )
    assert command_from_frame("settings", 0, {"hints": False}) == ChangeSettings(
        seat=0, hints=False
    )


def test_settings_survive_a_snapshot_and_old_snapshots_get_the_defaults() -> None:
    g = Game(4, humans=[0], start=False)
    g.do(ChangeSettings(seat=0, bot_level="relaxed", hints=False))
    g.do(ChangeSettings(seat=0, watchers=False))
    back = Table.from_snapshot(g.table.to_snapshot())
    assert back.view(0)["settings"] == {
        "bot_level": "relaxed",
        "hints": False,
        "late_join": "ask",
        "watchers": False,
    }
    before_watchers = g.table.to_snapshot()
    del before_watchers["state"]["settings"]["watchers"]
    assert Table.from_snapshot(before_watchers).settings.watchers is True
    old = g.table.to_snapshot()
    del old["state"]["settings"]
    assert Table.from_snapshot(old).view(0)["settings"] == {
        "bot_level": "normal",
        "hints": True,
        "late_join": "ask",
        "watchers": True,
    }


def test_the_host_closes_and_reopens_the_table_to_watchers_at_any_time() -> None:
    g = Game(4, humans=[0, 1])
    assert g.phase() is not Phase.LOBBY
    # The bot level stays a lobby choice; watching does not.
    assert g.refuse(ChangeSettings(seat=0, bot_level="relaxed")).code == "wrong_phase"
    assert g.refuse(ChangeSettings(seat=1, watchers=False)).code == "not_host"
    assert g.refuse(ChangeSettings(seat=0, watchers="off")).code == "bad_message"  # type: ignore[arg-type]
    assert g.table.settings.watchers is True
    out = g.do(ChangeSettings(seat=0, watchers=False))
    assert [(o.to.scope, o.event.to_wire()) for o in out] == [
        (
            "all",
            {
                "type": "settings",
                "bot_level": "normal",
                "hints": True,
                "late_join": "ask",
                "watchers": False,
            },
        )
    ]
    assert g.view(None)["settings"]["watchers"] is False
    assert g.do(ChangeSettings(seat=0, watchers=False)) == []
    g.do(ChangeSettings(seat=0, watchers=True))
    assert g.table.settings.watchers is True
    assert command_from_frame("settings", 0, {"watchers": False}) == ChangeSettings(
        seat=0, watchers=False
    )


def test_a_table_without_settings_changes_plays_as_before() -> None:
    g = Game(4, humans=[0])
    assert "settings" not in types(g.log)


@pytest.mark.parametrize("name", BOT_LEVELS)
def test_each_level_tunes_the_bots_pace_and_policy(name: str) -> None:
    bot = make_bot("smart", 1, 4, seed=1, speed=2.0, bot_level=name)
    assert isinstance(bot, SmartBot)
    tuning = LEVELS[name]
    assert bot.pace.speed == 2.0  # the clock (a time_scale); the level sets the tempo
    assert bot.pace.tempo == tuning.pace
    assert bot.pace.call == tuning.call
    assert bot.contre_threshold == tuning.contre_threshold
    assert bot.decoy_chance == tuning.decoy_chance


def test_relaxed_bots_are_slower_and_slower_to_accuse_than_sharp_ones() -> None:
    relaxed, normal, sharp = (LEVELS[n] for n in BOT_LEVELS)
    assert relaxed.pace < normal.pace < sharp.pace
    assert relaxed.contre_threshold > normal.contre_threshold > sharp.contre_threshold
    assert relaxed.decoy_chance < normal.decoy_chance < sharp.decoy_chance
    for what in ("call", "accuse", "notice"):
        floors = [getattr(level, what).floor_ms for level in (relaxed, normal, sharp)]
        medians = [getattr(level, what).median_ms for level in (relaxed, normal, sharp)]
        assert floors == sorted(floors, reverse=True), what
        assert medians == sorted(medians, reverse=True), what


def test_an_unknown_level_is_refused_by_make_bot() -> None:
    with pytest.raises(ValueError, match="unknown bot level"):
        make_bot("smart", 1, 4, seed=1, bot_level="brutal")
