"""`engine.legal` is the one answer to "what may this seat do now": everything it lists the
table accepts, and everything else the table refuses or ignores (a no-op such as opening an open
floor). Two refusals it cannot foresee from a view are allowed: `stale` and a too-soon vote."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine import (
    EMOJIS,
    AddBot,
    CallContre,
    CallQuatro,
    CastVote,
    ChooseSign,
    Command,
    Connect,
    Emit,
    FillBots,
    LeaveSeat,
    NextRound,
    Ready,
    Refusal,
    Rematch,
    RemoveBot,
    RequestVote,
    SetFloor,
    StartMatch,
    Swap,
    Table,
    TableConfig,
    TakeSeat,
)
from engine.legal import SeatView, legal_commands

UNFORESEEABLE = {"stale", "vote_refused"}


def outcome(table: Table, command: Command, now: int) -> str:
    """Apply on a copy: "ok", "no-op" (accepted, nothing changed) or the refusal code."""
    before = table.to_snapshot()
    copy = Table.from_snapshot(before)
    try:
        copy.apply(command, now)
    except Refusal as refusal:
        return str(refusal.code)
    return "no-op" if copy.to_snapshot() == before else "ok"


def canonical(command: Command, players: int) -> Command:
    """At 4 players a Contre! may leave out the team (there is only one to accuse); the list
    always names it."""
    if isinstance(command, CallContre) and command.team is None and players == 4:
        return CallContre(seat=command.seat, team=1 - command.seat % 2)
    return command


def universe(sv: SeatView, rng: random.Random) -> list[Command]:
    """Commands a seat might try, legal or not."""
    seat = sv.seat
    teams = sv.players // 2
    out: list[Command] = [
        Ready(seat=seat),
        SetFloor(seat=seat, open=True),
        SetFloor(seat=seat, open=False),
        CallQuatro(seat=seat),
        CallContre(seat=seat, team=None),
        *(CallContre(seat=seat, team=k) for k in range(teams)),
        RequestVote(seat=seat),
        CastVote(seat=seat, accept=True),
        CastVote(seat=seat, accept=False),
        NextRound(seat=seat),
        Rematch(seat=seat),
        StartMatch(seat=seat),
        *(ChooseSign(seat=seat, emoji=e) for e in rng.sample(EMOJIS, 3)),
        *(Emit(seat=seat, emoji=e) for e in rng.sample(EMOJIS, 3)),
    ]
    for card in sv.hand:
        for slot, there in enumerate(sv.center):
            out.append(Swap(seat=seat, card=card.id, slot=slot, expect=there.id))
            other = sv.center[(slot + 1) % len(sv.center)]
            out.append(Swap(seat=seat, card=card.id, slot=slot, expect=other.id))
    return out


@pytest.mark.parametrize("players", [4, 6, 8])
def test_legal_commands_agree_with_the_table(players: int) -> None:
    rng = random.Random(players)
    table = Table(TableConfig(players=players, seed=players))
    for s in range(players):
        table.apply(TakeSeat(seat=s, player_id=f"p{s}", name=f"P{s}"), 0)
    for s in range(0, players, 2):
        table.apply(Connect(seat=s), 0)
    table.apply(StartMatch(seat=0), 0)
    now = 0
    seen: dict[str, int] = {}
    wrongly_refused: list[tuple[Command, str]] = []
    wrongly_left_out: list[tuple[Command, str]] = []
    for _ in range(200):
        now += rng.choice((0, 50, 400, 1_500, 4_000))
        table.advance(now)
        seat = rng.randrange(players)
        view: dict[str, Any] = table.view(seat)
        sv = SeatView.parse(view, seat)
        legal = legal_commands(view, seat, now)
        for command in legal:
            seen[type(command).__name__] = seen.get(type(command).__name__, 0) + 1
        for command in rng.sample(legal, min(6, len(legal))):
            result = outcome(table, command, now)
            if result not in ("ok", "no-op") and result not in UNFORESEEABLE:
                wrongly_refused.append((command, result))
        for command in universe(sv, rng):
            if canonical(command, players) in legal:
                continue
            result = outcome(table, command, now)
            if result == "ok":
                wrongly_left_out.append((command, result))
        # Move the game on, mostly by swapping, sometimes by ending the round.
        if legal:
            calls = [c for c in legal if isinstance(c, CallQuatro | CallContre)]
            pick: Command | None = rng.choice(calls) if calls and rng.random() < 0.02 else None
            if pick is None:
                moves = [c for c in legal if not isinstance(c, CallQuatro | CallContre)]
                pick = rng.choice(moves or legal)
            try:
                table.apply(pick, now)
            except Refusal as refusal:
                if str(refusal.code) not in UNFORESEEABLE:
                    wrongly_refused.append((pick, str(refusal.code)))
    assert wrongly_refused == []
    assert wrongly_left_out == []
    for kind in ("Swap", "SetFloor", "Emit", "CallQuatro", "CallContre", "Ready", "ChooseSign"):
        assert seen.get(kind), f"the walk never reached a state where {kind} is legal"


def test_lobby_commands_are_listed_only_on_request() -> None:
    table = Table(TableConfig(players=4, seed=1))
    table.apply(TakeSeat(seat=0, player_id="host", name="Host"), 0)
    table.apply(TakeSeat(seat=1, player_id="guest", name="Guest"), 0)
    table.apply(AddBot(seat=0, target=2), 0)
    assert legal_commands(table.view(0), 0, 0) == []
    host = legal_commands(table.view(0), 0, 0, lobby=True)
    assert set(host) == {
        LeaveSeat(seat=0, target=1),
        RemoveBot(seat=0, target=2),
        AddBot(seat=0, target=3),
        FillBots(seat=0),
    }
    assert legal_commands(table.view(1), 1, 0, lobby=True) == [LeaveSeat(seat=1, target=1)]
    for command in host:
        assert outcome(table, command, 0) == "ok"
    table.apply(AddBot(seat=0, target=3), 0)
    full = legal_commands(table.view(0), 0, 0, lobby=True)
    assert StartMatch(seat=0) in full
    for command in full:
        assert outcome(table, command, 0) == "ok"


def test_a_view_without_vote_timing_still_lists_the_vote_and_honours_vote_ready_at() -> None:
    table = Table(TableConfig(players=4, seed=2))
    for s in range(4):
        table.apply(TakeSeat(seat=s, player_id=f"p{s}", name=f"P{s}"), 0)
    table.apply(StartMatch(seat=0), 0)
    view: dict[str, Any] = table.view(1)
    assert RequestVote(seat=1) in legal_commands(view, 1, 10)
    assert RequestVote(seat=1) not in legal_commands({**view, "vote_ready_at": 11}, 1, 10)
    assert RequestVote(seat=1) in legal_commands({**view, "vote_ready_at": 10}, 1, 10)
