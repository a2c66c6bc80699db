"""R22's decision (docs/rules.md): the time a fault held the table still is given back.

`Table.resume(stalled, now)` moves every clock of the table on by `stalled`: the round, the
signing, the pause, the vote, the cooldowns, the emissions' 5 s. The property: a table that
stood still for d ms at any moment of any game, then plays on d ms later, tells its players
exactly what the table that never stood still told them, d ms later, with the deadlines moved
by d; nothing scored differs.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    CallQuatro,
    Emit,
    Phase,
    RequestVote,
    SetFloor,
    Swap,
    Table,
    TableConfig,
    TakeSeat,
)
from engine.bots.model import Model
from tests.engine.randomplay import Advance, RandomGame, Record, apply, steps_from
from tests.engine.tables import (
    EMISSION_PERIOD,
    FLOOR_COOLDOWN,
    PAUSE,
    ROUND,
    SIGNING,
    SWAP_COOLDOWN,
    VOTE,
    VOTE_GAP,
    Game,
    payloads,
    types,
)

STALL = 7_000


def test_r22_the_round_keeps_its_time(playing: Game) -> None:
    """A round 60 s in stands still 7 s: it ends 7 s later than it would have, by the clock."""
    opened = playing.now
    playing.wait(60_000)
    out = playing.table.resume(STALL, playing.now + STALL)
    playing.now += STALL
    assert payloads(out, "resumed") == [
        {
            "type": "resumed",
            "shift": STALL,
            "deadline": opened + ROUND + STALL,
            "vote_deadline": None,
            "vote_ready_at": None,
        }
    ]
    assert out[0].to.public
    assert out[0].at == playing.now
    assert playing.view(0)["deadline"] == opened + ROUND + STALL
    assert "reveal" not in types(playing.wait_until(opened + ROUND + STALL - 1))
    assert playing.phase() is Phase.PLAYING
    reveal = payloads(playing.wait(1), "reveal")
    assert reveal
    assert reveal[0]["reason"] == "timeout"


def test_r22_a_round_overdue_when_it_stood_still_ends_as_soon_as_it_resumes(
    playing: Game,
) -> None:
    """A deadline that had passed when the table stopped (not yet fired) is still past."""
    deadline = playing.view(0)["deadline"]
    playing.now = deadline + 50  # the clock had not fired it yet
    playing.table.resume(STALL, playing.now + STALL)
    playing.now += STALL
    assert payloads(playing.wait(0), "reveal")[0]["reason"] == "timeout"
    assert playing.last("reveal").to_wire()["reason"] == "timeout"


def test_r6_r23_signing_and_pause_keep_their_time(game: Game) -> None:
    signing_ends = game.view(0)["deadline"]
    assert signing_ends == game.now + SIGNING
    game.wait(10_000)
    game.table.resume(STALL, game.now + STALL)
    game.now += STALL
    assert game.view(0)["deadline"] == signing_ends + STALL
    game.wait_until(signing_ends + STALL - 1)
    assert game.phase() is Phase.SIGNING
    game.wait(1)
    assert game.phase() is Phase.PLAYING
    game.do(CallQuatro(seat=0))
    pause_ends = game.view(0)["deadline"]
    assert pause_ends == game.now + PAUSE
    game.table.resume(STALL, game.now + STALL)
    game.now += STALL
    game.wait_until(pause_ends + STALL - 1)
    assert game.phase() is Phase.PAUSE
    game.wait(1)
    assert game.phase() is Phase.SIGNING


def test_r19_r20_the_vote_and_its_gap_keep_their_time() -> None:
    g = Game(4)
    g.open_round()
    started = g.now
    g.do(RequestVote(seat=0))
    g.wait(5_000)
    out = g.table.resume(STALL, g.now + STALL)
    g.now += STALL
    assert payloads(out, "resumed")[0]["vote_deadline"] == started + VOTE + STALL
    g.wait_until(started + VOTE + STALL - 1)
    assert g.view(0)["vote"] is not None
    assert payloads(g.wait(1), "vote_result") == [{"type": "vote_result", "passed": False}]
    ended = g.now
    g.wait(10_000)
    out = g.table.resume(STALL, g.now + STALL)
    g.now += STALL
    assert payloads(out, "resumed")[0]["vote_ready_at"] == ended + VOTE_GAP + STALL
    assert g.view(0)["vote_ready_at"] == ended + VOTE_GAP + STALL
    g.wait_until(ended + VOTE_GAP + STALL - 1)
    assert g.refuse(RequestVote(seat=1)).retry_in == 1


def test_r10_r13_r14_cooldowns_and_emissions_keep_their_time(playing: Game) -> None:
    card = playing.hand(0)[0]
    playing.do(Swap(seat=0, card=card["id"], slot=0, expect=playing.center()[0]["id"]))
    playing.do(SetFloor(seat=0, open=True))
    playing.do(Emit(seat=0, emoji=playing.view(0)["emojis"][0]))
    emitted = playing.now
    playing.wait(500)
    playing.table.resume(STALL, playing.now + STALL)
    playing.now += STALL
    view = playing.view(0)
    assert view["swap_ready_at"] == emitted + SWAP_COOLDOWN + STALL
    assert view["emissions"][-1]["at"] == emitted + STALL
    # The swap cooldown still has 1.5 s to run, as it had when the table stopped.
    mine, centre = playing.hand(0)[0]["id"], playing.center()[1]["id"]
    assert playing.refuse(Swap(seat=0, card=mine, slot=1, expect=centre)).retry_in == 1_500
    # The next emission comes 5 s after the last one, the stall not counted (R13).
    assert not payloads(playing.wait(EMISSION_PERIOD - 500 - 1), "emission")
    assert payloads(playing.wait(1), "emission")


def test_r13_r14_a_new_floor_waits_out_the_stall_too(playing: Game) -> None:
    """Released and taken again: the floor's 2 s and the emissions' 5 s count without the stall."""
    emoji = playing.view(0)["emojis"][0]
    playing.do(SetFloor(seat=0, open=True))
    playing.do(Emit(seat=0, emoji=emoji))
    emitted = playing.now
    playing.wait(FLOOR_COOLDOWN)
    playing.do(SetFloor(seat=0, open=False))
    playing.wait(1_000)
    playing.table.resume(STALL, playing.now + STALL)
    playing.now += STALL
    assert playing.refuse(SetFloor(seat=0, open=True)).retry_in == FLOOR_COOLDOWN - 1_000
    playing.wait(FLOOR_COOLDOWN - 1_000)
    playing.do(SetFloor(seat=0, open=True))
    assert not payloads(playing.do(Emit(seat=0, emoji=emoji)), "emission")
    assert playing.now < emitted + EMISSION_PERIOD + STALL
    assert not payloads(playing.wait_until(emitted + EMISSION_PERIOD + STALL - 1), "emission")
    assert payloads(playing.wait(1), "emission")


@pytest.mark.parametrize("stalled", [0, -5])
def test_nothing_stood_still_nothing_moves(playing: Game, stalled: int) -> None:
    before = json.dumps(playing.table.to_snapshot(), sort_keys=True)
    assert playing.table.resume(stalled, playing.now) == []
    assert json.dumps(playing.table.to_snapshot(), sort_keys=True) == before


def test_a_table_with_no_clock_running_tells_nobody() -> None:
    """A private lobby and a finished match have no deadline: nothing to tell."""
    table = Table(TableConfig(players=4))
    table.apply(TakeSeat(seat=0, player_id="p0", name="Ana"), 0)
    assert table.resume(STALL, STALL) == []


def test_a_stall_is_whole_milliseconds(playing: Game) -> None:
    with pytest.raises(TypeError):
        playing.table.resume(True, playing.now)
    with pytest.raises(TypeError):
        playing.table.resume(1.5, playing.now)  # type: ignore[arg-type]


def test_a_bot_takes_the_new_clocks(playing: Game) -> None:
    """A bot's model (engine.bots) moves its clocks by the event, as the table did."""
    model = Model(seat=1, players=4, timings=playing.table.config.timings)
    model.sync(playing.view(1), playing.now)
    before = copy.deepcopy(model)
    out = playing.table.resume(STALL, playing.now + STALL)
    model.observe(out[0].event.to_wire(), out[0].at)
    assert before.deadline is not None
    assert model.deadline == before.deadline + STALL == playing.view(1)["deadline"]
    assert model.swap_ready_at == before.swap_ready_at + STALL
    assert model.opened_at == before.opened_at + STALL


# -- the property: as if frozen -----------------------------------------------------------------

STEPS = st.binary(min_size=5 * 40, max_size=5 * 250).map(steps_from)
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DEADLINE_KEYS = ("deadline", "vote_deadline", "vote_ready_at")


def _moved_back(record: Record, by: int) -> list[str]:
    """A record of the table that stood still, as the other would have said it: times back."""
    lines = []
    for o in record.out:
        wire: dict[str, Any] = o.event.to_wire()
        for key in DEADLINE_KEYS:
            if isinstance(wire.get(key), int):
                wire[key] -= by
        lines.append(json.dumps([o.to.scope, o.to.index, wire, o.at - by], sort_keys=True))
    if record.refusal is not None:
        lines.append(json.dumps(record.refusal.to_wire(), sort_keys=True))
    return lines


def _said(record: Record) -> list[str]:
    return _moved_back(record, 0)


@PROPERTY
@given(
    steps=STEPS,
    players=st.sampled_from([4, 6, 8]),
    seed=st.integers(0, 2**16),
    every=st.integers(1, 6),
    stalled=st.sampled_from([1, 999, 7_000, 31_000, 200_000]),
)
def test_a_table_that_stood_still_plays_on_as_if_frozen(
    steps: list[tuple[int, int, int]], players: int, seed: int, every: int, stalled: int
) -> None:
    """One game played twice: by a table that never stood still, and by one that stood still
    `stalled` ms before every `every`-th step (so before votes, cooldowns, emissions and
    deadlines of every kind); the second says what the first said, later by its stalls."""
    game = RandomGame(players=players, seed=seed, humans=frozenset(range(0, players, 2)))
    for _ in game.setup():
        pass
    start = len(game.log)
    for step in steps:
        for _ in game.play(step):
            pass
    log = game.log
    frozen = Table(TableConfig(players=players, seed=seed))
    steady = Table(TableConfig(players=players, seed=seed))
    for now, command in log[:start]:
        assert not isinstance(command, Advance)
        for table in (frozen, steady):
            apply(table, command, now)
    late = 0  # the stalls so far
    for j in range(start, len(log)):
        now, command = log[j]
        if (j - start) % every == 0:
            told = frozen.resume(stalled, log[j - 1][0] + late + stalled)
            late += stalled
            view: dict[str, Any] = steady.view(None)
            deadline, vote = view["deadline"], view["vote"]
            if deadline is None and vote is None:
                assert told == []
            else:
                assert [o.event.type for o in told] == ["resumed"]
                wire = told[0].event.to_wire()
                assert wire["deadline"] == (None if deadline is None else deadline + late)
                assert wire["vote_deadline"] == (None if vote is None else vote["deadline"] + late)
        if isinstance(command, Advance):
            a = Record("advance", now, steady.advance(now))
            b = Record("advance", now + late, frozen.advance(now + late))
        else:
            a = apply(steady, command, now)
            b = apply(frozen, command, now + late)
        assert _moved_back(b, late) == _said(a)
    assert frozen.scores == steady.scores
    assert frozen.phase == steady.phase
    due, steady_due = frozen.next_deadline(), steady.next_deadline()
    assert due == (None if steady_due is None else steady_due + late)
