"""The round's clock is fair to the players (issue 37; docs/rules.md, R22's decision), with real
Ray, a real redis-server and real WebSockets: a table in play whose actor is killed, or whose
process is frozen, keeps its round's time (within the bound of docs/reliability.md), its players
see the `resumed` event, and no point is lost; a table beside it that was not faulted gets
nothing back.

Real time passes only for the faults themselves (a quiet spell so the beat is what bounds the
stall, Ray's restart, a 2.5 s SIGSTOP); the round's three minutes are read, never waited for."""

from __future__ import annotations

import asyncio
import os
import signal
import time

from actors.clock import BEAT_MS, PULSE_MS, STALL_AFTER_MS
from tests.cluster.client import Frame, Player, table_with
from tests.cluster.test_resilience import actor_pid, open_round
from tests.cluster.test_restore import snapshot
from tests.conftest import Stack

# How much more than its stall a table may get back (docs/reliability.md): its last sign of
# life in Redis is at most two beats old (a beat is skipped after a save, and the save's time
# may be a beat older), a pulse late, plus a loaded machine's lag (two cores, shared).
BOUND_MS = 2 * BEAT_MS + PULSE_MS + 1_500
QUIET_S = 2.5  # no change at the table: only the beat says it is alive


def wall_ms() -> int:
    return int(time.time() * 1000)  # the tables' clock (one machine: one wall clock)


async def in_play(stack: Stack) -> tuple[str, Player, Frame]:
    """A table of one human and three quiet bots, its first round open at full time (3 min)."""
    code, (host,) = await table_with(stack.a.url, 4, 1, time_scale=1.0)
    return code, host, (await open_round(code, [host]))[0]


async def test_a_killed_table_keeps_its_round_time_and_its_neighbour_gets_nothing(
    stack: Stack,
) -> None:
    code, host, opened = await in_play(stack)
    other_code, other, other_opened = await in_play(stack)
    await asyncio.sleep(QUIET_S)
    seen = host.last_seq
    pid = actor_pid(stack, code)
    killed = wall_ms()
    os.kill(pid, signal.SIGKILL)
    resumed = await host.wait_event(lambda e: e["type"] == "resumed", after=seen, limit=60)
    # The new incarnation gave back at least the time it was down, at most the bound more.
    down = resumed["at"] - killed
    print(f"killed: down {down} ms, given back {resumed['shift']} ms")
    assert down <= resumed["shift"] <= down + BOUND_MS, (resumed, down)
    assert resumed["deadline"] == opened["deadline"] + resumed["shift"]
    # So the round has what it had left when its actor died, or up to the bound more.
    left_at_kill = opened["deadline"] - killed
    left_now = resumed["deadline"] - resumed["at"]
    assert left_at_kill <= left_now <= left_at_kill + BOUND_MS, (left_at_kill, left_now)
    # A reconnecting player reads the same deadline; nothing of the round was lost.
    welcome = await host.connect(code, stack.b.url)
    table = welcome["table"]
    assert table["phase"] == "playing"
    assert table["deadline"] == resumed["deadline"]
    assert table["hand"] == opened["hand"]
    assert table["scores"] == [0, 0]
    await host.ok("contre")
    reveal = await host.wait_event(lambda e: e["type"] == "reveal")
    assert sum(reveal["scores"]) == 1  # the call scored: the round was still on
    # The table beside it was not faulted: not a millisecond more.
    assert other.latest("resumed") is None
    assert snapshot(stack, other_code)["table"]["state"]["deadline"] == other_opened["deadline"]
    for p in (host, other):
        assert not p.problems
        await p.close()


async def test_a_frozen_table_gives_back_its_stall(stack: Stack) -> None:
    code, host, opened = await in_play(stack)
    seen = host.last_seq
    pid = actor_pid(stack, code)
    frozen = 2.5
    assert frozen * 1000 > STALL_AFTER_MS
    os.kill(pid, signal.SIGSTOP)
    try:
        stopped = wall_ms()
        await asyncio.sleep(frozen)
    finally:
        os.kill(pid, signal.SIGCONT)
    thawed = wall_ms()
    resumed = await host.wait_event(lambda e: e["type"] == "resumed", after=seen)
    stall = thawed - stopped
    print(f"frozen: {stall} ms, given back {resumed['shift']} ms")
    # From its last pulse before the stop (at most a pulse earlier) to its first wake after.
    assert stall - 200 <= resumed["shift"] <= resumed["at"] - stopped + PULSE_MS, (resumed, stall)
    assert resumed["deadline"] == opened["deadline"] + resumed["shift"]
    # The round was not cut short: it still has what it had at the stop, or a pulse more.
    left_at_stop = opened["deadline"] - stopped
    assert 0 <= resumed["deadline"] - resumed["at"] - left_at_stop <= PULSE_MS + 1_500
    assert actor_pid(stack, code) == pid  # the same process: Ray saw nothing
    await host.ok("contre")
    reveal = await host.wait_event(lambda e: e["type"] == "reveal")
    assert sum(reveal["scores"]) == 1
    assert not host.problems
    await host.close()
