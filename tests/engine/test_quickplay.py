"""Quick play (issue 13, part 4; an extension of R29): a public table has no host, starts by
itself once every seat is taken, and at its fill deadline bots take the seats still empty and
the match starts. The clock is the injected one: nothing sleeps."""

from __future__ import annotations

import pytest

from engine import (
    AddBot,
    ChangeSettings,
    ClaimSeat,
    FillBots,
    LeaveSeat,
    Phase,
    Refusal,
    RemoveBot,
    ScenarioError,
    StartMatch,
    Table,
    TableConfig,
    TakeSeat,
)

FILL = 20_000


def public(players: int = 4, fill: int = FILL) -> Table:
    return Table(TableConfig(players=players, seed=3, public=True, fill_after_ms=fill))


def sit(table: Table, seat: int, now: int) -> None:
    table.apply(TakeSeat(seat=seat, player_id=f"p{seat}", name=f"P{seat}"), now)


def test_a_public_table_starts_by_itself_when_its_last_seat_is_taken() -> None:
    t = public(6)
    assert t.next_deadline() is None  # nobody seated: no clock yet
    for seat in range(5):
        sit(t, seat, 1_000 + seat)
    assert t.phase is Phase.LOBBY
    assert t.next_deadline() == 1_000 + FILL  # counted from the first player
    assert t.summary()["fills_at"] == 1_000 + FILL
    sit(t, 5, 2_000)
    assert t.phase is not Phase.LOBBY  # signing, or already playing
    assert t.bot_seats() == ()
    assert t.summary()["fills_at"] is None


def test_at_the_fill_deadline_bots_take_only_the_empty_seats_and_the_match_starts() -> None:
    t = public(8)
    for seat in (0, 1, 2):
        sit(t, seat, 1_000)
    assert t.advance(1_000 + FILL - 1) == []
    assert t.phase is Phase.LOBBY
    out = t.advance(1_000 + FILL)
    assert t.phase is not Phase.LOBBY
    assert t.bot_seats() == (3, 4, 5, 6, 7)
    assert [t.seat_kind(s) for s in (0, 1, 2)] == ["human"] * 3
    seats = [o.event.to_wire() for o in out if o.event.type == "seat"]
    assert sorted(int(str(e["seat"])) for e in seats) == [3, 4, 5, 6, 7]
    assert any(o.event.type == "signing" for o in out)
    assert out[0].at == 1_000 + FILL  # fired at its own time, not at the caller's


def test_a_public_table_has_no_host() -> None:
    t = public()
    sit(t, 0, 1_000)
    sit(t, 1, 1_000)
    assert t.host is None
    assert t.summary()["host"] is None
    assert t.summary()["public"] is True
    for cmd in (
        AddBot(seat=0, target=2),
        RemoveBot(seat=0, target=2),
        FillBots(seat=0),
        StartMatch(seat=0),
        ChangeSettings(seat=0, hints=False),
        LeaveSeat(seat=0, target=1),  # not even seat 0 frees another's seat
    ):
        with pytest.raises(Refusal) as refused:
            t.apply(cmd, 1_100)
        assert refused.value.code == "not_allowed", cmd
    # Anyone leaves their own seat, seat 0 too.
    t.apply(LeaveSeat(seat=0, target=0), 1_200)
    assert t.seat_kind(0) is None


def test_when_the_last_player_leaves_the_fill_clock_stops() -> None:
    t = public()
    sit(t, 2, 1_000)
    t.apply(LeaveSeat(seat=2, target=2), 2_000)
    assert t.next_deadline() is None
    assert t.advance(1_000 + FILL * 2) == []
    assert t.phase is Phase.LOBBY
    assert t.bot_seats() == ()
    sit(t, 1, 100_000)  # the clock starts again with the next player
    assert t.next_deadline() == 100_000 + FILL


def test_a_private_table_keeps_its_host_and_never_fills_itself() -> None:
    t = Table(TableConfig(players=4, seed=3))
    for seat in range(4):
        sit(t, seat, 1_000)
    assert t.phase is Phase.LOBBY  # the host starts it
    assert t.next_deadline() is None
    assert t.host == 0
    assert t.summary()["public"] is False


def test_a_restored_public_table_keeps_its_config_and_its_fill_clock() -> None:
    t = public(6, fill=9_000)
    sit(t, 0, 1_000)
    back = Table.from_snapshot(t.to_snapshot())
    assert back.config.public is True
    assert back.config.fill_after_ms == 9_000
    assert back.next_deadline() == 10_000
    back.advance(10_000)
    assert back.bot_seats() == (1, 2, 3, 4, 5)


@pytest.mark.parametrize("fill", [0, -1, 1.5, "10", True, 3_600_001])
def test_a_bad_fill_wait_is_refused(fill: object) -> None:
    with pytest.raises(ScenarioError):
        TableConfig(players=4, public=True, fill_after_ms=fill)  # type: ignore[arg-type]
    with pytest.raises(ScenarioError):
        TableConfig(players=4, public="yes")  # type: ignore[arg-type]


def test_a_stranger_takes_a_bots_seat_at_a_public_table_without_asking_anyone() -> None:
    # Nobody hosts it, so nobody could grant a request: one made there is granted at once, and
    # the seat is theirs from the next signing, as joining late has it.
    t = public(4)
    sit(t, 0, 1_000)
    t.advance(1_000 + FILL)
    assert t.bot_seats() == (1, 2, 3)
    out = t.apply(ClaimSeat(seat=2, player_id="late", name="Late"), 1_000 + FILL + 1)
    told = [o.event.to_wire() for o in out if o.event.type == "claim"]
    assert told == [{"type": "claim", "seat": 2, "name": "Late", "approved": True}]
