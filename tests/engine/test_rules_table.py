"""R29 (host, bots, the lobby) and R30 (what each player sees)."""

from __future__ import annotations

import json
import re

from engine import (
    EMOJIS,
    AddBot,
    CallQuatro,
    ChooseSign,
    FillBots,
    LeaveSeat,
    Phase,
    Ready,
    RemoveBot,
    SetFloor,
    StartMatch,
    Swap,
    TakeSeat,
)
from tests.engine.tables import SWAP_COOLDOWN, Game, deal


def lobby(players: int = 4) -> Game:
    g = Game(players, humans=[0], start=False)
    for s in range(1, players):
        g.do(RemoveBot(seat=0, target=s))
    return g


def test_r29_players_take_free_seats_one_each() -> None:
    g = lobby()
    (taken,) = g.do(TakeSeat(seat=2, player_id="ana", name="Ana"))
    assert taken.event.to_wire() == {
        "type": "seat",
        "seat": 2,
        "name": "Ana",
        "kind": "human",
        "connected": False,
    }
    assert g.table.seat_of("ana") == 2
    assert g.refuse(TakeSeat(seat=2, player_id="bo", name="Bo")).code == "seat_taken"
    assert g.refuse(TakeSeat(seat=3, player_id="ana", name="Ana")).code == "already_seated"
    assert g.refuse(TakeSeat(seat=4, player_id="bo", name="Bo")).code == "bad_seat"
    assert g.refuse(TakeSeat(seat=3, player_id="bo", name="  ")).code == "bad_message"
    assert g.refuse(TakeSeat(seat=3, player_id="", name="Bo")).code == "bad_message"


def test_r29_the_host_fills_empty_seats_with_bots_and_may_remove_them() -> None:
    g = lobby()
    assert g.refuse(AddBot(seat=1, target=1)).code == "bad_seat"  # nobody sits in seat 1
    g.do(TakeSeat(seat=1, player_id="ana", name="Ana"))
    assert g.refuse(AddBot(seat=1, target=2)).code == "not_host"
    g.do(AddBot(seat=0, target=2))
    assert g.table.seat_kind(2) == "bot"
    assert g.table.bot_seats() == (2,)
    assert g.refuse(AddBot(seat=0, target=2)).code == "seat_taken"
    assert g.refuse(RemoveBot(seat=1, target=2)).code == "not_host"
    assert g.refuse(RemoveBot(seat=0, target=1)).code == "not_a_bot"
    g.do(RemoveBot(seat=0, target=2))
    assert g.table.seat_kind(2) is None


def test_r29_the_host_fills_every_empty_seat_with_bots_at_once() -> None:
    g = lobby(6)
    g.do(TakeSeat(seat=2, player_id="ana", name="Ana"))
    g.do(AddBot(seat=0, target=4))
    assert g.refuse(FillBots(seat=2)).code == "not_host"
    filled = g.do(FillBots(seat=0))
    # One `seat` event per seat filled, in seat order; the human and the bot already there stay.
    assert [o.event.to_wire() for o in filled] == [
        {"type": "seat", "seat": s, "name": f"Bot {s + 1}", "kind": "bot", "connected": True}
        for s in (1, 3, 5)
    ]
    kinds = [g.table.seat_kind(s) for s in range(6)]
    assert kinds == ["human", "bot", "human", "bot", "bot", "bot"]
    assert g.table.seat_of("ana") == 2
    assert g.phase() is Phase.LOBBY  # the start stays the host's to call
    # Nothing left to fill: accepted, and nobody is told anything.
    assert g.do(FillBots(seat=0)) == []
    g.do(StartMatch(seat=0))
    assert g.refuse(FillBots(seat=0)).code == "wrong_phase"


def test_r29_a_player_may_leave_and_the_host_may_free_a_humans_seat() -> None:
    g = lobby()
    g.do(TakeSeat(seat=1, player_id="ana", name="Ana"))
    g.do(TakeSeat(seat=2, player_id="bo", name="Bo"))
    g.do(TakeSeat(seat=3, player_id="cy", name="Cy"))
    assert g.refuse(LeaveSeat(seat=1, target=2)).code == "not_host"
    g.do(LeaveSeat(seat=1, target=1))
    g.do(LeaveSeat(seat=0, target=2))
    assert g.table.seat_of("ana") is None
    assert g.table.seat_of("bo") is None
    assert g.refuse(LeaveSeat(seat=0, target=0)).code == "not_allowed"
    assert g.refuse(LeaveSeat(seat=0, target=1)).code == "seat_empty"


def test_r29_the_match_starts_only_once_every_seat_is_taken() -> None:
    g = lobby()
    g.do(AddBot(seat=0, target=1))
    g.do(AddBot(seat=0, target=2))
    assert g.refuse(StartMatch(seat=0)).code == "table_not_full"
    g.do(TakeSeat(seat=3, player_id="ana", name="Ana"))
    assert g.refuse(StartMatch(seat=3)).code == "not_host"
    g.do(StartMatch(seat=0))
    assert g.phase() is Phase.SIGNING


def test_r29_seats_change_only_in_the_lobby(game: Game) -> None:
    assert game.refuse(LeaveSeat(seat=1, target=1)).code == "wrong_phase"
    assert game.refuse(LeaveSeat(seat=0, target=1)).code == "wrong_phase"
    assert game.refuse(StartMatch(seat=0)).code == "wrong_phase"
    assert game.refuse(TakeSeat(seat=1, player_id="x", name="X")).code == "wrong_phase"


def test_r29_bots_play_by_the_same_cooldowns_and_never_vote() -> None:
    g = Game(4, humans=[0, 1])
    g.open_round()
    hand, center = g.hand(2), g.center()
    g.do(Swap(seat=2, card=hand[0]["id"], slot=0, expect=center[0]["id"]))
    hand, center = g.hand(2), g.center()
    refusal = g.refuse(Swap(seat=2, card=hand[1]["id"], slot=1, expect=center[1]["id"]))
    assert (refusal.code, refusal.retry_in) == ("cooldown", SWAP_COOLDOWN)
    g.do(SetFloor(seat=3, open=True))
    assert g.refuse(SetFloor(seat=3, open=False)).code == "floor_cooldown"


def test_r30_hands_travel_only_to_their_owner() -> None:
    g = Game(6)
    g.open_round()
    for o in g.log:
        if o.event.type == "round" and o.to.scope == "watch":
            assert o.event.to_wire()["hand"] == []  # the watchers' copy: no hand at all
        elif o.event.type == "round":
            assert o.to.scope == "seat"
            assert o.event.to_wire()["hand"] == g.hand(o.to.index)
    for s in range(6):
        mine = {c["id"] for c in g.hand(s)}
        for other in range(6):
            if other != s:
                theirs = {c["id"] for c in g.hand(other)}
                assert not theirs & mine
                assert not any(c["id"] in theirs for c in g.view(s)["hand"])


def test_r30_no_view_or_message_shows_another_hand_or_sign_before_the_reveal() -> None:
    g = Game(4, deals=[deal(4)])
    g.do(ChooseSign(seat=0, emoji=EMOJIS[11]))
    g.do(ChooseSign(seat=3, emoji=EMOJIS[12]))
    for s in range(4):
        g.do(Ready(seat=s))
    for s in range(4):
        view = {k: v for k, v in g.view(s).items() if k != "emojis"}
        text = json.dumps([view, *g.told(s)], ensure_ascii=False)
        for other in range(4):
            if other != s:
                for card in g.hand(other):
                    assert f'"{card["id"]}"' not in text
        foreign = EMOJIS[12] if s % 2 == 0 else EMOJIS[11]
        assert foreign not in text
    onlooker = g.view(None)
    assert onlooker["hand"] == []
    assert onlooker["sign"] is None
    assert onlooker["swap_ready_at"] is None
    assert onlooker["choice"] is None


def test_r30_after_the_reveal_everyone_sees_every_hand_and_sign() -> None:
    g = Game(4)
    g.do(ChooseSign(seat=0, emoji=EMOJIS[11]))
    g.do(ChooseSign(seat=1, emoji=EMOJIS[12]))
    g.open_round()
    hands = [g.hand(s) for s in range(4)]
    g.do(CallQuatro(seat=0))
    for s in range(4):
        shown = g.view(s)["last_reveal"]
        assert shown["hands"] == hands
        assert shown["signs"] == [EMOJIS[11], EMOJIS[12]]


def test_r30_the_summary_is_public() -> None:
    g = Game(4)
    g.open_round()
    text = json.dumps(g.table.summary())
    assert re.search(r'"c\d+"', text) is None
    assert "hand" not in text
    assert "sign" not in text
