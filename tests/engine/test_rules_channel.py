"""R12–R14: taking the floor, emitting on it, and the floor's cooldown."""

from __future__ import annotations

from engine import EMOJIS, CallQuatro, Disconnect, Emit, SetFloor
from tests.engine.tables import EMISSION_PERIOD, FLOOR_COOLDOWN, ROUND, Game, payloads, types

OWL, MELON, BELL = EMOJIS[20], EMOJIS[7], EMOJIS[17]


def emissions(g: Game, seat: int, mark: int = 0) -> list[tuple[int, str]]:
    return [
        (o.at, o.event.to_wire()["emoji"])  # type: ignore[misc]
        for o in g.since(mark, "emission")
        if o.event.to_wire()["seat"] == seat
    ]


def test_r12_taking_and_releasing_the_floor_is_seen_by_the_whole_table(playing: Game) -> None:
    (taken,) = playing.do(SetFloor(seat=2, open=True))
    assert taken.to.scope == "all"
    assert taken.event.to_wire() == {"type": "floor", "seat": 2, "open": True}
    assert playing.view(0)["seats"][2]["floor"] is True
    playing.wait(FLOOR_COOLDOWN)
    (released,) = playing.do(SetFloor(seat=2, open=False))
    assert released.event.to_wire() == {"type": "floor", "seat": 2, "open": False}
    assert playing.view(0)["seats"][2]["floor"] is False


def test_r12_asking_for_the_floor_you_already_hold_changes_nothing(playing: Game) -> None:
    assert playing.do(SetFloor(seat=0, open=False)) == []
    playing.do(SetFloor(seat=0, open=True))
    assert playing.do(SetFloor(seat=0, open=True)) == []


def test_r13_nothing_is_emitted_before_a_choice(playing: Game) -> None:
    playing.do(SetFloor(seat=1, open=True))
    playing.wait(4 * EMISSION_PERIOD)
    assert emissions(playing, 1) == []


def test_r13_the_first_emission_comes_with_the_first_choice_then_every_5_s(
    playing: Game,
) -> None:
    playing.do(SetFloor(seat=1, open=True))
    start = playing.now
    (first,) = playing.do(Emit(seat=1, emoji=OWL))
    assert first.to.scope == "all"
    assert first.event.to_wire() == {"type": "emission", "seat": 1, "emoji": OWL}
    playing.wait(3 * EMISSION_PERIOD + 10)
    assert emissions(playing, 1) == [(start + k * EMISSION_PERIOD, OWL) for k in range(4)]
    assert playing.view(3)["seats"][1]["emoji"] == OWL


def test_r13_any_of_the_24_may_be_emitted_not_only_the_sign(playing: Game) -> None:
    playing.do(SetFloor(seat=0, open=True))
    for emoji in EMOJIS:
        playing.do(Emit(seat=0, emoji=emoji))
    for bad in ("x", "🙂", None, 3):
        assert playing.refuse(Emit(seat=0, emoji=bad)).code == "bad_emoji"  # type: ignore[arg-type]


def test_r13_choosing_another_emoji_changes_the_next_emission_only(playing: Game) -> None:
    playing.do(SetFloor(seat=1, open=True))
    start = playing.now
    playing.do(Emit(seat=1, emoji=OWL))
    playing.wait(1_000)
    assert playing.do(Emit(seat=1, emoji=MELON)) == []
    assert playing.do(Emit(seat=1, emoji=BELL)) == []
    playing.wait(EMISSION_PERIOD)
    assert emissions(playing, 1) == [(start, OWL), (start + EMISSION_PERIOD, BELL)]


def test_r13_emitting_needs_the_floor(playing: Game) -> None:
    assert playing.refuse(Emit(seat=0, emoji=OWL)).code == "no_floor"


def test_r13_releasing_stops_emissions_and_forgets_the_choice(playing: Game) -> None:
    playing.do(SetFloor(seat=1, open=True))
    playing.do(Emit(seat=1, emoji=OWL))
    playing.wait(FLOOR_COOLDOWN)
    playing.do(SetFloor(seat=1, open=False))
    mark = len(playing.log)
    playing.wait(FLOOR_COOLDOWN)
    playing.do(SetFloor(seat=1, open=True))
    playing.wait(4 * EMISSION_PERIOD)
    assert emissions(playing, 1, mark) == [], "the old choice must be forgotten"
    assert playing.view(1)["choice"] is None


def test_r13_emissions_stay_5_s_apart_across_a_release_and_a_new_take(playing: Game) -> None:
    playing.do(SetFloor(seat=1, open=True))
    start = playing.now
    playing.do(Emit(seat=1, emoji=OWL))
    playing.wait(FLOOR_COOLDOWN)
    playing.do(SetFloor(seat=1, open=False))
    playing.wait(FLOOR_COOLDOWN)
    playing.do(SetFloor(seat=1, open=True))
    assert playing.do(Emit(seat=1, emoji=MELON)) == [], "only 4 s since the last emission"
    playing.wait_until(start + EMISSION_PERIOD - 1)
    assert emissions(playing, 1) == [(start, OWL)]
    playing.wait(1)
    playing.wait(EMISSION_PERIOD)
    assert emissions(playing, 1) == [
        (start, OWL),
        (start + EMISSION_PERIOD, MELON),
        (start + 2 * EMISSION_PERIOD, MELON),
    ]


def test_r13_a_new_take_long_after_emits_at_once(playing: Game) -> None:
    playing.do(SetFloor(seat=1, open=True))
    playing.do(Emit(seat=1, emoji=OWL))
    playing.wait(FLOOR_COOLDOWN)
    playing.do(SetFloor(seat=1, open=False))
    playing.wait(EMISSION_PERIOD)
    playing.do(SetFloor(seat=1, open=True))
    assert types(playing.do(Emit(seat=1, emoji=MELON))) == ["emission"]


def test_r13_floors_close_silently_when_the_round_ends(playing: Game) -> None:
    playing.do(SetFloor(seat=0, open=True))
    playing.do(Emit(seat=0, emoji=OWL))
    out = playing.do(CallQuatro(seat=1))
    assert "floor" not in types(out)
    assert playing.view(2)["seats"][0]["floor"] is False
    mark = len(playing.log)
    playing.wait(3 * EMISSION_PERIOD)
    assert emissions(playing, 0, mark) == []


def test_r13_a_floor_closes_for_all_to_see_when_its_player_disconnects(playing: Game) -> None:
    playing.do(SetFloor(seat=3, open=True))
    playing.do(Emit(seat=3, emoji=OWL))
    out = playing.do(Disconnect(seat=3))
    assert types(out) == ["seat", "floor"]
    closed = out[1]
    assert closed.to.scope == "all"
    assert closed.event.to_wire() == {"type": "floor", "seat": 3, "open": False}
    assert playing.view(0)["seats"][3]["floor"] is False
    mark = len(playing.log)
    playing.wait(ROUND // 2)
    assert emissions(playing, 3, mark) == []


def test_r13_a_disconnect_without_the_floor_announces_no_floor(playing: Game) -> None:
    assert types(playing.do(Disconnect(seat=3))) == ["seat"]


def test_r14_two_seconds_between_two_changes_of_the_floor(playing: Game) -> None:
    playing.do(SetFloor(seat=0, open=True))
    refusal = playing.refuse(SetFloor(seat=0, open=False))
    assert refusal.code == "floor_cooldown"
    assert refusal.retry_in == FLOOR_COOLDOWN
    playing.wait(FLOOR_COOLDOWN - 1)
    assert playing.refuse(SetFloor(seat=0, open=False)).retry_in == 1
    playing.wait(1)
    playing.do(SetFloor(seat=0, open=False))
    assert playing.refuse(SetFloor(seat=0, open=True)).code == "floor_cooldown"


def test_r14_choosing_or_changing_the_emoji_is_not_a_change_of_the_floor(playing: Game) -> None:
    playing.do(SetFloor(seat=0, open=True))
    playing.wait(FLOOR_COOLDOWN)
    playing.do(Emit(seat=0, emoji=OWL))
    playing.do(Emit(seat=0, emoji=MELON))
    (released,) = playing.do(SetFloor(seat=0, open=False))
    assert payloads([released], "floor") == [{"type": "floor", "seat": 0, "open": False}]
