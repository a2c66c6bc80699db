"""The setting of the priority of play: a value an operator mistyped is ignored, never a reason
for a table not to open (actors/priority.py runs in `open` and in a restarted actor's start)."""

from __future__ import annotations

import os

import pytest

from actors import priority


@pytest.mark.parametrize(
    ("raw", "nice"), [("0", 0), (" 5 ", 5), ("-40", -20), ("99", 19), ("", None), ("high", None)]
)
def test_the_play_nice_setting_is_read_or_ignored(
    raw: str, nice: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(priority.PLAY_NICE_ENV, raw)
    assert priority.play_nice() == nice


def test_a_mistyped_setting_leaves_the_process_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(priority.PLAY_NICE_ENV, "high")
    before = os.getpriority(os.PRIO_PROCESS, 0)
    assert priority.to_play() is False
    assert os.getpriority(os.PRIO_PROCESS, 0) == before
