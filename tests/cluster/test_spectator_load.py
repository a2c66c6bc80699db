"""`python -m loadtests.spectators` on the real test stack, small: one table of four players, a
crowd of 20 watchers in its child process, two stages of 3 s. It must measure both stages, seat
every watcher, see the table count them, and cost the table one shared public view. (Here, not
in tests/loadtests: this suite runs async tests off the main thread, where the browser tests keep
a loop running.)"""

from __future__ import annotations

import re

import pytest

from loadtests.spectators import run
from tests.conftest import Stack

CROWD = 20


async def test_the_spectator_script_measures_the_players_without_and_with_a_crowd(
    stack: Stack, capsys: pytest.CaptureFixture[str]
) -> None:
    await run(stack.a.url, tables=1, spectators=CROWD, seconds=3.0, pace=2.0, nice=0)
    out = capsys.readouterr().out
    with capsys.disabled():
        print(f"\n[spectators smoke]\n{out}")
    measured = re.findall(r"watched table's players\s+n=\s*(\d+)", out)
    assert len(measured) == 2, out  # without, then with the crowd
    assert all(int(n) > 0 for n in measured), out
    crowd = re.search(r"refused (\{.*?\}), table counted (\d+), public views fetched (\S+);", out)
    assert crowd is not None, out
    assert crowd.group(1) == "{}"
    assert int(crowd.group(2)) == CROWD
    # Twenty arrivals share the views their gateway asks for (a few at most, never one each).
    assert crowd.group(3) != "n/a"
    assert float(crowd.group(3)) <= 3, out
    assert re.search(r"over [1-9]\d* deliveries", out), out
