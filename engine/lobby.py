"""Seats before the match (R29) and presence at any time (R24, R25)."""

from __future__ import annotations

from engine.errors import ErrorCode, Refusal
from engine.events import ALL, FloorChanged, Outbound, SeatChanged, SettingsChanged
from engine.phase import Phase
from engine.rounds import begin_signing, open_if_all_ready
from engine.settings import check_bot_level, check_hints, check_late_join, check_watchers
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
    player_id, name = state.require_player(player_id, name)
    if state.seats[seat].kind is not None:
        raise Refusal(ErrorCode.SEAT_TAKEN, "that seat is taken")
    if any(st.player_id == player_id for st in state.seats):
        raise Refusal(ErrorCode.ALREADY_SEATED, "you already hold a seat at this table")
    state.seats[seat] = SeatState(kind="human", player_id=player_id, name=name)
    events = [seat_event(state, seat, t)]
    if state.config.tutorial:
        return events + _tutorial_begins(state, t)
    if state.public:
        # Quick play: the fill clock starts with the first player; the last seat starts it.
        if state.deadline is None:
            state.deadline = t + state.config.fill_after_ms
        if all(st.kind is not None for st in state.seats):
            state.deadline = None
            events += begin_signing(state, t)
    return events


def leave_seat(state: TableState, seat: int, target: int, t: int) -> list[Outbound]:
    """A player frees their own seat, or the host frees a human's; the host keeps seat 0. At a
    public table anyone may leave their own seat (seat 0 too) and nobody another's; when the
    last player leaves, the fill clock stops (nobody is left to play with bots)."""
    state.require_phase(Phase.LOBBY)
    target = state.require_seat_number(target)
    if state.public:
        if seat != target:
            raise Refusal(ErrorCode.NOT_ALLOWED, "a public table has no host")
        state.seats[target] = SeatState()
        if not any(st.is_human for st in state.seats):
            state.deadline = None
        return [seat_event(state, target, t)]
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
    state.seats[target] = bot_seat(target)
    return [seat_event(state, target, t)]


def fill_bots(state: TableState, seat: int, t: int) -> list[Outbound]:
    """The host fills every empty seat with a bot (they play at the table's bot level). Refused
    `wrong_phase` after the start, `not_host` for another seat, `not_allowed` at a public table;
    a table with no empty seat is left as it is and nobody is told."""
    state.require_phase(Phase.LOBBY)
    state.require_host(seat)
    return _bots_in_empty_seats(state, t)


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
    watchers: object,
    t: int,
) -> list[Outbound]:
    """The host sets the bot level, hints and late joining before a match — in the lobby, or
    between matches, once one is over and before the next (a rematch) — and whether people may
    watch at any time (None keeps a value): a host who notices an unwelcome audience mid-match
    can close the table to it. Never during a match: its bots keep the level they started it
    at, and a rated match counts them at that one level (engine.ratings). Refused `bad_message`
    for a value that does not exist; a change that changes nothing is accepted and tells
    nobody."""
    if bot_level is not None or hints is not None or late_join is not None:
        state.require_phase(Phase.LOBBY, Phase.OVER)
    state.require_host(seat)
    settings = state.settings
    level = settings.bot_level if bot_level is None else check_bot_level(bot_level)
    show = settings.hints if hints is None else check_hints(hints)
    late = settings.late_join if late_join is None else check_late_join(late_join)
    watch = settings.watchers if watchers is None else check_watchers(watchers)
    before = (settings.bot_level, settings.hints, settings.late_join, settings.watchers)
    if (level, show, late, watch) == before:
        return []
    settings.bot_level, settings.hints = level, show
    settings.late_join, settings.watchers = late, watch
    changed = SettingsChanged(bot_level=level, hints=show, late_join=late, watchers=watch)
    return [Outbound(ALL, changed, t)]


def fill_with_bots(state: TableState, t: int) -> list[Outbound]:
    """Quick play: the fill deadline of a public lobby came. Bots take the seats still empty and
    the match starts; with no player seated any more the table just waits (and idles out)."""
    state.deadline = None
    if not state.public or not any(st.is_human for st in state.seats):
        return []
    return _bots_in_empty_seats(state, t) + begin_signing(state, t)


def _bots_in_empty_seats(state: TableState, t: int) -> list[Outbound]:
    events: list[Outbound] = []
    for seat, st in enumerate(state.seats):
        if st.kind is None:
            state.seats[seat] = bot_seat(seat)
            events.append(seat_event(state, seat, t))
    return events


def _tutorial_begins(state: TableState, t: int) -> list[Outbound]:
    """A tutorial (engine.tutorial) starts as its learner sits down: the script's bots take the
    other seats, and the table is the learner's alone: nobody watches or takes a bot's seat
    (a newcomer in a scripted seat would undo the script), and the coach speaks instead of
    the hints (engine.coach)."""
    settings = state.settings
    settings.bot_level, settings.hints = "relaxed", False
    settings.late_join, settings.watchers = "never", False
    changed = SettingsChanged(bot_level="relaxed", hints=False, late_join="never", watchers=False)
    return [Outbound(ALL, changed, t), *_bots_in_empty_seats(state, t), *begin_signing(state, t)]


def bot_seat(seat: int) -> SeatState:
    return SeatState(kind="bot", player_id=None, name=f"Bot {seat + 1}", connected=True, ready=True)


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
