"""Fixtures for the engine's tests; the driver itself lives in `tests.engine.tables`."""

from __future__ import annotations

import pytest

from tests.engine.tables import Game


@pytest.fixture
def game() -> Game:
    """Four people at a table, all connected, the match started: the first round is signing."""
    return Game(4)


@pytest.fixture
def playing() -> Game:
    """Four connected people, the first round open (random deal)."""
    g = Game(4)
    g.open_round()
    return g
