"""`QUATRO_ACTOR_TABLES`, how many tables a table actor serves before it ends (actors/reuse.py):
a whole number from 1, or the default, whatever an operator typed."""

from __future__ import annotations

import pytest

from actors.reuse import DEFAULT_TABLES, TABLES_ENV, tables_per_actor


def test_the_count_of_tables_per_actor_is_a_whole_number_or_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TABLES_ENV, "3")
    assert tables_per_actor() == 3
    monkeypatch.setenv(TABLES_ENV, "1")
    assert tables_per_actor() == 1  # one table, then the actor ends: as before reuse
    for typo in ("0", "-2", "many", ""):
        monkeypatch.setenv(TABLES_ENV, typo)
        assert tables_per_actor() == DEFAULT_TABLES
