"""Hints for newcomers (engine.hints): worked out from the seat's own view, so they can only say
what that seat already sees (R30), and gone when the host turns them off."""

from __future__ import annotations

from engine import ChangeSettings, ChooseSign, Emit, SetFloor, StartMatch
from engine.hints import hint_for
from tests.engine.tables import FLOOR_COOLDOWN, Game, deal

MELON = "🍉"


def carre_game(hints: bool = True) -> Game:
    """Seat 2 (the host's partner) can make a carré of aces; team 0's sign is the melon."""
    g = Game(4, humans=[0, 1, 2, 3], deals=[deal(4, {2: "A"})], start=False)
    if not hints:
        g.do(ChangeSettings(seat=0, hints=False))
    g.do(StartMatch(seat=0))
    g.do(ChooseSign(seat=0, emoji=MELON))
    return g


def hint(g: Game, seat: int) -> str | None:
    return hint_for(g.view(seat), seat)


def test_round_one_opens_with_a_tip_for_signing_then_for_playing() -> None:
    g = carre_game()
    assert hint(g, 0) == "tip_sign"
    g.open_round()
    assert hint(g, 0) == "tip_play"
    assert hint(g, 1) == "tip_play"


def test_a_carre_in_your_hand_says_take_the_floor_then_show_the_sign_then_wait() -> None:
    g = carre_game()
    g.open_round()
    g.make_carre(2, "A")
    assert hint(g, 2) == "carre_floor"
    g.do(SetFloor(seat=2, open=True))
    assert hint(g, 2) == "carre_sign"
    g.do(Emit(seat=2, emoji=MELON))
    assert hint(g, 2) == "carre_wait"
    # The partner sees the sign on the floor: call Quatro!
    assert hint(g, 0) == "partner_sign"
    # The other team holds no carré and does not know the melon: nothing but the tip.
    assert hint(g, 1) == "tip_play"
    assert hint(g, 3) == "tip_play"


def test_a_decoy_on_the_partners_floor_is_not_the_sign() -> None:
    g = carre_game()
    g.open_round()
    g.do(SetFloor(seat=2, open=True))
    g.do(Emit(seat=2, emoji="🐢"))
    assert hint(g, 0) == "tip_play"
    g.wait(FLOOR_COOLDOWN)
    g.do(SetFloor(seat=2, open=False))
    assert hint(g, 0) == "tip_play"


def test_the_opponents_never_learn_anything_from_a_hint() -> None:
    """The same hint whatever the other seats hold: the hint of seat 1 before and after seat 2
    completes its carré (everything seat 1 sees is public: a swap and nothing else)."""
    g = carre_game()
    g.open_round()
    before = hint(g, 1)
    g.make_carre(2, "A")
    assert hint(g, 1) == before == "tip_play"
    assert hint(g, 2) == "carre_floor"


def test_no_hints_when_the_host_turned_them_off() -> None:
    g = carre_game(hints=False)
    assert hint(g, 0) is None
    g.open_round()
    g.make_carre(2, "A")
    assert hint(g, 2) is None


def test_no_tip_after_round_one() -> None:
    view = {"settings": {"hints": True}, "phase": "playing", "round": 2, "sign": MELON}
    view |= {"seats": [{"floor": False, "emoji": None}] * 4, "hand": [], "choice": None}
    assert hint_for(view, 0) is None
    assert hint_for({**view, "phase": "signing"}, 0) is None
