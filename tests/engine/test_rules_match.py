"""R22–R28: the void round, the pause, absent players, and winning the match."""

from __future__ import annotations

import itertools

from engine import (
    EMOJIS,
    CallContre,
    CallQuatro,
    ChooseSign,
    Connect,
    Disconnect,
    Emit,
    NextRound,
    Phase,
    Rematch,
    RequestVote,
    SetFloor,
    Swap,
)
from tests.engine.tables import (
    FLOOR_COOLDOWN,
    PAUSE,
    ROUND,
    SIGNING,
    SWAP_COOLDOWN,
    Game,
    deal,
    payloads,
    types,
)


def test_r22_a_round_nobody_calls_within_3_minutes_is_void(playing: Game) -> None:
    opened = playing.now
    hands = [playing.hand(s) for s in range(4)]
    assert playing.wait(ROUND - 1) == []
    out = playing.wait(1)
    (r,) = payloads(out, "reveal")
    assert r["reason"] == "timeout"
    assert (r["by"], r["target_team"], r["correct"], r["scored"]) == (None, None, None, [])
    assert r["hands"] == hands
    assert playing.table.scores == (0, 0)
    assert {o.at for o in out} == {opened + ROUND}


def test_r23_a_30_s_pause_follows_each_round_then_signing(playing: Game) -> None:
    out = playing.do(CallQuatro(seat=0))
    assert types(out)[-2:] == ["reveal", "pause"]
    assert payloads(out, "pause") == [{"type": "pause", "deadline": playing.now + PAUSE}]
    assert playing.phase() is Phase.PAUSE
    shown = playing.view(1)["last_reveal"]
    assert shown is not None
    assert shown["reason"] == "quatro"
    playing.wait(PAUSE - 1)
    assert playing.phase() is Phase.PAUSE
    out = playing.wait(1)
    assert payloads(out, "signing") == [
        {"type": "signing", "round": 2, "deadline": playing.now + SIGNING}
    ]


def test_r23_the_host_may_start_the_next_round_earlier(playing: Game) -> None:
    playing.do(CallQuatro(seat=0))
    playing.wait(1_000)
    assert playing.refuse(NextRound(seat=1)).code == "not_host"
    out = playing.do(NextRound(seat=0))
    assert payloads(out, "signing")[0]["round"] == 2
    assert playing.refuse(NextRound(seat=0)).code == "wrong_phase"


def test_r23_the_host_may_not_skip_anything_but_the_pause(game: Game) -> None:
    assert game.refuse(NextRound(seat=0)).code == "wrong_phase"
    game.open_round()
    assert game.refuse(NextRound(seat=0)).code == "wrong_phase"


def test_r23_cooldowns_and_floors_start_afresh_every_round(playing: Game) -> None:
    hand, center = playing.hand(0), playing.center()
    playing.do(Swap(seat=0, card=hand[0]["id"], slot=0, expect=center[0]["id"]))
    playing.do(SetFloor(seat=1, open=True))
    playing.do(CallQuatro(seat=2))
    playing.do(NextRound(seat=0))
    playing.open_round()
    view = playing.view(0)
    assert view["swap_ready_at"] <= playing.now
    assert view["floor_ready_at"] <= playing.now
    assert all(row["floor"] is False and row["emoji"] is None for row in view["seats"])
    hand, center = playing.hand(0), playing.center()
    playing.do(Swap(seat=0, card=hand[0]["id"], slot=0, expect=center[0]["id"]))
    playing.do(SetFloor(seat=1, open=True))


def test_r24_a_disconnected_player_keeps_seat_and_hand(playing: Game) -> None:
    hand = playing.hand(2)
    out = playing.do(Disconnect(seat=2))
    assert payloads(out, "seat") == [
        {"type": "seat", "seat": 2, "name": "Player 2", "kind": "human", "connected": False}
    ]
    playing.wait(SWAP_COOLDOWN * 10)
    assert playing.hand(2) == hand
    assert playing.view(0)["seats"][2]["kind"] == "human"


def test_r24_the_partner_may_still_call_quatro_on_a_disconnected_hand() -> None:
    g = Game(4, deals=[deal(4, {1: "J"})])
    g.open_round()
    g.make_carre(1, "J")
    g.do(Disconnect(seat=1))
    g.do(CallQuatro(seat=3))
    (r,) = payloads(g.log, "reveal")
    assert r["correct"] is True
    assert g.table.scores == (0, 1)


def test_r24_opponents_may_still_call_contre_on_a_disconnected_team() -> None:
    g = Game(6, deals=[deal(6, {5: "8"})])
    g.open_round()
    g.make_carre(5, "8")
    g.do(Disconnect(seat=5))
    g.do(Disconnect(seat=2))
    g.do(CallContre(seat=0, team=2))
    assert g.table.scores == (1, 0, 0)


def test_r24_the_round_opens_without_them_and_ends_after_3_minutes() -> None:
    g = Game(4, connected=[0, 1, 2])
    g.open_round()
    opened = g.now
    g.wait(ROUND)
    (r,) = payloads(g.log, "reveal")
    assert r["reason"] == "timeout"
    assert g.log[-1].at == opened + ROUND


def test_r25_a_player_who_comes_back_sees_the_table_as_it_stands() -> None:
    g = Game(4, deals=[deal(4, {0: "Q"})])
    g.do(ChooseSign(seat=2, emoji=EMOJIS[9]))
    g.open_round()
    g.do(Disconnect(seat=0))
    before = g.view(0)
    g.wait(3_000)
    hand, center = g.hand(1), g.center()
    g.do(Swap(seat=1, card=hand[0]["id"], slot=3, expect=center[3]["id"]))
    g.do(SetFloor(seat=3, open=True))
    g.do(Emit(seat=3, emoji=EMOJIS[1]))
    out = g.do(Connect(seat=0))
    assert payloads(out, "seat")[0]["connected"] is True
    back = g.view(0)
    assert back["hand"] == before["hand"]
    assert back["center"] == g.center() != before["center"]
    assert back["sign"] == EMOJIS[9]
    assert back["scores"] == [0, 0]
    assert back["deadline"] == before["deadline"]
    assert back["phase"] == "playing"
    assert back["seats"][3]["floor"] is True
    assert back["seats"][3]["emoji"] == EMOJIS[1]
    assert back["seats"][0]["connected"] is True
    # and may play on at once
    g.make_carre(0, "Q")


def test_r25_the_view_keeps_the_players_own_clocks(playing: Game) -> None:
    hand, center = playing.hand(3), playing.center()
    playing.do(Swap(seat=3, card=hand[0]["id"], slot=2, expect=center[2]["id"]))
    playing.do(SetFloor(seat=3, open=True))
    playing.do(Disconnect(seat=3))
    playing.wait(500)
    playing.do(Connect(seat=3))
    view = playing.view(3)
    assert view["swap_ready_at"] == playing.now - 500 + SWAP_COOLDOWN
    assert view["floor_ready_at"] == playing.now - 500 + FLOOR_COOLDOWN
    assert view["seats"][3]["floor"] is False, "the floor closed when the player left (R13)"


def test_r26_a_point_won_is_never_taken_back() -> None:
    g = Game(4, humans=[0], connected=[])
    history = [g.table.scores]
    for caller in (0, 1, 1, 2, 3, 0, 1, 3):
        g.do(CallQuatro(seat=caller))  # all wrong: partners hold no carré
        history.append(g.table.scores)
        if g.phase() is Phase.OVER:
            break
        g.do(NextRound(seat=0))
    for earlier, later in itertools.pairwise(history):
        assert all(b >= a for a, b in zip(earlier, later, strict=True))


def test_r27_a_wrong_quatro_scores_for_several_teams_at_once() -> None:
    g = Game(6, humans=[0], connected=[])
    out = g.do(CallQuatro(seat=4))
    (r,) = payloads(out, "reveal")
    assert r["scored"] == [0, 2]
    assert g.table.scores == (1, 0, 1)


def test_r28_the_match_ends_as_soon_as_a_team_reaches_5_with_no_pause() -> None:
    g = Game(4, humans=[0], connected=[])
    for _ in range(4):
        g.do(CallQuatro(seat=1))  # wrong: team 0 scores
        g.do(NextRound(seat=0))
    assert g.table.scores == (4, 0)
    out = g.do(CallQuatro(seat=3))
    assert types(out) == ["reveal", "over"]
    assert payloads(out, "over") == [{"type": "over", "winners": [0], "scores": [5, 0]}]
    assert g.phase() is Phase.OVER
    assert g.table.next_deadline() is None
    assert g.wait(10 * ROUND) == []
    assert g.view(1)["winners"] == [0]
    assert g.refuse(NextRound(seat=0)).code == "wrong_phase"
    assert g.refuse(RequestVote(seat=0)).code == "wrong_phase"


def test_r28_teams_reaching_the_best_score_together_win_together() -> None:
    g = Game(6, humans=[0], connected=[])
    for _ in range(4):
        g.do(CallQuatro(seat=2))  # wrong: teams 0 and 1 score
        g.do(NextRound(seat=0))
    out = g.do(CallQuatro(seat=5))
    assert payloads(out, "over") == [{"type": "over", "winners": [0, 1], "scores": [5, 5, 0]}]


def test_r28_the_host_may_start_a_new_match_with_the_same_seats() -> None:
    g = Game(4, humans=[0], connected=[])
    for _ in range(5):
        if g.phase() is Phase.PAUSE:
            g.do(NextRound(seat=0))
        g.do(CallQuatro(seat=1))
    assert g.phase() is Phase.OVER
    assert g.refuse(Rematch(seat=1)).code == "not_host"
    g.do(Rematch(seat=0))
    assert g.table.scores == (0, 0)
    assert g.table.round == 1
    assert g.view(0)["winners"] is None
