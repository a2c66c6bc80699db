"""R8–R11: simultaneous swaps with the centre."""

from __future__ import annotations

import pytest

from engine import ChooseSign, Refusal, Swap
from tests.engine.tables import SWAP_COOLDOWN, Game, deal, payloads


def swap_for(g: Game, seat: int, slot: int = 0, card: int = 0) -> Swap:
    """A well-formed swap of `seat`'s `card`-th card with `slot`, expecting what is there."""
    return Swap(seat=seat, card=g.hand(seat)[card]["id"], slot=slot, expect=g.center()[slot]["id"])


def test_r08_there_are_no_turns(playing: Game) -> None:
    moves = [swap_for(playing, s, slot=s) for s in range(4)]
    for move in moves:  # all in the same millisecond, in any order
        playing.do(move)
    assert len(payloads(playing.log, "swapped")) == 4


def test_r09_a_swap_trades_one_hand_card_with_one_centre_slot(playing: Game) -> None:
    hand, center = playing.hand(1), playing.center()
    out = playing.do(Swap(seat=1, card=hand[2]["id"], slot=3, expect=center[3]["id"]))
    assert playing.hand(1) == [*hand[:2], center[3], hand[3]]
    assert playing.center() == [*center[:3], hand[2]]
    (swapped,) = out
    assert swapped.to.scope == "all"
    assert swapped.event.to_wire() == {
        "type": "swapped",
        "seat": 1,
        "slot": 3,
        "placed": hand[2],
        "taken": center[3],
    }


def test_r10_after_a_swap_the_next_waits_two_seconds(playing: Game) -> None:
    playing.do(swap_for(playing, 0))
    refusal = playing.refuse(swap_for(playing, 0, slot=1))
    assert refusal.code == "cooldown"
    assert refusal.retry_in == SWAP_COOLDOWN
    assert refusal.to_wire() == {
        "code": "cooldown",
        "message": refusal.message,
        "retry_in": SWAP_COOLDOWN,
    }
    playing.wait(SWAP_COOLDOWN - 1)
    assert playing.refuse(swap_for(playing, 0, slot=1)).retry_in == 1
    playing.wait(1)
    playing.do(swap_for(playing, 0, slot=1))


def test_r10_the_cooldown_is_each_players_own(playing: Game) -> None:
    playing.do(swap_for(playing, 0, slot=0))
    playing.do(swap_for(playing, 1, slot=1))
    playing.do(swap_for(playing, 2, slot=2))


def test_r10_there_is_no_other_limit_on_swaps(playing: Game) -> None:
    for i in range(50):
        playing.do(swap_for(playing, 0, slot=i % 4, card=i % 4))
        playing.wait(SWAP_COOLDOWN)
    assert len(payloads(playing.log, "swapped")) == 50


def test_r11_stale_swap_costs_nothing(playing: Game) -> None:
    late = swap_for(playing, 1, slot=2)
    playing.do(swap_for(playing, 0, slot=2))  # seat 0 takes that card first
    refusal = playing.refuse(late)
    assert refusal.code == "stale"
    assert refusal.retry_in is None
    assert playing.view(1)["swap_ready_at"] <= playing.now
    playing.do(swap_for(playing, 1, slot=2))  # at once, with the card now there


def test_r11_checks_in_order_phase_form_card_slot_cooldown_expectation() -> None:
    g = Game(4)
    assert g.refuse(Swap(seat=0, card=None, slot=9, expect=1)).code == "wrong_phase"  # type: ignore[arg-type]
    g.open_round()
    mine, theirs = g.hand(0)[0]["id"], g.hand(1)[0]["id"]
    in_slot = g.center()[0]["id"]
    bad = "c999"
    assert g.refuse(Swap(seat=0, card=7, slot=9, expect=bad)).code == "bad_message"  # type: ignore[arg-type]
    assert g.refuse(Swap(seat=0, card=mine, slot="0", expect=in_slot)).code == "bad_message"  # type: ignore[arg-type]
    assert g.refuse(Swap(seat=0, card=mine, slot=True, expect=in_slot)).code == "bad_message"
    assert g.refuse(Swap(seat=0, card=theirs, slot=9, expect=bad)).code == "not_your_card"
    assert g.refuse(Swap(seat=0, card=mine, slot=4, expect=bad)).code == "bad_slot"
    assert g.refuse(Swap(seat=0, card=mine, slot=-1, expect=bad)).code == "bad_slot"
    g.do(Swap(seat=0, card=mine, slot=0, expect=in_slot))
    now_mine = g.hand(0)[1]["id"]
    assert g.refuse(Swap(seat=0, card=now_mine, slot=1, expect=bad)).code == "cooldown"
    g.wait(SWAP_COOLDOWN)
    assert g.refuse(Swap(seat=0, card=now_mine, slot=1, expect=bad)).code == "stale"


def test_r11_swaps_are_refused_outside_play() -> None:
    g = Game(4, deals=[deal(4, {0: "A"})])
    g.do(ChooseSign(seat=0, emoji="🍍"))
    assert g.refuse(Swap(seat=0, card="c0", slot=0, expect="c1")).code == "wrong_phase"


def test_r10_a_command_stamped_earlier_cannot_dodge_the_cooldown(playing: Game) -> None:
    playing.do(swap_for(playing, 0))
    hand, center = playing.hand(0), playing.center()
    early = Swap(seat=0, card=hand[1]["id"], slot=1, expect=center[1]["id"])
    with pytest.raises(Refusal) as refused:
        playing.table.apply(early, playing.now - 10_000)  # time never runs backwards
    assert refused.value.retry_in == SWAP_COOLDOWN


def test_r10_the_test_hook_time_scale_shortens_every_duration() -> None:
    g = Game(4, time_scale=0.05, deals=[deal(4)])
    (signing,) = payloads(g.log, "signing")
    assert signing["deadline"] == g.now + 1_500
    g.open_round()
    g.do(swap_for(g, 0))
    assert g.refuse(swap_for(g, 0, slot=1)).retry_in == 100
    g.wait(100)
    g.do(swap_for(g, 0, slot=1))
    assert g.view(0)["deadline"] == g.now - 100 + 9_000
