"""Seats before the match (R29) and presence at any time (R24, R25)."""

from __future__ import annotations

from engine.errors import ErrorCode, Refusal
from engine.events import ALL, FloorChanged, Outbound, SeatChanged, SettingsChanged
from engine.phase import Phase
from engine.rounds import begin_signing, open_if_all_ready
from engine.settings import check_bot_level, check_hints, check_late_join
from engine.state import HOST_SEAT, SeatState, TableState
from engine.vote import voter_left


def seat_event(state: TableState, seat: int, t: int) -> Outbound:
    st = state.seats[seat]
    return Outbound(
        ALL, SeatChanged(seat=seat, name=st.name, kind=st.kind, connected=st.connected), t
    )


def take_seat(state: TableState, seat: int, player_id: str, name: str, t: int) -> list[Outbound]:
    state.require_phase(Phase.LOBBY)
    seat = state.require_seat_number(seat)
    if (
        not isinstance(player_id, str)
        or not player_id
        or not isinstance(name, str)
        or not name.strip()
    ):
        raise Refusal(ErrorCode.BAD_MESSAGE, "a seat needs a player and a name")
    if state.seats[seat].kind is not None:
        raise Refusal(ErrorCode.SEAT_TAKEN, "that seat is taken")
    if any(st.player_id == player_id for st in state.seats):
        raise Refusal(ErrorCode.ALREADY_SEATED, "you already hold a seat at this table")
    state.seats[seat] = SeatState(kind="human", player_id=player_id, name=name)
    return [seat_event(state, seat, t)]


def leave_seat(state: TableState, seat: int, target: int, t: int) -> list[Outbound]:
    """A player frees their own seat, or the host frees a human's; the host keeps seat 0."""
    state.require_phase(Phase.LOBBY)
    target = state.require_seat_number(target)
    if seat != target and seat != HOST_SEAT:
        raise Refusal(ErrorCode.NOT_HOST, "only the host may free another player's seat")
    if state.seats[target].kind != "human":
        raise Refusal(ErrorCode.SEAT_EMPTY, "no player sits there")
    if target == HOST_SEAT:
        raise Refusal(ErrorCode.NOT_ALLOWED, "the host keeps seat 0")
    state.seats[target] = SeatState()
    return [seat_event(state, target, t)]


def add_bot(state: TableState, seat: int, target: int, t: int) -> list[Outbound]:
    state.require_phase(Phase.LOBBY)
    state.require_host(seat)
    target = state.require_seat_number(target)
    if state.seats[target].kind is not None:
        raise Refusal(ErrorCode.SEAT_TAKEN, "that seat is taken")
    state.seats[target] = SeatState(
        kind="bot", player_id=None, name=f"Bot {target + 1}", connected=True, ready=True
    )
    return [seat_event(state, target, t)]


def remove_bot(state: TableState, seat: int, target: int, t: int) -> list[Outbound]:
    state.require_phase(Phase.LOBBY)
    state.require_host(seat)
    target = state.require_seat_number(target)
    if state.seats[target].kind != "bot":
        raise Refusal(ErrorCode.NOT_A_BOT, "no bot sits there")
    state.seats[target] = SeatState()
    return [seat_event(state, target, t)]


def change_settings(
    state: TableState,
    seat: int,
    bot_level: object,
    hints: object,
    late_join: object,
    t: int,
) -> list[Outbound]:
    """The host sets the bot level, hints and late joining before the match (None keeps a
    value). Refused `bad_message` for a value that does not exist; a change that changes
    nothing is accepted and tells nobody."""
    state.require_phase(Phase.LOBBY)
    state.require_host(seat)
    settings = state.settings
    level = settings.bot_level if bot_level is None else check_bot_level(bot_level)
    show = settings.hints if hints is None else check_hints(hints)
    late = settings.late_join if late_join is None else check_late_join(late_join)
    if (level, show, late) == (settings.bot_level, settings.hints, settings.late_join):
        return []
    settings.bot_level, settings.hints, settings.late_join = level, show, late
    return [Outbound(ALL, SettingsChanged(bot_level=level, hints=show, late_join=late), t)]


def start(state: TableState, seat: int, t: int) -> list[Outbound]:
    state.require_phase(Phase.LOBBY)
    state.require_host(seat)
    if any(st.kind is None for st in state.seats):
        raise Refusal(ErrorCode.TABLE_NOT_FULL, "every seat must be taken before the match starts")
    return begin_signing(state, t)


def rematch(state: TableState, seat: int, t: int) -> list[Outbound]:
    """Play again with the same seats: scores back to zero, round 1."""
    state.require_phase(Phase.OVER)
    state.require_host(seat)
    state.scores = [0] * len(state.scores)
    state.round = 0
    state.winners = None
    state.last_reveal = None
    state.last_vote_end = None
    return begin_signing(state, t)


def connect(state: TableState, seat: int, t: int) -> list[Outbound]:
    st = state.seats[seat]
    if st.kind is None:
        raise Refusal(ErrorCode.SEAT_EMPTY, "nobody sits there")
    if st.connected:
        return []
    st.connected = True
    return [seat_event(state, seat, t)]


def disconnect(state: TableState, seat: int, t: int) -> list[Outbound]:
    """R24: the seat and hand stay; an unanswered vote is a refusal; signing no longer waits
    for this player. R13: an open floor closes, announced like any release, so nobody keeps
    watching a dead channel."""
    st = state.seats[seat]
    if st.kind != "human" or not st.connected:
        return []
    st.connected = False
    events = [seat_event(state, seat, t)]
    if state.phase is Phase.PLAYING:
        if st.floor_open:
            st.close_floor()
            events.append(Outbound(ALL, FloorChanged(seat=seat, open=False), t))
        events += voter_left(state, seat, t)
    elif state.phase is Phase.SIGNING:
        events += open_if_all_ready(state, t)
    return events
