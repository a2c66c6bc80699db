"""R5–R7: each team's sign, and the opening of a round."""

from __future__ import annotations

from engine import EMOJIS, ChooseSign, Disconnect, Phase, Ready
from tests.engine.tables import ROUND, SIGNING, Game, payloads, types

PINEAPPLE, ROCKET, TURTLE = EMOJIS[0], EMOJIS[1], EMOJIS[2]


def test_r05_the_sign_set_is_the_24_listed_emojis_in_order() -> None:
    expected = [
        0x1F34D, 0x1F680, 0x1F422, 0x1F335, 0x1F3B8, 0x1F419, 0x1F319, 0x1F349,
        0x1F99C, 0x1F525, 0x1F3A9, 0x1F41D, 0x1F33B, 0x1F344, 0x1F980, 0x1F418,
        0x1F3B2, 0x1F514, 0x1F34B, 0x1F438, 0x1F989, 0x1F308, 0x1F48E, 0x1F965,
    ]  # fmt: skip
    assert [ord(e) for e in EMOJIS] == expected
    assert all(len(e) == 1 for e in EMOJIS)
    assert Game(4).view(0)["emojis"] == list(EMOJIS)


def test_r05_the_first_partner_to_pick_fixes_the_sign_for_the_team(game: Game) -> None:
    out = game.do(ChooseSign(seat=0, emoji=ROCKET))
    assert payloads(out, "sign") == [{"type": "sign", "emoji": ROCKET, "by": 0}]
    assert game.refuse(ChooseSign(seat=2, emoji=TURTLE)).code == "sign_taken"
    assert game.refuse(ChooseSign(seat=0, emoji=TURTLE)).code == "sign_taken"
    assert game.view(2)["sign"] == ROCKET
    assert game.view(0)["sign"] == ROCKET


def test_r05_the_partner_sees_the_sign_and_nobody_else_does(game: Game) -> None:
    game.do(ChooseSign(seat=1, emoji=PINEAPPLE))
    assert game.told(3, "sign") == [{"type": "sign", "emoji": PINEAPPLE, "by": 1}]
    for other in (0, 2):
        assert game.told(other, "sign") == []
        assert game.view(other)["sign"] is None
    assert game.view(None)["sign"] is None


def test_r05_a_sign_must_be_one_of_the_24(game: Game) -> None:
    for bad in ("A", "🙂", "", "🍍🍍", 7, None):
        assert game.refuse(ChooseSign(seat=0, emoji=bad)).code == "bad_emoji"  # type: ignore[arg-type]


def test_r05_signs_are_chosen_only_during_signing(playing: Game) -> None:
    assert playing.refuse(ChooseSign(seat=0, emoji=ROCKET)).code == "wrong_phase"


def test_r06_the_round_opens_when_every_connected_human_is_ready(game: Game) -> None:
    for s in (0, 1, 2):
        game.do(Ready(seat=s))
        assert game.phase() is Phase.SIGNING
    out = game.do(Ready(seat=3))
    assert game.phase() is Phase.PLAYING
    # One per seat, with its hand, and one with no hand for whoever watches.
    assert [o.to.scope for o in out if o.event.type == "round"] == ["seat"] * 4 + ["watch"]


def test_r06_the_round_opens_thirty_seconds_after_signing_began() -> None:
    g = Game(4)
    began = g.now
    (signing,) = payloads(g.log, "signing")
    assert signing["deadline"] == began + SIGNING
    g.do(Ready(seat=0))
    g.wait(SIGNING - 1)
    assert g.phase() is Phase.SIGNING
    out = g.wait(1)
    assert g.phase() is Phase.PLAYING
    assert {o.at for o in out} == {began + SIGNING}
    (opened, *_) = payloads(out, "round")
    assert opened["deadline"] == began + SIGNING + ROUND


def test_r06_bots_are_always_ready() -> None:
    g = Game(4, humans=[0, 1])
    assert payloads(g.log, "ready") == [{"type": "ready", "seat": 2}, {"type": "ready", "seat": 3}]
    g.do(Ready(seat=0))
    g.do(Ready(seat=1))
    assert g.phase() is Phase.PLAYING


def test_r06_disconnected_players_are_not_waited_for() -> None:
    g = Game(4, connected=[0, 1, 2])
    for s in (0, 1, 2):
        g.do(Ready(seat=s))
    assert g.phase() is Phase.PLAYING
    assert len(g.hand(3)) == 4, "the absent player is dealt a hand all the same"


def test_r06_a_player_who_leaves_during_signing_is_no_longer_waited_for(game: Game) -> None:
    for s in (0, 1, 2):
        game.do(Ready(seat=s))
    game.do(Disconnect(seat=3))
    assert game.phase() is Phase.PLAYING


def test_r06_with_no_connected_human_the_round_opens_at_once() -> None:
    g = Game(4, humans=[0], connected=[])
    assert g.phase() is Phase.PLAYING
    assert types(g.log)[-4:] == ["round"] * 4


def test_r06_saying_ready_cannot_be_taken_back_and_twice_changes_nothing(game: Game) -> None:
    assert types(game.do(Ready(seat=0))) == ["ready"]
    assert game.do(Ready(seat=0)) == []
    assert game.view(1)["seats"][0]["ready"] is True


def test_r06_a_team_without_a_sign_gets_one_drawn_and_told_to_its_players(game: Game) -> None:
    game.do(ChooseSign(seat=0, emoji=TURTLE))
    game.open_round()
    drawn = [o for o in game.log if o.event.type == "sign" and o.event.to_wire()["by"] is None]
    assert len(drawn) == 1
    (notice,) = drawn
    assert (notice.to.scope, notice.to.index) == ("team", 1)
    emoji = notice.event.to_wire()["emoji"]
    assert emoji in EMOJIS
    assert game.view(1)["sign"] == emoji == game.view(3)["sign"]
    assert game.view(0)["sign"] == TURTLE


def test_r06_nobody_holds_cards_during_signing(game: Game) -> None:
    for s in range(4):
        assert game.hand(s) == []
    assert game.center() == []
    assert game.told(0, "round") == []


def test_r07_signs_are_chosen_afresh_every_round() -> None:
    g = Game(4, humans=[0, 1, 2, 3])
    g.do(ChooseSign(seat=0, emoji=ROCKET))
    g.open_round()
    g.wait(ROUND)  # void round (R22), then the pause (R23)
    assert g.phase() is Phase.PAUSE
    g.wait(30_000)
    assert g.phase() is Phase.SIGNING
    assert g.view(0)["sign"] is None
    assert g.view(2)["sign"] is None
    g.do(ChooseSign(seat=2, emoji=ROCKET))  # the same emoji again is allowed
    assert g.view(0)["sign"] == ROCKET


def test_r07_two_teams_may_hold_the_same_emoji(game: Game) -> None:
    game.do(ChooseSign(seat=0, emoji=ROCKET))
    game.do(ChooseSign(seat=1, emoji=ROCKET))
    assert game.view(0)["sign"] == game.view(1)["sign"] == ROCKET
