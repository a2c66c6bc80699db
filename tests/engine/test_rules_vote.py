"""R19–R21: the reshuffle vote, its limits, and the round after a reshuffle."""

from __future__ import annotations

from collections import Counter

from engine import (
    EMOJIS,
    CallQuatro,
    CastVote,
    ChooseSign,
    Disconnect,
    Emit,
    Phase,
    RequestVote,
    SetFloor,
    Swap,
)
from tests.engine.tables import (
    EMISSION_PERIOD,
    ROUND,
    SWAP_COOLDOWN,
    VOTE,
    VOTE_GAP,
    Game,
    deal,
    payloads,
    types,
)


def test_r19_the_voters_are_the_other_connected_humans() -> None:
    g = Game(6, humans=[0, 1, 2, 4], connected=[0, 1, 2, 4])
    g.do(Disconnect(seat=4))
    g.open_round()
    (started,) = payloads(g.do(RequestVote(seat=1)), "vote")
    assert started == {"type": "vote", "by": 1, "voters": [0, 2], "deadline": g.now + VOTE}
    assert g.view(3)["vote"]["voters"] == [0, 2]


def test_r19_any_player_may_ask_even_a_bot() -> None:
    g = Game(4, humans=[0, 2])
    g.open_round()
    (started,) = payloads(g.do(RequestVote(seat=1)), "vote")
    assert started["voters"] == [0, 2]
    g.do(CastVote(seat=0, accept=True))
    assert payloads(g.do(CastVote(seat=2, accept=True)), "vote_result")[0]["passed"] is True


def test_r19_the_last_acceptance_passes_the_vote(playing: Game) -> None:
    playing.do(RequestVote(seat=0))
    playing.do(CastVote(seat=1, accept=True))
    playing.do(CastVote(seat=2, accept=True))
    assert payloads(playing.log, "reshuffled") == []
    out = playing.do(CastVote(seat=3, accept=True))
    assert types(out) == ["voted", "vote_result"] + ["reshuffled"] * 5  # 4 seats, the watchers
    assert payloads(out, "vote_result") == [{"type": "vote_result", "passed": True}]


def test_r19_the_first_refusal_ends_the_vote(playing: Game) -> None:
    playing.do(RequestVote(seat=0))
    playing.do(CastVote(seat=1, accept=True))
    out = playing.do(CastVote(seat=2, accept=False))
    assert types(out) == ["voted", "vote_result"]
    assert payloads(out, "vote_result") == [{"type": "vote_result", "passed": False}]
    assert playing.view(0)["vote"] is None
    assert playing.refuse(CastVote(seat=3, accept=True)).code == "wrong_phase"


def test_r19_silence_is_refusal(playing: Game) -> None:
    playing.do(RequestVote(seat=0))
    playing.do(CastVote(seat=1, accept=True))
    playing.do(CastVote(seat=2, accept=True))
    assert playing.wait(VOTE - 1) == []
    out = playing.wait(1)
    assert payloads(out, "vote_result") == [{"type": "vote_result", "passed": False}]
    assert payloads(playing.log, "reshuffled") == []


def test_r19_bots_do_not_vote_and_with_no_voters_the_reshuffle_is_at_once() -> None:
    g = Game(4, humans=[0])
    g.open_round()
    out = g.do(RequestVote(seat=0))
    assert payloads(out, "vote")[0]["voters"] == []
    assert types(out) == ["vote", "vote_result"] + ["reshuffled"] * 5  # 4 seats, the watchers
    assert g.refuse(CastVote(seat=1, accept=True)).code == "wrong_phase"


def test_r19_a_bot_may_not_cast_a_vote() -> None:
    g = Game(4, humans=[0, 1])
    g.open_round()
    g.do(RequestVote(seat=0))
    assert g.refuse(CastVote(seat=2, accept=True)).code == "not_voter"


def test_r19_a_voter_who_disconnects_before_answering_has_refused(playing: Game) -> None:
    playing.do(RequestVote(seat=2))
    playing.do(CastVote(seat=0, accept=True))
    out = playing.do(Disconnect(seat=3))
    assert payloads(out, "voted") == [{"type": "voted", "seat": 3, "accept": False}]
    assert payloads(out, "vote_result") == [{"type": "vote_result", "passed": False}]


def test_r19_a_voter_who_accepted_then_left_still_counts(playing: Game) -> None:
    playing.do(RequestVote(seat=2))
    playing.do(CastVote(seat=0, accept=True))
    assert types(playing.do(Disconnect(seat=0))) == ["seat"]
    playing.do(CastVote(seat=1, accept=True))
    out = playing.do(CastVote(seat=3, accept=True))
    assert payloads(out, "vote_result") == [{"type": "vote_result", "passed": True}]


def test_r19_the_requester_non_voters_and_second_answers_are_not_voters() -> None:
    g = Game(4, humans=[0, 1, 2])
    g.open_round()
    assert g.refuse(CastVote(seat=0, accept=True)).code == "wrong_phase"
    g.do(RequestVote(seat=0))
    assert g.refuse(CastVote(seat=0, accept=True)).code == "not_voter"
    assert g.refuse(CastVote(seat=3, accept=True)).code == "not_voter"
    g.do(CastVote(seat=1, accept=True))
    assert g.refuse(CastVote(seat=1, accept=True)).code == "not_voter"
    assert g.refuse(CastVote(seat=1, accept=False)).code == "not_voter"
    assert g.refuse(CastVote(seat=2, accept="yes")).code == "bad_message"  # type: ignore[arg-type]


def test_r19_a_call_that_ends_the_round_ends_the_vote_refused(playing: Game) -> None:
    playing.do(RequestVote(seat=0))
    out = playing.do(CallQuatro(seat=1))
    assert types(out)[:2] == ["vote_result", "reveal"]
    assert payloads(out, "vote_result") == [{"type": "vote_result", "passed": False}]
    assert playing.view(0)["vote"] is None


def test_r20_one_vote_at_a_time(playing: Game) -> None:
    playing.do(RequestVote(seat=0))
    refusal = playing.refuse(RequestVote(seat=1))
    assert (refusal.code, refusal.reason) == ("vote_refused", "vote_running")
    assert refusal.to_wire()["reason"] == "vote_running"


def test_r20_thirty_seconds_between_the_end_of_a_vote_and_the_next(playing: Game) -> None:
    playing.do(RequestVote(seat=0))
    playing.wait(5_000)
    playing.do(CastVote(seat=1, accept=False))
    playing.wait(VOTE_GAP - 1)
    refusal = playing.refuse(RequestVote(seat=2))
    assert (refusal.code, refusal.reason, refusal.retry_in) == ("vote_refused", "too_soon", 1)
    assert refusal.to_wire() == {
        "code": "vote_refused",
        "message": refusal.message,
        "retry_in": 1,
        "reason": "too_soon",
    }
    playing.wait(1)
    playing.do(RequestVote(seat=2))


def test_r20_every_view_says_when_the_next_vote_may_start(playing: Game) -> None:
    assert playing.view(1)["vote_ready_at"] is None
    playing.do(RequestVote(seat=0))
    playing.wait(3_000)
    playing.do(CastVote(seat=3, accept=False))
    for seat in (0, 1, 2, 3, None):
        assert playing.view(seat)["vote_ready_at"] == playing.now + VOTE_GAP


def test_r20_at_most_one_reshuffle_per_round() -> None:
    g = Game(4, humans=[0])
    g.open_round()
    g.do(RequestVote(seat=0))
    g.wait(VOTE_GAP)
    refusal = g.refuse(RequestVote(seat=0))
    assert (refusal.code, refusal.reason, refusal.retry_in) == (
        "vote_refused",
        "already_reshuffled",
        None,
    )
    assert g.view(0)["reshuffled"] is True


def test_r20_a_new_round_may_reshuffle_again() -> None:
    g = Game(4, humans=[0])
    g.open_round()
    g.do(RequestVote(seat=0))
    g.wait(ROUND)  # a void round (R22), then the pause (R23), then signing
    g.wait(30_000)
    g.open_round()
    assert g.view(0)["reshuffled"] is False
    assert "reshuffled" in types(g.do(RequestVote(seat=0)))


def test_r21_after_a_reshuffle_the_round_goes_on_as_it_was() -> None:
    g = Game(4, humans=[0, 1], deals=[deal(4), deal(4, {2: "A"})])
    g.do(ChooseSign(seat=0, emoji=EMOJIS[3]))
    g.open_round()
    signs = [g.view(s)["sign"] for s in range(4)]
    deadline = g.view(0)["deadline"]
    hand, center = g.hand(0), g.center()
    g.do(Swap(seat=0, card=hand[0]["id"], slot=0, expect=center[0]["id"]))
    g.do(SetFloor(seat=1, open=True))
    g.do(Emit(seat=1, emoji=EMOJIS[5]))
    g.wait(1_000)
    g.do(RequestVote(seat=0))
    out = g.do(CastVote(seat=1, accept=True))
    assert g.phase() is Phase.PLAYING
    assert [g.view(s)["sign"] for s in range(4)] == signs
    assert g.view(0)["deadline"] == deadline
    assert g.view(0)["swap_ready_at"] == g.now - 1_000 + SWAP_COOLDOWN
    assert g.view(0)["seats"][1]["floor"] is True
    assert g.table.scores == (0, 0)
    # the second rigged deal is the new one (R3, R4)
    assert Counter(g.hand_ranks(2))["A"] == 2
    for s in range(4):
        (fresh,) = [o for o in out if o.event.type == "reshuffled" and o.to.index == s]
        assert fresh.to.scope == "seat"
        assert fresh.event.to_wire()["hand"] == g.hand(s)
        assert fresh.event.to_wire()["center"] == g.center()
    # the channel keeps its rhythm
    mark = len(g.log)
    g.wait(EMISSION_PERIOD - 1_000)
    assert payloads(g.since(mark), "emission") == [
        {"type": "emission", "seat": 1, "emoji": EMOJIS[5]}
    ]
