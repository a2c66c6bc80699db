"""R30 by construction: a bot is fed its seat's view and the events addressed to its seat, and
nothing in those carries another hand or another team's sign before the reveal."""

from __future__ import annotations

from typing import Any

import pytest

from engine import Table
from engine.bots import Bot
from engine.bots.model import Model
from engine.phase import Phase
from tests.bots.harness import seen_by, table_with


@pytest.mark.parametrize("players", [4, 6, 8])
def test_r30_bots_are_fed_only_their_own_hand_and_their_own_teams_sign(players: int) -> None:
    policies = {s: ("smart" if s % 2 == 0 else "random") for s in range(players)}
    runner, _ = table_with(players, policies, seed=players, connected=[0])
    table = runner.table
    checked = {"hand": 0, "sign": 0}
    problems: list[str] = []

    def inspect(seat: int, wire: dict[str, Any], at: int) -> None:
        kind = wire["type"]
        own = seen_by(table, seat)
        if "hand" in wire:
            checked["hand"] += 1
            if [c["id"] for c in wire["hand"]] != [c.id for c in own.hand]:
                problems.append(f"seat {seat} was fed a hand that is not its own: {wire}")
        if kind == "sign":
            checked["sign"] += 1
            if wire["emoji"] != own.sign:
                problems.append(f"seat {seat} was fed another team's sign: {wire}")
        if "hands" in wire and kind != "reveal":
            problems.append(f"seat {seat} saw hands outside the reveal: {wire}")
        if kind == "reveal" and table.phase is Phase.PLAYING:
            problems.append("a reveal while the round still runs")

    runner.on_event = inspect
    runner.run(until=20 * 60_000)
    assert problems == []
    assert checked["hand"] >= players * 2
    assert checked["sign"] >= 2


def test_a_bot_holds_no_reference_to_the_table() -> None:
    runner, _ = table_with(4, {s: "smart" for s in range(4)}, seed=1)
    runner.run(until=30_000)
    for bot in runner.bots.values():
        assert isinstance(bot, Bot)
        assert isinstance(bot.model, Model)
        reachable = list(vars(bot).values()) + [
            getattr(bot.model, name) for name in Model.__slots__
        ]
        assert not any(isinstance(value, Table) for value in reachable)
