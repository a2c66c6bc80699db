"""Hints for newcomers (engine.hints): worked out from the seat's own view, so they can only say
what that seat already sees (R30), and gone when the host turns them off."""

from __future__ import annotations

from engine import ChangeSettings, ChooseSign, Emit, SetFloor, StartMatch
from engine.hints import hint_for, partner_shows_sign, sign_needs_confirm
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


def both_carres_game() -> Game:
    """Seat 0 can make a carré of kings and seat 2 one of aces; team 0's sign is the melon."""
    g = Game(4, humans=[0, 1, 2, 3], deals=[deal(4, {0: "K", 2: "A"})])
    g.do(ChooseSign(seat=0, emoji=MELON))
    g.open_round()
    g.make_carre(0, "K")
    g.make_carre(2, "A")
    return g


def test_r15_the_partners_sign_comes_before_a_carre_of_your_own() -> None:
    """Quatro! judges the partner's hand (R15): once the partner shows the sign, the hint is to
    call, whatever the player holds — also before, and after, showing the sign themselves."""
    g = both_carres_game()
    g.do(SetFloor(seat=0, open=True))
    assert hint(g, 0) == "carre_sign"
    g.do(SetFloor(seat=2, open=True))
    g.do(Emit(seat=2, emoji=MELON))
    assert partner_shows_sign(g.view(0), 0)
    assert hint(g, 0) == "partner_sign"
    assert hint(g, 2) == "carre_wait"  # seat 0 shows nothing yet: seat 2 waits for its call
    g.do(Emit(seat=0, emoji=MELON))
    assert hint(g, 0) == "partner_sign"
    assert hint(g, 2) == "partner_sign"
    # The opponents see two floors and two emojis, nothing they can tell a sign by.
    assert hint(g, 1) == hint(g, 3) == "tip_play"
    assert not partner_shows_sign(g.view(1), 1)


def test_the_partners_sign_stops_counting_when_the_floor_is_released() -> None:
    g = both_carres_game()
    g.do(SetFloor(seat=2, open=True))
    g.do(Emit(seat=2, emoji=MELON))
    assert hint(g, 0) == "partner_sign"
    g.wait(FLOOR_COOLDOWN)
    g.do(SetFloor(seat=2, open=False))
    assert hint(g, 0) == "carre_floor"


def test_showing_the_sign_without_a_carre_asks_first_once_a_round() -> None:
    g = carre_game()
    g.open_round()
    g.do(SetFloor(seat=0, open=True))
    view = g.view(0)
    assert sign_needs_confirm(view, MELON, None)
    assert not sign_needs_confirm(view, "🐢", None), "a decoy never asks"
    assert not sign_needs_confirm(view, MELON, 1), "confirmed once this round: not again"
    assert sign_needs_confirm(view, MELON, 0), "a confirmation of an earlier round is spent"
    g.do(Emit(seat=0, emoji=MELON))
    assert not sign_needs_confirm(g.view(0), MELON, None), "the floor shows it already"
    g.do(Emit(seat=0, emoji="🐢"))
    assert sign_needs_confirm(g.view(0), MELON, None)


def test_showing_the_sign_with_a_carre_never_asks() -> None:
    g = carre_game()
    g.open_round()
    g.make_carre(2, "A")
    g.do(SetFloor(seat=2, open=True))
    assert not sign_needs_confirm(g.view(2), MELON, None)
    assert sign_needs_confirm(g.view(0), MELON, None), "the partner's carré is not yours"


def test_showing_the_sign_asks_even_with_hints_off() -> None:
    """Like R16's reminder, the question protects a point: it is not a hint."""
    g = carre_game(hints=False)
    g.open_round()
    assert sign_needs_confirm(g.view(0), MELON, None)
    assert not sign_needs_confirm({**g.view(0), "phase": "signing"}, MELON, None)


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
