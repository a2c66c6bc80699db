"""Joining late (issue 13 part 2, an extension of R29): someone without a seat asks for a bot's
seat during the match; the host grants it, or the table grants every request; the seat becomes
theirs at the next round's signing, never mid-round, with the team's score; the bot's hand never
reaches them before (R30)."""

from __future__ import annotations

from engine import (
    AnswerClaim,
    CallQuatro,
    CancelClaim,
    ChangeSettings,
    ClaimSeat,
    NextRound,
    Phase,
    StartMatch,
    Table,
)
from engine.wire import command_from_frame
from tests.engine.tables import PAUSE, ROUND, Game, payloads, types

NEWCOMER = "p9"


def claim(seat: int, player: str = NEWCOMER, name: str = "Zoé") -> ClaimSeat:
    return ClaimSeat(seat=seat, player_id=player, name=name)


def bot_table(late_join: str = "ask") -> Game:
    """The host (seat 0, not connected: each round opens at once) and three bots, the match
    started."""
    g = Game(4, humans=[0], connected=[], start=False)
    if late_join != "ask":
        g.do(ChangeSettings(seat=0, late_join=late_join))
    g.do(StartMatch(seat=0))
    return g


def test_a_new_table_asks_the_host_and_the_setting_is_told_to_all() -> None:
    g = Game(4, humans=[0], start=False)
    assert g.view(0)["settings"]["late_join"] == "ask"
    out = g.do(ChangeSettings(seat=0, late_join="always"))
    assert payloads(out, "settings") == [
        {
            "type": "settings",
            "bot_level": "normal",
            "hints": True,
            "late_join": "always",
            "watchers": True,
        }
    ]
    assert g.refuse(ChangeSettings(seat=0, late_join="sometimes")).code == "bad_message"
    assert g.refuse(ChangeSettings(seat=0, late_join=True)).code == "bad_message"  # type: ignore[arg-type]


def test_requests_are_refused_with_a_clear_code_and_change_nothing() -> None:
    g = Game(4, humans=[0, 1], start=False)
    assert g.refuse(claim(2)).code == "wrong_phase"  # in the lobby, a free seat is taken directly
    g.do(StartMatch(seat=0))
    assert g.refuse(claim(1)).code == "not_a_bot"  # a human's seat
    assert g.refuse(claim(4)).code == "bad_seat"
    assert g.refuse(claim(2, player="p1")).code == "already_seated"
    assert g.refuse(claim(2, name="  ")).code == "bad_message"
    g.do(claim(2))
    assert g.refuse(claim(3)).code == "already_claimed"  # one request per player
    assert g.refuse(claim(2, player="p8")).code == "seat_taken"  # one request per seat
    assert g.refuse(CancelClaim(seat=0, player_id="p8")).code == "no_claim"
    assert g.refuse(AnswerClaim(seat=1, target=2, accept=True)).code == "not_host"
    assert g.refuse(AnswerClaim(seat=0, target=3, accept=True)).code == "no_claim"
    assert g.refuse(AnswerClaim(seat=0, target=2, accept="yes")).code == "bad_message"  # type: ignore[arg-type]
    never = bot_table("never")
    assert never.refuse(claim(1)).code == "not_allowed"


def test_the_host_grants_and_the_seat_changes_hands_at_the_next_signing_only() -> None:
    g = bot_table()
    assert g.phase() is Phase.PLAYING
    hand = g.hand(1)
    out = g.do(claim(1))
    assert [(o.to.scope, o.event.to_wire()) for o in out] == [
        ("all", {"type": "claim", "seat": 1, "name": "Zoé", "approved": False})
    ]
    assert g.view(None)["claims"] == [{"seat": 1, "name": "Zoé", "approved": False}]
    assert g.table.claim_of(NEWCOMER) == 1
    out = g.do(AnswerClaim(seat=0, target=1, accept=True))
    assert payloads(out, "claim") == [{"type": "claim", "seat": 1, "name": "Zoé", "approved": True}]
    # Never mid-round: the bot keeps its seat and its hand until the round ends.
    g.wait(ROUND - 1)
    assert g.table.seat_kind(1) == "bot"
    assert g.hand(1) == hand
    g.wait(1)  # the round ends by the clock (R22): a pause, the bot still seated
    assert g.phase() is Phase.PAUSE
    assert g.table.seat_kind(1) == "bot"
    out = g.wait(PAUSE)
    assert types(out)[:3] == ["seat", "claim", "signing"]
    assert payloads(out, "seat") == [
        {"type": "seat", "seat": 1, "name": "Zoé", "kind": "human", "connected": False}
    ]
    assert payloads(out, "claim") == [{"type": "claim", "seat": 1, "name": None, "approved": False}]
    assert g.table.seat_of(NEWCOMER) == 1
    assert g.table.bot_seats() == (2, 3)
    assert g.view(None)["claims"] == []
    # Not connected yet, so signing does not wait for them (R24), and no `ready` for a bot.
    assert payloads(out, "ready") == [{"type": "ready", "seat": 2}, {"type": "ready", "seat": 3}]


def test_the_newcomer_inherits_the_team_score() -> None:
    g = bot_table("always")
    g.do(CallQuatro(seat=2))  # wrong (no carré): team 1 scores
    assert g.table.scores == (0, 1)
    g.do(claim(3))
    g.do(NextRound(seat=0))
    assert g.table.seat_of(NEWCOMER) == 3
    assert g.table.scores == (0, 1)
    assert g.view(3)["scores"] == [0, 1]
    assert g.view(3)["seats"][3]["team"] == 1


def test_always_grants_at_once_and_ask_waits_for_the_host_round_after_round() -> None:
    g = bot_table("always")
    out = g.do(claim(2))
    assert payloads(out, "claim")[0]["approved"] is True
    asked = bot_table()
    asked.do(claim(2))
    asked.do(CallQuatro(seat=1))
    asked.do(NextRound(seat=0))
    assert asked.table.seat_kind(2) == "bot", "not granted: it waits"
    assert asked.view(None)["claims"] == [{"seat": 2, "name": "Zoé", "approved": False}]
    asked.do(AnswerClaim(seat=0, target=2, accept=True))
    assert asked.do(AnswerClaim(seat=0, target=2, accept=True)) == []  # twice changes nothing
    asked.do(CallQuatro(seat=1))
    asked.do(NextRound(seat=0))
    assert asked.table.seat_of(NEWCOMER) == 2


def test_a_request_withdrawn_or_refused_drops() -> None:
    g = bot_table("always")
    g.do(claim(1))
    out = g.do(CancelClaim(seat=0, player_id=NEWCOMER))
    assert payloads(out, "claim") == [{"type": "claim", "seat": 1, "name": None, "approved": False}]
    g.do(CallQuatro(seat=1))
    g.do(NextRound(seat=0))
    assert g.table.seat_kind(1) == "bot"
    h = bot_table()
    h.do(claim(3))
    out = h.do(AnswerClaim(seat=0, target=3, accept=False))
    assert payloads(out, "claim") == [{"type": "claim", "seat": 3, "name": None, "approved": False}]
    assert h.table.claim_of(NEWCOMER) is None
    h.do(claim(3))  # and may ask again


def test_the_end_of_the_match_ends_every_request() -> None:
    g = bot_table()
    for _ in range(4):
        g.do(CallQuatro(seat=1))  # wrong: team 0 scores
        g.do(NextRound(seat=0))
    g.do(claim(3))
    out = g.do(CallQuatro(seat=1))
    assert types(out) == ["reveal", "over", "claim"]
    assert g.table.claim_of(NEWCOMER) is None
    assert g.refuse(claim(3)).code == "wrong_phase"


def test_r30_nothing_of_the_seat_reaches_the_newcomer_before_it_is_theirs() -> None:
    """Every event's holders, as the table stamps them: private events before the swap never
    name the newcomer, even when the round's end, the pause and the next signing fire in one
    batch (a clock that lagged); from the swap on, the seat's own events do."""
    g = bot_table("always")
    g.do(claim(1))
    mark = len(g.log)
    out = g.wait(ROUND + PAUSE + 5_000)  # one late tick: reveal, pause, swap, signing, round
    assert types(out).count("round") == 4 + 1  # the next round opened (nobody is connected)
    swap = next(i for i, o in enumerate(out) if o.event.type == "seat")
    before, after = out[:swap], out[swap:]
    assert all(o.event.type != "round" for o in before)
    for o in g.log[:mark] + before:
        # As the actor reads them once the batch is applied: the stamp, else the seats now.
        holders = o.holders if o.holders is not None else g.table.holders(o.to)
        assert o.to.public or NEWCOMER not in holders, o
    (theirs,) = [o for o in after if o.event.type == "round" and o.to.includes(1, 4)]
    assert theirs.holders == (NEWCOMER,)
    hand = theirs.event.to_wire()["hand"]
    assert isinstance(hand, list)
    assert len(hand) == 4
    # The bot's last hand was shown only at the reveal, to all (R23).
    assert all(o.to.public for o in before if o.event.type == "reveal")


def test_requests_survive_a_snapshot_and_old_snapshots_have_none() -> None:
    g = bot_table()
    g.do(claim(2))
    g.do(AnswerClaim(seat=0, target=2, accept=True))
    back = Table.from_snapshot(g.table.to_snapshot())
    assert back.claim_of(NEWCOMER) == 2
    assert back.view(None)["claims"] == [{"seat": 2, "name": "Zoé", "approved": True}]
    assert back.settings.late_join == "ask"
    old = g.table.to_snapshot()
    del old["state"]["claims"]
    del old["state"]["settings"]["late_join"]
    restored = Table.from_snapshot(old)
    assert restored.view(None)["claims"] == []
    assert restored.settings.late_join == "ask"


def test_the_host_answers_as_a_lobby_call() -> None:
    assert command_from_frame("answer_claim", 0, {"seat": 2, "accept": True}) == AnswerClaim(
        seat=0, target=2, accept=True
    )
    assert command_from_frame("settings", 0, {"late_join": "never"}) == ChangeSettings(
        seat=0, late_join="never"
    )


def test_a_request_from_someone_not_watching_is_refused_after_every_rule_of_the_seat() -> None:
    g = bot_table()
    # The rules of the seat speak first; then whether anyone is there to take it up.
    assert g.refuse(ClaimSeat(seat=-1, player_id="p9", name="Zoé", watching=False)).code == (
        "bad_seat"
    )
    refused = g.refuse(ClaimSeat(seat=2, player_id=NEWCOMER, name="Zoé", watching=False))
    assert refused.code == "not_watching"
    assert g.view(None)["claims"] == []
    g.do(claim(2))
    assert g.view(None)["claims"] == [{"seat": 2, "name": "Zoé", "approved": False}]
