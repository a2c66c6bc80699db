"""Bots are deterministic under a seed: their own RNG, no clock, no global randomness."""

from __future__ import annotations

from typing import Any

import pytest

from engine import Command
from engine.bots import make_bot
from engine.tournament import play_match
from tests.bots.harness import table_with


def match_log(seed: int, policies: tuple[str, ...]) -> tuple[list[Any], tuple[int, ...]]:
    log: list[Any] = []

    def record(seat: int, command: Command, code: str | None, at: int) -> None:
        log.append((at, seat, command, code))

    result = play_match(len(policies) * 2, policies, seed, on_command=record)
    return log, result.scores


def test_same_seed_same_match() -> None:
    for policies in [("smart", "random"), ("smart", "random", "smart")]:
        first = match_log(21, policies)
        assert first == match_log(21, policies)
        assert first[0], "the bots played"
        assert first != match_log(22, policies)


def test_deciding_draws_no_randomness() -> None:
    runner, _ = table_with(4, {s: "smart" for s in (1, 2, 3)} | {0: "random"}, seed=9)
    runner.run(until=5_000)
    for bot in runner.bots.values():
        state = bot.rng.getstate()
        intent = bot.decide(runner.now)
        assert bot.decide(runner.now) == intent
        later = bot.decide(runner.now + 1)
        assert (later is None) == (intent is None)
        assert later is None or intent is None or later.command == intent.command
        assert bot.rng.getstate() == state


def test_make_bot_rejects_unknown_policy() -> None:
    with pytest.raises(ValueError, match="genius"):
        make_bot("genius", 0, 4, seed=1)
