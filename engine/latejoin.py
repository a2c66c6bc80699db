"""Joining late (an extension of R29): during the match, someone without a seat asks for a bot's
seat; the host grants it (or the table's `late_join` setting grants every request); the seat
becomes theirs at the next round's signing, never mid-round, with the team's score.

    claim_seat      ask for bot seat `seat` (one request per seat, one per player)
    cancel_claim    the one who asked withdraws (the actor also withdraws it when they stop
                    watching)
    answer_claim    the host grants or refuses a request
    seat_claims     at a new round's signing: each granted request takes its seat

R30 holds: until the swap the bot's hand stays the bot's. The seat's events address the seat,
and the table stamps each step's events with the players its audience reached then; the one who
asked holds no seat before the swap, so nothing of that seat's reaches them.
"""

from __future__ import annotations

from engine.errors import ErrorCode, Refusal
from engine.events import ALL, ClaimChanged, Outbound, SeatChanged
from engine.phase import Phase
from engine.state import Claim, SeatState, TableState

# While a match runs; in the lobby a free seat is taken directly, and an over match claims nothing.
MATCH_PHASES = (Phase.SIGNING, Phase.PLAYING, Phase.PAUSE)


def _told(state: TableState, seat: int, t: int) -> Outbound:
    claim = state.claims.get(seat)
    name = None if claim is None else claim.name
    approved = claim is not None and claim.approved
    return Outbound(ALL, ClaimChanged(seat=seat, name=name, approved=approved), t)


def claim_seat(
    state: TableState, seat: object, player_id: object, name: object, watching: bool, t: int
) -> list[Outbound]:
    player_id, name = state.require_player(player_id, name)
    target = state.require_seat_number(seat)
    state.require_phase(*MATCH_PHASES)
    if state.settings.late_join == "never":
        raise Refusal(ErrorCode.NOT_ALLOWED, "the host does not let anyone join this match late")
    if any(st.player_id == player_id for st in state.seats):
        raise Refusal(ErrorCode.ALREADY_SEATED, "you already hold a seat at this table")
    if state.seats[target].kind != "bot":
        raise Refusal(ErrorCode.NOT_A_BOT, "only a bot's seat can be taken during the match")
    if any(c.player_id == player_id for c in state.claims.values()):
        raise Refusal(ErrorCode.ALREADY_CLAIMED, "you already asked for a seat at this table")
    if target in state.claims:
        raise Refusal(ErrorCode.SEAT_TAKEN, "someone already asked for that seat")
    if not watching:
        raise Refusal(ErrorCode.NOT_WATCHING, "watch the table to ask for a seat: it comes there")
    # A public (quick-play) table has no host to answer: a stranger takes a bot's seat there as
    # they would have taken an empty one in its lobby.
    approved = state.settings.late_join == "always" or state.public
    state.claims[target] = Claim(player_id=player_id, name=name, approved=approved)
    return [_told(state, target, t)]


def claim_of(state: TableState, player_id: str) -> int | None:
    return next((s for s, c in state.claims.items() if c.player_id == player_id), None)


def cancel_claim(state: TableState, player_id: object, t: int) -> list[Outbound]:
    seat = claim_of(state, player_id) if isinstance(player_id, str) else None
    if seat is None:
        raise Refusal(ErrorCode.NO_CLAIM, "you have not asked for a seat here")
    del state.claims[seat]
    return [_told(state, seat, t)]


def answer_claim(
    state: TableState, seat: int, target: object, accept: object, t: int
) -> list[Outbound]:
    state.require_host(seat)
    target = state.require_seat_number(target)
    if not isinstance(accept, bool):
        raise Refusal(ErrorCode.BAD_MESSAGE, "accept is true or false")
    claim = state.claims.get(target)
    if claim is None:
        raise Refusal(ErrorCode.NO_CLAIM, "nobody asked for that seat")
    if not accept:
        del state.claims[target]
        return [_told(state, target, t)]
    if claim.approved:
        return []
    claim.approved = True
    return [_told(state, target, t)]


def seat_claims(state: TableState, t: int) -> list[Outbound]:
    """At a round's signing, before anything of the new round: each granted request turns its
    bot seat into the player's (not connected until they say hello; the team keeps its score).
    Requests not yet granted wait for the next round."""
    events: list[Outbound] = []
    for seat in sorted(state.claims):
        claim = state.claims[seat]
        if not claim.approved or state.seats[seat].kind != "bot":
            continue
        del state.claims[seat]
        state.seats[seat] = SeatState(kind="human", player_id=claim.player_id, name=claim.name)
        st = state.seats[seat]
        # The seat first, then the request's end: a client that sees the request end with the
        # seat still a bot's knows it was refused or withdrawn, not granted.
        events.append(
            Outbound(
                ALL, SeatChanged(seat=seat, name=st.name, kind=st.kind, connected=st.connected), t
            )
        )
        events.append(_told(state, seat, t))
    return events


def drop_claims(state: TableState, t: int) -> list[Outbound]:
    """The match is over: requests end with it (a rematch starts from the seats as they are)."""
    seats = sorted(state.claims)
    state.claims.clear()
    return [_told(state, seat, t) for seat in seats]
