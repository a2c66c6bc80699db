"""The guided round under random play: whatever the learner does first — any move their view
allows, junk, leaving and coming back, the clock running — every event keeps R30 (the coach's
instructions included: to the learner alone, pointing only at what the learner sees), a refused
move changes nothing, and a learner who then follows the coach finishes the tutorial."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Audience, Command, Connect, Disconnect, Outbound, Phase, Refusal
from engine.legal import legal_commands
from engine.tutorial import LEARNER
from tests.engine.randomplay import DURATIONS, junk_command, steps_from
from tests.engine.tutorials import Tutorial

STEPS = st.binary(min_size=5 * 10, max_size=5 * 150).map(steps_from)


class Audit:
    """Checks each event as it is sent, against the table as it stands when it is sent."""

    def __init__(self, tut: Tutorial) -> None:
        self.tut = tut
        self.emitted: set[str] = set()  # every emoji a floor showed this round (public, R13)
        self.coached = 0
        tut.runner.listeners.append(self.check)

    def check(self, o: Outbound, wire: dict[str, Any]) -> None:
        kind = wire["type"]
        table = self.tut.table
        if kind == "signing":
            self.emitted = set()
        elif kind == "emission":
            self.emitted.add(wire["emoji"])
        elif kind in ("round", "reshuffled") and o.to.scope != "watch":
            assert o.to.scope == "seat", "a hand sent to more than its seat"
        elif kind == "sign":
            assert o.to.scope == "team", "a sign sent beyond its team (R5, R30)"
        elif kind == "tutorial":
            self.coached += 1
            self.instruction(o, wire, table.view(LEARNER))

    def instruction(self, o: Outbound, wire: dict[str, Any], mine: dict[str, Any]) -> None:
        """R30: the coach speaks to the learner only, of the learner's own cards, of centre
        slots, of their team's sign or of an emoji a floor showed to everyone."""
        assert o.to == Audience.seat(LEARNER)
        assert wire == mine["tutorial"], "the view and the events disagree"
        if wire["card"] is not None:
            assert wire["card"] in {c["id"] for c in mine["hand"]}
        if wire["slot"] is not None:
            assert 0 <= wire["slot"] < len(mine["center"])
        if wire["emoji"] is not None:
            assert wire["emoji"] == mine["sign"] or wire["emoji"] in self.emitted
        if wire["seat"] is not None:
            assert 0 <= wire["seat"] < 4


def play(tut: Tutorial, audit: Audit, step: tuple[int, int, int]) -> None:
    a, b, c = step
    kind = a % 8
    if kind <= 1:
        tut.wait(DURATIONS[c % len(DURATIONS)])
        return
    if kind == 2:
        connected = tut.table.is_connected(LEARNER)
        command: Any = Disconnect(LEARNER) if connected else Connect(LEARNER)
    elif kind == 3:
        # The learner's junk: the table binds every command to its sender's seat (for_seat),
        # so nothing the learner sends is ever played from a bot's seat.
        command = junk_command(a // 8, b)
        if isinstance(command, Command) and command.seat in (1, 2, 3):
            command = dataclasses.replace(command, seat=LEARNER)
    else:
        options = legal_commands(tut.view(), LEARNER, tut.now)
        if not options:
            tut.wait(DURATIONS[c % len(DURATIONS)])
            return
        command = options[(b + c) % len(options)]
    before = json.dumps(tut.table.to_snapshot(), sort_keys=True)
    try:
        out = tut.table.apply(command, tut.now)
    except Refusal as refusal:
        tut.runner.feed(refusal.events)
        if not refusal.events:
            assert json.dumps(tut.table.to_snapshot(), sort_keys=True) == before
        return
    tut.runner.feed(out)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), steps=STEPS)
def test_r30_holds_and_the_tutorial_can_always_be_finished(
    seed: int, steps: list[tuple[int, int, int]]
) -> None:
    tut = Tutorial(seed=seed)
    audit = Audit(tut)
    for step in steps:
        if tut.phase() is Phase.OVER:
            break
        play(tut, audit, step)
    if tut.phase() is not Phase.OVER:
        tut.finish()
    assert tut.step() == "finished"
    assert tut.view()["winners"] == [0]
    assert audit.coached > 0
