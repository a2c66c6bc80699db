"""R15–R18: Quatro!, Contre!, and the first call ending the round."""

from __future__ import annotations

from typing import Any

import pytest

from engine import CallContre, CallQuatro, ChooseSign, Emit, Phase, SetFloor
from engine.hints import hint_for
from tests.engine.tables import Game, deal, payloads


def reveal(g: Game) -> dict[str, Any]:
    (out,) = payloads(g.log, "reveal")
    return out


def game_with_carre(players: int, seat: int, rank: str = "K") -> Game:
    g = Game(players, deals=[deal(players, {seat: rank})])
    g.open_round()
    g.make_carre(seat, rank)
    return g


def test_r15_quatro_on_the_partners_carre_scores_for_the_callers_team() -> None:
    g = game_with_carre(4, seat=1)
    g.do(CallQuatro(seat=3))
    r = reveal(g)
    assert (r["reason"], r["by"], r["target_team"], r["correct"]) == ("quatro", 3, 1, True)
    assert r["scored"] == [1]
    assert g.table.scores == (0, 1)


def test_r15_quatro_looks_at_the_partners_hand_never_the_callers() -> None:
    g = game_with_carre(4, seat=1)
    g.do(CallQuatro(seat=1))  # seat 1 holds the carré; partner seat 3 does not
    r = reveal(g)
    assert r["correct"] is False
    assert r["scored"] == [0]
    assert g.table.scores == (1, 0)


def test_r15_a_wrong_quatro_gives_every_other_team_a_point() -> None:
    g = Game(8, deals=[deal(8)])
    g.open_round()
    g.do(CallQuatro(seat=2))
    assert reveal(g)["scored"] == [0, 1, 3]
    assert g.table.scores == (1, 1, 0, 1)


@pytest.mark.parametrize(("players", "caller"), [(4, 0), (4, 2), (6, 4)])
def test_r15_when_both_partners_hold_a_carre_and_show_the_sign_either_call_is_right(
    players: int, caller: int
) -> None:
    """The both-carré round: each partner completes a carré and shows the team's sign. Each is
    told to call (the hint is the partner's sign, not "wait"), and whichever calls scores for
    the team: the call judges the partner's hand, which holds a carré (R15, R18)."""
    team = caller % (players // 2)
    holders = {team: "K", team + players // 2: "A"}
    g = Game(players, deals=[deal(players, holders)])
    g.do(ChooseSign(seat=team, emoji="🦉"))
    g.open_round()
    for seat, rank in holders.items():
        g.make_carre(seat, rank)
    for seat in holders:
        g.do(SetFloor(seat=seat, open=True))
        g.do(Emit(seat=seat, emoji="🦉"))
    assert [hint_for(g.view(s), s) for s in holders] == ["partner_sign", "partner_sign"]
    g.do(CallQuatro(seat=caller))
    r = reveal(g)
    assert (r["reason"], r["by"], r["correct"]) == ("quatro", caller, True)
    assert r["scored"] == [team]
    assert r["carres"] == sorted(holders)
    assert g.table.scores[team] == 1
    assert sum(g.table.scores) == 1
    # The round is over: the other partner's call comes too late (R18).
    other = next(s for s in holders if s != caller)
    assert g.refuse(CallQuatro(seat=other)).code == "wrong_phase"


def test_r16_a_call_by_a_carre_holder_is_judged_by_r15_all_the_same() -> None:
    g = game_with_carre(6, seat=4, rank="9")
    g.do(CallQuatro(seat=4))  # the client's reminder was confirmed: the server just judges
    r = reveal(g)
    assert r["correct"] is False
    assert r["carres"] == [4]
    assert g.table.scores == (1, 0, 1)


def test_r17_contre_on_a_team_holding_a_carre_scores_for_the_caller() -> None:
    g = game_with_carre(4, seat=3)
    g.do(CallContre(seat=0))  # at 4 players the team may be omitted
    r = reveal(g)
    assert (r["reason"], r["by"], r["target_team"], r["correct"]) == ("contre", 0, 1, True)
    assert g.table.scores == (1, 0)


def test_r17_either_player_of_the_accused_team_may_hold_the_carre() -> None:
    for holder in (1, 4):
        g = game_with_carre(6, seat=holder)
        g.do(CallContre(seat=0, team=1))
        assert reveal(g)["correct"] is True
        assert g.table.scores == (1, 0, 0)


def test_r17_a_wrong_contre_scores_for_the_accused_even_if_another_team_held_one() -> None:
    g = game_with_carre(6, seat=2)
    g.do(CallContre(seat=0, team=1))
    r = reveal(g)
    assert (r["correct"], r["scored"], r["carres"]) == (False, [1], [2])
    assert g.table.scores == (0, 1, 0)


def test_r17_the_accused_must_be_one_opposing_team() -> None:
    g = Game(6)
    g.open_round()
    for team in (None, 0, 3, -1, True, "1", 1.0):
        refusal = g.refuse(CallContre(seat=3, team=team))  # type: ignore[arg-type]
        assert refusal.code == "bad_team", team
    four = Game(4)
    four.open_round()
    assert four.refuse(CallContre(seat=0, team=0)).code == "bad_team"
    four.do(CallContre(seat=0, team=1))


def test_r18_the_first_call_ends_the_round_and_later_calls_are_refused() -> None:
    g = game_with_carre(4, seat=0)
    g.do(CallQuatro(seat=1))  # wrong: seat 3 holds no carré
    assert g.phase() is Phase.PAUSE
    assert g.refuse(CallQuatro(seat=2)).code == "wrong_phase"
    assert g.refuse(CallContre(seat=1)).code == "wrong_phase"
    assert g.table.scores == (1, 0)


def test_r18_all_hands_are_shown_to_everyone_with_each_carre_marked() -> None:
    g = Game(6, deals=[deal(6, {0: "A", 4: "Q"})])
    g.open_round()
    g.make_carre(0, "A")
    g.make_carre(4, "Q")
    hands = [g.hand(s) for s in range(6)]
    out = g.do(CallContre(seat=1, team=0))
    (shown,) = [o for o in out if o.event.type == "reveal"]
    assert shown.to.scope == "all"
    r = shown.event.to_wire()
    assert r["hands"] == hands
    assert r["carres"] == [0, 4]
    assert r["scores"] == [0, 1, 0]
    assert r["signs"] == [g.view(s)["sign"] for s in range(3)]
    assert g.view(5)["last_reveal"] == r
