"""Simultaneous play (R8): swaps with the centre (R9–R11) and the channel (R12–R14)."""

from __future__ import annotations

from engine.errors import ErrorCode, Refusal
from engine.events import ALL, Emitted, FloorChanged, Outbound, Swapped
from engine.phase import Phase
from engine.signs import EMOJI_SET
from engine.state import RECENT_EMISSIONS, TableState


def swap(
    state: TableState, seat: int, card: object, slot: object, expect: object, t: int
) -> list[Outbound]:
    """R9–R11. Checked in the order of R11: phase, well-formed, your card, a real slot, cooldown,
    expected card. A stale swap costs nothing: no cooldown starts."""
    state.require_phase(Phase.PLAYING)
    if (
        not isinstance(card, str)
        or not isinstance(expect, str)
        or not isinstance(slot, int)
        or isinstance(slot, bool)
    ):
        raise Refusal(ErrorCode.BAD_MESSAGE, "a swap names a card id, a slot number and a card id")
    st = state.seats[seat]
    hand = st.hand
    index = next((i for i, c in enumerate(hand) if c.id == card), -1)
    if index < 0:
        raise Refusal(ErrorCode.NOT_YOUR_CARD, "that card is not in your hand")
    if not 0 <= slot < len(state.center):
        raise Refusal(ErrorCode.BAD_SLOT, "the centre has slots 0 to 3")
    if t < st.swap_ready_at:
        wait = st.swap_ready_at - t
        raise Refusal(ErrorCode.COOLDOWN, f"wait {wait} ms before your next swap", retry_in=wait)
    taken = state.center[slot]
    if taken.id != expect:
        raise Refusal(ErrorCode.STALE, "someone took that card first; the swap cost nothing")
    placed = hand[index]
    hand[index] = taken
    state.center[slot] = placed
    count_swap(st.net_taken, taken.rank, placed.rank)
    st.swap_ready_at = t + state.timings.swap_cooldown
    return [Outbound(ALL, Swapped(seat=seat, slot=slot, placed=placed, taken=taken), t)]


def count_swap(net_taken: dict[str, int], taken: str, placed: str) -> None:
    """A seat's public tally of ranks (SeatState.net_taken) after it took `taken` from the
    centre and put `placed` there; a rank back at zero leaves the tally."""
    if taken == placed:
        return
    for rank, step in ((taken, 1), (placed, -1)):
        count = net_taken.get(rank, 0) + step
        if count:
            net_taken[rank] = count
        else:
            net_taken.pop(rank, None)


def set_floor(state: TableState, seat: int, open_: object, t: int) -> list[Outbound]:
    """R12, R14. Asking for the state the floor is already in changes nothing and costs nothing."""
    state.require_phase(Phase.PLAYING)
    if not isinstance(open_, bool):
        raise Refusal(ErrorCode.BAD_MESSAGE, "`open` is true or false")
    st = state.seats[seat]
    if st.floor_open == open_:
        return []
    if t < st.floor_ready_at:
        wait = st.floor_ready_at - t
        raise Refusal(
            ErrorCode.FLOOR_COOLDOWN, f"wait {wait} ms before changing the floor", retry_in=wait
        )
    st.floor_ready_at = t + state.timings.floor_cooldown
    if open_:
        st.floor_open = True
    else:
        st.close_floor()
    return [Outbound(ALL, FloorChanged(seat=seat, open=open_), t)]


def emit(state: TableState, seat: int, emoji: object, t: int) -> list[Outbound]:
    """R13: the first choice emits at once (unless the seat emitted less than 5 s ago); later
    choices only change what the next emission shows."""
    state.require_phase(Phase.PLAYING)
    if not isinstance(emoji, str) or emoji not in EMOJI_SET:
        raise Refusal(ErrorCode.BAD_EMOJI, "emit one of the 24 emojis of /api/emojis")
    st = state.seats[seat]
    if not st.floor_open:
        raise Refusal(ErrorCode.NO_FLOOR, "take the floor before you emit")
    first = st.choice is None
    st.choice = emoji
    if not first:
        return []
    due = t
    if st.last_emission_at is not None:
        due = max(t, st.last_emission_at + state.timings.emission_period)
    st.next_emission_at = due
    return fire_emission(state, seat, t) if due == t else []


def fire_emission(state: TableState, seat: int, t: int) -> list[Outbound]:
    st = state.seats[seat]
    assert st.choice is not None
    st.last_emission_at = t
    st.last_emitted = st.choice
    st.next_emission_at = t + state.timings.emission_period
    state.emissions = [*state.emissions[1 - RECENT_EMISSIONS :], (seat, st.choice, t)]
    return [Outbound(ALL, Emitted(seat=seat, emoji=st.choice), t)]
