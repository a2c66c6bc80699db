"""A table that stood still (docs/rules.md, R22's decision): the time a fault held the table
(its process frozen, killed and restored, moved to another node) is given back to its players.

Every time the state keeps on the table's clock moves on by the same amount, so the table is as
it would be had it been frozen: the phase's deadline (signing, round, pause, a public lobby's
fill), the vote's, the cooldowns, the next emissions and the 5 s between two (R13), and R20's
30 s since the last vote. What is only a record of the past stays: when a match ended
(`ended_at`, the ratings' date). Past times stay past: a time at or before the stall's start
lands at or before its end.
"""

from __future__ import annotations

from engine.events import ALL, Outbound, Resumed
from engine.state import TableState


def running(state: TableState) -> bool:
    """Whether anything of the table counts toward a deadline the players see."""
    return state.deadline is not None or state.vote is not None


def shift(state: TableState, by: int, t: int) -> list[Outbound]:
    """Move every clock of the table on by `by` ms (> 0), the time it stood still until `t`;
    everyone is told the new deadlines when any is running."""
    if by <= 0:
        return []
    if state.deadline is not None:
        state.deadline += by
    if state.vote is not None:
        state.vote.deadline += by
    if state.last_vote_end is not None:
        state.last_vote_end += by
    for seat in state.seats:
        seat.swap_ready_at += by
        seat.floor_ready_at += by
        if seat.next_emission_at is not None:
            seat.next_emission_at += by
        if seat.last_emission_at is not None:
            seat.last_emission_at += by
    state.emissions = [(s, e, at + by) for s, e, at in state.emissions]
    if not running(state):
        return []
    vote = state.vote
    ready = None if state.last_vote_end is None else state.last_vote_end + state.timings.vote_gap
    event = Resumed(
        shift=by,
        deadline=state.deadline,
        vote_deadline=None if vote is None else vote.deadline,
        vote_ready_at=ready,
    )
    return [Outbound(ALL, event, t)]
