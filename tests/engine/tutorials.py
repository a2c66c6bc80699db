"""A tutorial table on a hand-cranked clock, for the tests of the guided round: the learner in
seat 0 played by the test, the script's bots (engine.bots.scripted) in the other seats, fed
only what their seats see by `engine.tournament.Runner`, as the table actor feeds them.

`Tutorial.follow()` is a learner who does exactly what the coach says, one step at a time;
`Tutorial.finish()` lets them play the tutorial out from wherever it stands.
"""

from __future__ import annotations

from typing import Any

from engine import (
    CallContre,
    CallQuatro,
    ChooseSign,
    Command,
    Connect,
    Emit,
    NextRound,
    Outbound,
    Phase,
    Ready,
    Refusal,
    SetFloor,
    Swap,
    Table,
    TableConfig,
    TakeSeat,
)
from engine.bots import make_bot
from engine.tournament import Runner
from engine.tutorial import LEARNER

Wire = dict[str, Any]
SIGN = "🍍"
# Steps where the coach asks the learner to watch: time passes, the bots play their part.
WATCHING = frozenset({"wait", "watch_partner", "watch_others", "seen_once"})


class Tutorial:
    def __init__(self, seed: int = 3, time_scale: float = 1.0, connect: bool = True) -> None:
        config = TableConfig(players=4, tutorial=True, seed=seed, time_scale=time_scale)
        self.table = Table(config)
        self.log: list[Outbound] = []
        self.log += self.table.apply(TakeSeat(seat=LEARNER, player_id="p0", name="Ana"), 0)
        if connect:
            self.log += self.table.apply(Connect(seat=LEARNER), 0)
        bots = {
            s: make_bot("tutorial", s, 4, seed=s, speed=1 / time_scale, timings=config.timings)
            for s in (1, 2, 3)
        }
        self.runner = Runner(self.table, bots)
        self.runner.listeners.append(lambda o, _: self.log.append(o))

    @property
    def now(self) -> int:
        return self.runner.now

    def phase(self) -> Phase:
        """A call, not a property, so type checkers read it again after every command."""
        return self.table.phase

    def view(self) -> Wire:
        return self.table.view(LEARNER)

    def step(self) -> str:
        coached = self.view()["tutorial"]
        assert coached is not None
        return str(coached["step"])

    def do(self, command: Command) -> list[Outbound]:
        """The learner's command, now; Refusal propagates (the table changed nothing)."""
        return self.runner.act(LEARNER, command)

    def wait(self, ms: int) -> None:
        """Let `ms` pass: the table's clock and the bots play."""
        self.runner.run(until=self.now + ms)

    def move(self) -> Command | None:
        """What the coach asks of the learner now; None when the step is to watch (or over)."""
        v = self.view()
        coached = v["tutorial"]
        step = coached["step"]
        if step in ("sign", "sign_again"):
            return ChooseSign(seat=LEARNER, emoji=SIGN)
        if step in ("ready", "ready_partner"):
            return Ready(seat=LEARNER)
        if step in ("swap", "swap_more"):
            slot = coached["slot"]
            return Swap(LEARNER, card=coached["card"], slot=slot, expect=v["center"][slot]["id"])
        if step == "floor":
            return SetFloor(seat=LEARNER, open=True)
        if step == "show":
            return Emit(seat=LEARNER, emoji=coached["emoji"])
        if step == "call_quatro":
            return CallQuatro(seat=LEARNER)
        if step == "call_contre":
            return CallContre(seat=LEARNER)
        if step in ("done1", "done2", "missed"):
            return NextRound(seat=LEARNER)
        return None

    def follow(self) -> str:
        """Do the one thing the coach asks (waiting out a cooldown first), or let a second pass
        when it asks to watch. Returns the step followed."""
        step = self.step()
        command = self.move()
        if command is None:
            assert step in WATCHING, step
            self.wait(1_000)
            return step
        v = self.view()
        ready = v["swap_ready_at"] if isinstance(command, Swap) else v["floor_ready_at"]
        if isinstance(command, Swap | SetFloor) and ready > self.now:
            # The round may end while the cooldown runs out (a bot calls): the coach is read
            # again before anything is sent, as a person would look at the screen again.
            self.wait(ready - self.now)
            return step
        self.do(command)
        return step

    def finish(self, most_ms: int = 10 * 60_000) -> list[str]:
        """Follow the coach until the tutorial is over; the steps followed, in order. Fails
        when it takes longer than `most_ms` of the table's time: a learner who does what they
        are told is never stuck."""
        return self.until("finished", most_ms)

    def until(self, step: str, most_ms: int = 10 * 60_000) -> list[str]:
        """Follow the coach until it says `step` (or the tutorial is over); the steps
        followed. Fails past `most_ms` of the table's time, as `finish`."""
        start = self.now
        steps: list[str] = []
        while self.step() != step and self.phase() is not Phase.OVER:
            assert self.now - start <= most_ms, f"stuck at {self.step()} after {steps[-12:]}"
            steps.append(self.follow())
        return steps

    def refused(self, command: Command) -> Refusal:
        """The learner's `command`, which must be refused and change nothing."""
        before = self.table.to_snapshot()
        try:
            self.do(command)
        except Refusal as refusal:
            assert self.table.to_snapshot() == before, f"refused {command} changed the table"
            return refusal
        raise AssertionError(f"{command} was accepted")


def timeline() -> list[tuple[int, str]]:
    """When (the table's ms since the learner sat down) each instruction came, for a learner who
    does each thing the moment it is asked: the script's own share of "two minutes"."""
    tut = Tutorial()
    seen: list[tuple[int, str]] = [(0, tut.step())]
    while tut.phase() is not Phase.OVER:
        tut.follow()
        if tut.step() != seen[-1][1]:
            seen.append((tut.now, tut.step()))
    return seen


if __name__ == "__main__":
    # python -m tests.engine.tutorials: the guided round's timeline at its own pace.
    for at, step in timeline():
        print(f"{at / 1000:6.1f} s  {step}")
