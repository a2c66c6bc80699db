"""Hints for newcomers (engine.hints): worked out from the seat's own view, so they can only say
what that seat already sees (R30), and gone when the host turns them off."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine import (
    CastVote,
    ChangeSettings,
    ChooseSign,
    Emit,
    RequestVote,
    SetFloor,
    StartMatch,
    Swap,
    Table,
    team_seats,
)
from engine.hints import (
    carre_possible,
    contre_needs_confirm,
    hint_for,
    partner_shows_sign,
    quatro_needs_confirm,
    sign_needs_confirm,
)
from tests.engine.tables import FLOOR_COOLDOWN, SWAP_COOLDOWN, Game, deal

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


# -- calls that can only lose (a second tap before sending them) -------------------------------


def take_one(g: Game, seat: int, rank: str, give: str | None = None) -> None:
    """`seat` takes a card of `rank` from the centre, giving a card of `give` (default: the
    first of its hand that is not of `rank`); the swap cooldown is waited out first."""
    slot, card = next((i, c) for i, c in enumerate(g.center()) if c["rank"] == rank)
    mine = next(c for c in g.hand(seat) if (c["rank"] == give if give else c["rank"] != rank))
    ready_at = g.view(seat)["swap_ready_at"]
    if ready_at > g.now:
        g.wait_until(ready_at)
    g.do(Swap(seat=seat, card=mine["id"], slot=slot, expect=card["id"]))


def test_r17_a_contre_asks_until_the_accused_took_two_of_a_rank() -> None:
    """R4: no hand is dealt three of a rank, so a carré takes two cards of its rank from the
    centre, in plain sight (R9). Until one of the accused team did, the Contre! can only lose."""
    g = carre_game()
    g.open_round()
    assert all(contre_needs_confirm(g.view(s), 0) for s in (1, 3))
    assert contre_needs_confirm(g.view(0), 1)
    take_one(g, 2, "A")
    assert contre_needs_confirm(g.view(1), 0), "one ace taken: three at most"
    take_one(g, 2, "A")
    assert g.hand_ranks(2) == ["A"] * 4
    # Every seat sees the same public record, and an onlooker too.
    assert {str(g.view(s)["net_taken"]) for s in (0, 1, 2, 3, None)} == {
        str(g.view(None)["net_taken"])
    }
    assert g.view(None)["net_taken"][2]["A"] == 2
    assert not contre_needs_confirm(g.view(1), 0)
    assert not contre_needs_confirm(g.view(3), 0)
    assert contre_needs_confirm(g.view(0), 1), "the other team took nothing"
    assert not contre_needs_confirm({**g.view(1), "phase": "pause"}, 0), "nothing to call"


def test_r17_an_ace_put_back_counts_against_the_two_taken() -> None:
    g = carre_game()
    g.open_round()
    take_one(g, 2, "A")
    take_one(g, 2, "A")
    take_one(g, 2, "J", give="A")  # an ace back in the centre: three at most in that hand
    assert g.view(1)["net_taken"][2]["A"] == 1
    assert max(g.view(1)["net_taken"][2].values()) == 1
    assert contre_needs_confirm(g.view(1), 0)


def test_r21_a_reshuffle_starts_the_record_again() -> None:
    g = carre_game()
    g.open_round()
    g.make_carre(2, "A")
    assert not contre_needs_confirm(g.view(1), 0)
    g.do(RequestVote(seat=1))
    for s in (0, 2, 3):
        g.do(CastVote(seat=s, accept=True))
    assert g.view(1)["reshuffled"]
    assert g.view(1)["net_taken"] == [{}, {}, {}, {}]
    assert contre_needs_confirm(g.view(1), 0)


def test_r16_r15_a_quatro_asks_while_the_partners_floor_shows_nothing() -> None:
    g = carre_game()
    g.open_round()
    assert quatro_needs_confirm(g.view(0), 0), "no floor"
    g.do(SetFloor(seat=2, open=True))
    assert quatro_needs_confirm(g.view(0), 0), "a floor with nothing on it yet"
    g.do(Emit(seat=2, emoji="🐢"))
    assert not quatro_needs_confirm(g.view(0), 0), "the partner shows something: a player's call"
    g.do(Emit(seat=2, emoji=MELON))
    g.wait(5_000)
    assert partner_shows_sign(g.view(0), 0)
    assert not quatro_needs_confirm(g.view(0), 0)
    assert not quatro_needs_confirm({**g.view(0), "phase": "signing"}, 0)


def test_r16_a_carre_of_your_own_is_left_to_the_reminder() -> None:
    g = carre_game()
    g.open_round()
    g.make_carre(2, "A")
    assert not quatro_needs_confirm(g.view(2), 2), "R16's reminder asks instead"
    assert quatro_needs_confirm(g.view(0), 0)


def test_the_record_survives_a_snapshot() -> None:
    g = carre_game()
    g.open_round()
    take_one(g, 2, "A")
    restored = Table.from_snapshot(g.table.to_snapshot())
    assert restored.view(1)["net_taken"] == g.view(1)["net_taken"]
    assert g.view(1)["net_taken"][2]["A"] == 1
    old = g.table.to_snapshot()
    for seat in old["state"]["seats"]:
        del seat["net_taken"]  # saved before the record was kept
    assert Table.from_snapshot(old).view(1)["net_taken"] == [{}, {}, {}, {}]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.sampled_from([4, 6, 8]),
    seed=st.integers(0, 10_000),
    moves=st.lists(
        st.tuples(st.integers(0, 7), st.integers(0, 3), st.booleans()), min_size=20, max_size=120
    ),
)
def test_r4_a_team_holding_a_carre_is_never_one_a_contre_can_only_lose_against(
    players: int, seed: int, moves: list[tuple[int, int, bool]]
) -> None:
    """Random deals and swaps, some random, some a collector's (take the centre's card of the
    rank held most, give one of the rank held least): whenever a seat holds a carré, its team
    is one the record says may hold one."""
    g = Game(players, seed=seed)
    g.open_round()
    held = 0
    for who, slot, collect in moves:
        seat = who % players
        hand = g.hand(seat)
        counts = Counter(c["rank"] for c in hand)
        center = g.center()
        if collect:
            slot = max(range(4), key=lambda i: (counts[center[i]["rank"]], -i))
            give = min(hand, key=lambda c: counts[c["rank"]])
        else:
            give = hand[slot]
        ready_at = g.view(seat)["swap_ready_at"]
        if ready_at > g.now:
            g.wait_until(ready_at)
        if g.phase().value != "playing":
            break
        g.do(Swap(seat=seat, card=give["id"], slot=slot, expect=center[slot]["id"]))
        view = g.view(None)
        for team in range(players // 2):
            for s in team_seats(team, players):
                if len(set(g.hand_ranks(s))) == 1:
                    held += 1
                    assert carre_possible(view, team), (s, g.hand_ranks(s), view["net_taken"])
        g.wait(SWAP_COOLDOWN // 4)
    event("a carré held" if held else "no carré held")
