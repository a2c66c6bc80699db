"""R1–R4: teams, the deck, the deal, and no head start."""

from __future__ import annotations

from collections import Counter

import pytest

from engine import DealSpec, ScenarioError, TableConfig, deck_for, partner, team_of, team_seats
from tests.engine.tables import Game, deal, payloads


@pytest.mark.parametrize("players", [4, 6, 8])
def test_r01_partners_sit_opposite(players: int) -> None:
    half = players // 2
    for s in range(players):
        assert partner(s, players) == (s + half) % players
        assert partner(partner(s, players), players) == s
        assert team_of(s, players) == team_of(partner(s, players), players)
    for k in range(half):
        assert team_seats(k, players) == (k, k + half)
    rows = Game(players, start=False).view(0)["seats"]
    assert [row["team"] for row in rows] == [s % half for s in range(players)]


@pytest.mark.parametrize("players", [0, 2, 3, 5, 7, 10])
def test_r01_only_four_six_or_eight_players(players: int) -> None:
    with pytest.raises(ScenarioError):
        TableConfig(players=players)


@pytest.mark.parametrize(
    ("players", "ranks"),
    [
        (4, ["A", "K", "Q", "J", "10"]),
        (6, ["A", "K", "Q", "J", "10", "9", "8"]),
        (8, ["A", "K", "Q", "J", "10", "9", "8", "7", "6"]),
    ],
)
def test_r02_deck_has_four_cards_of_each_of_n_plus_one_ranks(
    players: int, ranks: list[str]
) -> None:
    deck = deck_for(players)
    assert len(deck) == 4 * (players + 1)
    assert Counter(card.rank for card in deck) == {rank: 4 for rank in ranks}
    assert len({card.id for card in deck}) == len(deck)
    for rank in ranks:
        assert {card.suit for card in deck if card.rank == rank} == {"S", "H", "D", "C"}


@pytest.mark.parametrize("players", [4, 6, 8])
def test_r03_each_player_gets_four_cards_and_four_lie_in_the_centre(players: int) -> None:
    g = Game(players, seed=players)
    g.open_round()
    hands = [g.hand(s) for s in range(players)]
    center = g.center()
    assert all(len(hand) == 4 for hand in hands)
    assert len(center) == 4
    ids = [card["id"] for hand in hands for card in hand] + [card["id"] for card in center]
    assert sorted(ids) == sorted(card.id for card in deck_for(players))


@pytest.mark.parametrize("players", [4, 6, 8])
def test_r04_no_dealt_hand_holds_three_of_a_rank(players: int) -> None:
    thrown_away = 0
    for seed in range(40):
        g = Game(players, seed=seed)
        g.open_round()
        for s in range(players):
            assert max(Counter(g.hand_ranks(s)).values()) <= 2
        (first, *_) = payloads(g.log, "round")
        thrown_away += first["redeals"]
    assert thrown_away > 0, "some deals should have been thrown away and counted"


def test_r04_the_notice_counts_thrown_deals_and_never_names_a_rank() -> None:
    g = Game(4, seed=3)
    g.open_round()
    for s in range(4):
        (opened,) = g.told(s, "round")
        assert set(opened) == {"type", "round", "hand", "center", "deadline", "redeals"}
        assert isinstance(opened["redeals"], int)
        assert opened["redeals"] >= 0


def test_r04_a_rigged_deal_with_three_of_a_rank_is_refused() -> None:
    good = deal(4)
    three_aces = DealSpec(
        hands=(("A", "A", "A", "K"), ("A", "K", "K", "Q"), *good.hands[2:]), center=good.center
    )
    with pytest.raises(ScenarioError):
        TableConfig(players=4, deals=(three_aces,))


def test_r04_a_rigged_carre_is_refused_too() -> None:
    four_aces = DealSpec(
        hands=(
            ("A", "A", "A", "A"),
            ("K", "K", "Q", "Q"),
            ("K", "K", "Q", "J"),
            ("Q", "J", "J", "10"),
        ),
        center=("J", "10", "10", "10"),
    )
    with pytest.raises(ScenarioError):
        TableConfig(players=4, deals=(four_aces,))


def test_r04_a_rigged_deal_with_the_wrong_cards_is_refused() -> None:
    good = deal(4)
    wrong_size = DealSpec(hands=good.hands[:3], center=good.center)
    foreign_rank = DealSpec(hands=good.hands, center=("9", *good.center[1:]))
    short_centre = DealSpec(hands=good.hands, center=good.center[:3])
    for spec in (wrong_size, foreign_rank, short_centre):
        with pytest.raises(ScenarioError):
            TableConfig(players=4, deals=(spec,))


def test_r04_a_carre_is_made_in_play_not_dealt() -> None:
    g = Game(4, deals=[deal(4, {1: "K"})])
    g.open_round()
    assert g.hand_ranks(1).count("K") == 2
    g.make_carre(1, "K")
    assert g.hand_ranks(1) == ["K"] * 4


@pytest.mark.parametrize(
    "config",
    [
        {"players": 4.0},
        {"players": "4"},
        {"players": True},
        {"players": 4, "seed": "7"},
        {"players": 4, "seed": 1.5},
        {"players": 4, "time_scale": True},
        {"players": 4, "time_scale": "0.5"},
        {"players": 4, "time_scale": 0},
        {"players": 4, "time_scale": float("nan")},
        {"players": 4, "deals": ({"hands": [], "center": []},)},
        {"players": 4, "deals": (DealSpec(hands=None, center=None),)},  # type: ignore[arg-type]
        {"players": 4, "deals": (DealSpec(hands=(("A",) * 4,) * 4, center=("A", 1, 2, 3)),)},  # type: ignore[arg-type]
        {"players": 4, "deals": (DealSpec(hands=("AKQJ",) * 4, center=("A", "K", "Q", "J")),)},  # type: ignore[arg-type]
        {"players": 4, "deals": "AKQJ"},
    ],
)
def test_r04_a_malformed_scenario_is_refused_as_a_scenario_error(config: dict[str, object]) -> None:
    with pytest.raises(ScenarioError):
        TableConfig(**config)  # type: ignore[arg-type]
