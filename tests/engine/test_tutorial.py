"""The guided round (engine.tutorial, engine.coach, engine.bots.scripted), played on the injected
clock: to its end by a learner who follows the coach; nothing moving while the learner is
waited for; never rated; moves off the script refused (changing nothing) or harmless, and never
a dead end; the learner's way out; and a table saved and restored mid-lesson."""

from __future__ import annotations

import json

import pytest

from engine import (
    CallContre,
    CallQuatro,
    ChooseSign,
    Connect,
    Disconnect,
    Emit,
    EndTutorial,
    ErrorCode,
    NextRound,
    Phase,
    Ready,
    Refusal,
    Rematch,
    RequestVote,
    ScenarioError,
    SetFloor,
    Swap,
    Table,
    TableConfig,
    TakeSeat,
)
from engine.ratings import counts
from engine.tutorial import LEARNER, LESSONS, OPPONENT, PARTNER
from tests.engine.tutorials import SIGN, Tutorial

HOUR = 3_600_000
SCRIPT = [
    # Lesson 1: the learner's carré, their sign, the partner's call.
    "sign", "ready", "swap", "swap_more", "floor", "show", "wait",
    # Lesson 2: the partner's carré, the learner's call.
    "done1", "sign_again", "ready", "watch_partner", "call_quatro",
    # Lesson 3: the partner's sign (picked first), the opponents', seen twice, and the
    # learner's Contre!.
    "done2", "ready_partner", "watch_others", "seen_once", "call_contre",
]  # fmt: skip


def distinct(steps: list[str]) -> list[str]:
    return [s for i, s in enumerate(steps) if i == 0 or steps[i - 1] != s]


def test_the_tutorial_played_to_its_end_by_a_learner_who_follows_the_coach() -> None:
    tut = Tutorial()
    steps = tut.finish()
    assert distinct(steps) == SCRIPT
    assert tut.step() == "finished"
    assert tut.phase() is Phase.OVER
    assert tut.table.scores == (3, 0)
    reveals = [o.event.to_wire() for o in tut.log if o.event.type == "reveal"]
    assert [(r["reason"], r["by"], r["correct"]) for r in reveals] == [
        ("quatro", PARTNER, True),  # R15: the partner calls on the learner's carré
        ("quatro", LEARNER, True),
        ("contre", LEARNER, True),  # R17: the accused team held a carré
    ]
    assert reveals[-1]["carres"] == [OPPONENT]
    # The bots' share of "two minutes" (`python -m tests.engine.tutorials` prints it: 34 s):
    # the rest is the learner's, reading and doing.
    assert tut.now < 60_000


def test_the_tutorial_is_a_practice_table_and_never_rated() -> None:
    tut = Tutorial()
    tut.finish()
    result = tut.table.result()
    assert result is not None
    assert result.practice
    assert result.rated() == ("p0",)  # a human played it from the start: still not counted
    assert not counts(result)


def test_a_tutorial_is_four_private_seats_with_the_scripts_deals() -> None:
    config = TableConfig(players=4, tutorial=True)
    assert config.practice
    assert len(config.deals) == LESSONS
    for players in (6, 8):
        with pytest.raises(ScenarioError):
            TableConfig(players=players, tutorial=True)
    with pytest.raises(ScenarioError):
        TableConfig(players=4, tutorial=True, public=True)
    with pytest.raises(ScenarioError):
        TableConfig(players=4, tutorial=1)  # type: ignore[arg-type]


def events_after(tut: Tutorial, mark: int) -> list[str]:
    return [o.event.type for o in tut.log[mark:]]


def test_nothing_moves_while_the_learner_is_waited_for() -> None:
    """No clock runs on a tutorial's phases (docs/rules.md): an hour passes at signing, in the
    middle of lesson 1, in the pause, and with the partner's sign showing in lesson 2, and the
    table is where the learner left it (but for the floor's emissions, R13)."""
    tut = Tutorial()
    mark = len(tut.log)
    tut.wait(HOUR)
    assert (tut.phase(), tut.step(), events_after(tut, mark)) == (Phase.SIGNING, "sign", [])
    assert tut.view()["deadline"] is None
    tut.do(ChooseSign(seat=LEARNER, emoji=SIGN))
    tut.do(Ready(seat=LEARNER))
    assert tut.view()["deadline"] is None
    before = tut.view()
    mark = len(tut.log)
    tut.wait(HOUR)
    assert events_after(tut, mark) == []
    assert tut.view()["center"] == before["center"]
    assert tut.step() == "swap"
    tut.until("done1")
    mark = len(tut.log)
    tut.wait(HOUR)
    assert (tut.phase(), events_after(tut, mark)) == (Phase.PAUSE, [])
    tut.until("call_quatro")
    mark = len(tut.log)
    tut.wait(HOUR)
    assert tut.phase() is Phase.PLAYING
    assert set(events_after(tut, mark)) == {"emission"}
    assert tut.step() == "call_quatro"


def test_a_disconnected_learner_is_waited_for_at_signing() -> None:
    """R6 opens a round without disconnected players; a tutorial has nobody else to open for."""
    tut = Tutorial(connect=False)
    tut.wait(HOUR)
    assert tut.phase() is Phase.SIGNING
    tut.do(Connect(seat=LEARNER))
    tut.do(ChooseSign(seat=LEARNER, emoji=SIGN))
    tut.do(Disconnect(seat=LEARNER))
    tut.wait(HOUR)
    assert tut.phase() is Phase.SIGNING
    tut.do(Connect(seat=LEARNER))
    tut.do(Ready(seat=LEARNER))
    assert tut.phase() is Phase.PLAYING


def test_calls_the_step_does_not_ask_for_are_refused_and_change_nothing() -> None:
    tut = Tutorial()
    tut.until("swap_more")
    for command in (CallQuatro(seat=LEARNER), CallContre(seat=LEARNER), RequestVote(LEARNER)):
        assert tut.refused(command).code is ErrorCode.TUTORIAL_STEP
    tut.until("wait")
    # The holder of the carré is the one who must not call (R15, R16): the coach says wait.
    assert tut.refused(CallQuatro(seat=LEARNER)).code is ErrorCode.TUTORIAL_STEP
    tut.until("watch_partner")
    assert tut.refused(CallQuatro(seat=LEARNER)).code is ErrorCode.TUTORIAL_STEP
    # The partner's carré is the lesson: the learner's cards stay as they are.
    v = tut.view()
    swap = Swap(LEARNER, card=v["hand"][0]["id"], slot=0, expect=v["center"][0]["id"])
    assert tut.refused(swap).code is ErrorCode.TUTORIAL_STEP
    # A malformed swap is still the rules' to refuse, as anywhere.
    bad = Swap(LEARNER, card=v["hand"][0]["id"], slot="0", expect=v["center"][0]["id"])  # type: ignore[arg-type]
    assert tut.refused(bad).code is ErrorCode.BAD_MESSAGE
    tut.until("seen_once")
    assert tut.refused(CallContre(seat=LEARNER)).code is ErrorCode.TUTORIAL_STEP
    assert tut.refused(CallQuatro(seat=LEARNER)).code is ErrorCode.TUTORIAL_STEP
    tut.finish()
    assert tut.refused(Rematch(LEARNER)).code is ErrorCode.NOT_ALLOWED


def test_harmless_moves_off_the_script_are_taken_and_the_coach_follows() -> None:
    """In lesson 1 a swap that gives an ace back, a decoy on the floor, the floor released: the
    rules take them, nothing else moves, and the coach's next instruction starts from there."""
    tut = Tutorial()
    tut.until("swap_more")
    v = tut.view()
    ace = next(c for c in v["hand"] if c["rank"] == "A")
    other = next(i for i, c in enumerate(v["center"]) if c["rank"] != "A")
    tut.wait(2_000)
    tut.do(Swap(LEARNER, card=ace["id"], slot=other, expect=v["center"][other]["id"]))
    assert tut.step() == "swap"  # two aces again: the coach points at one of the centre's
    coached = tut.view()["tutorial"]
    assert tut.view()["center"][coached["slot"]]["rank"] == "A"
    tut.until("show")
    tut.do(Emit(seat=LEARNER, emoji="🐢"))  # a decoy: the partner does not call on it
    tut.wait(30_000)
    assert (tut.phase(), tut.step()) == (Phase.PLAYING, "show")
    tut.wait(2_000)
    tut.do(SetFloor(seat=LEARNER, open=False))
    assert tut.step() == "floor"
    assert distinct(tut.finish())[-1] == "call_contre"
    assert tut.table.scores == (3, 0)


def test_the_sign_shown_without_a_carre_costs_the_lesson_and_the_next_one_follows() -> None:
    """The partner calls on the sign it sees, never on the learner's hand (R30): a sign shown
    without a carré makes its Quatro! wrong (R15), the other team scores, and the coach says
    so; lesson 2 goes on as scripted."""
    tut = Tutorial()
    tut.do(ChooseSign(seat=LEARNER, emoji=SIGN))
    tut.do(Ready(seat=LEARNER))
    tut.do(SetFloor(seat=LEARNER, open=True))
    tut.do(Emit(seat=LEARNER, emoji=SIGN))
    tut.wait(10_000)
    reveal = tut.view()["last_reveal"]
    assert (reveal["by"], reveal["correct"], reveal["scored"]) == (PARTNER, False, [1])
    assert tut.step() == "missed"
    tut.do(NextRound(seat=LEARNER))
    tut.finish()
    assert tut.table.scores == (2, 1)
    assert tut.view()["winners"] == [0]


@pytest.mark.parametrize("stop", ["sign", "swap_more", "wait", "done1", "watch_others"])
def test_the_learner_may_leave_at_any_step(stop: str) -> None:
    tut = Tutorial()
    tut.until(stop)
    out = tut.do(EndTutorial(seat=LEARNER))
    assert [o.event.to_wire() for o in out if o.event.type == "over"] == [
        {"type": "over", "winners": [], "scores": list(tut.table.scores)}
    ]
    assert tut.phase() is Phase.OVER
    assert tut.step() == "left"
    assert not any(row["floor"] for row in tut.view()["seats"])
    mark = len(tut.log)
    tut.wait(HOUR)  # the bots do nothing more
    assert tut.log[mark:] == []
    assert tut.do(EndTutorial(seat=LEARNER)) == []  # leaving twice changes nothing
    result = tut.table.result()
    assert result is not None
    assert not counts(result)


def test_only_a_tutorials_learner_ends_it_so() -> None:
    tut = Tutorial()
    assert tut.refused(EndTutorial(seat=PARTNER)).code is ErrorCode.NOT_ALLOWED
    table = Table(TableConfig(players=4))
    table.apply(TakeSeat(seat=0, player_id="p0", name="Ana"), 0)
    with pytest.raises(Refusal) as refused:
        table.apply(EndTutorial(seat=0), 0)
    assert refused.value.code is ErrorCode.NOT_ALLOWED


def test_a_tutorial_saved_mid_lesson_comes_back_as_it_was() -> None:
    """The table actor saves after every change; a restored tutorial says and does the same."""
    tut = Tutorial()
    tut.until("watch_partner")
    image = json.dumps(tut.table.to_snapshot(), sort_keys=True)
    back = Table.from_snapshot(json.loads(image))
    assert back.view(LEARNER) == tut.view()
    assert back.config == tut.table.config
    assert json.dumps(back.to_snapshot(), sort_keys=True) == image
